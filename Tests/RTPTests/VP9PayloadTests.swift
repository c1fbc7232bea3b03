import Testing

@testable import RTP

@Suite("VP9 payload format (RFC 9628)")
struct VP9PayloadTests {
    static let key640 = VP9Payloader.FrameInfo(isKeyFrame: true, width: 640, height: 360)
    static let key320 = VP9Payloader.FrameInfo(isKeyFrame: true, width: 320, height: 180)
    static let delta = VP9Payloader.FrameInfo(isKeyFrame: false, width: 640, height: 360)

    // MARK: Payloader

    struct Vector: Sendable, CustomTestStringConvertible {
        var name: String
        var firstPictureID: UInt16
        var frames: [(frame: [UInt8], info: VP9Payloader.FrameInfo)]
        var limit: Int
        var payloads: [[UInt8]]
        var testDescription: String { name }
    }

    @Test(
        "payloads are byte-exact (§4.2: I=1 M=1, P, L=0, F=0, B, E, V with the §4.2.1 SS on key frames)",
        arguments: [
            Vector(
                name: "key frame in one packet: I B E V | PictureID 0x0102 | SS N_S=0 Y=1 G=0, 640x360",
                firstPictureID: 0x0102,
                frames: [([0x82, 0x49, 0x83], key640)],
                limit: 100,
                payloads: [[0x8E, 0x81, 0x02, 0x10, 0x02, 0x80, 0x01, 0x68, 0x82, 0x49, 0x83]]
            ),
            Vector(
                name: "delta frame in one packet: I P B E, no SS",
                firstPictureID: 0x0103,
                frames: [([0x86, 0x00], delta)],
                limit: 100,
                payloads: [[0xCC, 0x81, 0x03, 0x86, 0x00]]
            ),
            Vector(
                name: "PictureID counts frames and wraps 0x7FFF → 0",
                firstPictureID: 0x7FFF,
                frames: [([0x01], delta), ([0x02], delta)],
                limit: 100,
                payloads: [[0xCC, 0xFF, 0xFF, 0x01], [0xCC, 0x80, 0x00, 0x02]]
            ),
            Vector(
                name: "key frame exactly filling a packet with its SS (3 + 5 + 12 = 20)",
                firstPictureID: 0,
                frames: [(Array(1...12), key320)],
                limit: 20,
                payloads: [[0x8E, 0x80, 0x00, 0x10, 0x01, 0x40, 0x00, 0xB4] + Array(1...12)]
            ),
            Vector(
                name: "one byte more: two packets of 12, the SS counted in the first",
                firstPictureID: 0,
                frames: [(Array(1...13), key320)],
                limit: 20,
                payloads: [
                    [0x8A, 0x80, 0x00, 0x10, 0x01, 0x40, 0x00, 0xB4, 1, 2, 3, 4],
                    [0x84, 0x80, 0x00] + Array(5...13),
                ]
            ),
            Vector(
                name: "key frame in three: 7 + 12 + 11 frame bytes, V only on the first, E on the last",
                firstPictureID: 0,
                frames: [(Array(1...30), key320)],
                limit: 20,
                payloads: [
                    [0x8A, 0x80, 0x00, 0x10, 0x01, 0x40, 0x00, 0xB4] + Array(1...7),
                    [0x80, 0x80, 0x00] + Array(8...19),
                    [0x84, 0x80, 0x00] + Array(20...30),
                ]
            ),
            Vector(
                name: "delta frame at an exact multiple of the capacity: 17 + 17",
                firstPictureID: 9,
                frames: [(Array(1...34), delta)],
                limit: 20,
                payloads: [[0xC8, 0x80, 0x09] + Array(1...17), [0xC4, 0x80, 0x09] + Array(18...34)]
            ),
            Vector(
                name: "delta frame one byte over: 12 + 12 + 11, middle packet neither B nor E",
                firstPictureID: 9,
                frames: [(Array(1...35), delta)],
                limit: 20,
                payloads: [
                    [0xC8, 0x80, 0x09] + Array(1...12),
                    [0xC0, 0x80, 0x09] + Array(13...24),
                    [0xC4, 0x80, 0x09] + Array(25...35),
                ]
            ),
            Vector(
                name: "smallest limit (15): a key frame of 8 bytes splits 2 + 6",
                firstPictureID: 1,
                frames: [(Array(1...8), key320)],
                limit: 15,
                payloads: [
                    [0x8A, 0x80, 0x01, 0x10, 0x01, 0x40, 0x00, 0xB4, 1, 2],
                    [0x84, 0x80, 0x01, 3, 4, 5, 6, 7, 8],
                ]
            ),
        ]
    )
    func vectors(vector: Vector) throws {
        var payloader = VP9Payloader(firstPictureID: vector.firstPictureID)
        var payloads: [[UInt8]] = []
        for (frame, info) in vector.frames {
            payloads += try payloader.payloads(frame: frame[...], info: info, maximumPayloadLength: vector.limit)
        }
        #expect(payloads == vector.payloads)
        #expect(payloads.allSatisfy { $0.count <= vector.limit })
    }

    @Test("the hot path: same timestamp, marker with E on the last packet, SS only on a key frame's first")
    func hotPath() throws {
        let budget = try RTPPayloadBudget(mtu: 300, srtpTrailerRoom: 16)
        var payloader = VP9Payloader(budget: budget, firstPictureID: 77)
        var stream = try makeStream(sequenceNumber: 1)
        let frame = patternBytes(2000, header: 0x82)
        let info = VP9Payloader.FrameInfo(isKeyFrame: true, width: 1280, height: 720)
        let packets = try packetizeAll(budget, stream: &stream) { stream, buffer, emit in
            try payloader.packetize(
                frame: frame[...],
                info: info,
                timestamp: 1234,
                stream: &stream,
                into: buffer,
                emit: emit
            )
        }
        // 300 − 16 − 12 = 272 payload bytes, 269 after the descriptor; 2000 + 5 → 8 packets.
        #expect(packets.count == 8)
        #expect(packets.map(\.header.marker) == Array(repeating: false, count: 7) + [true])
        #expect(packets.allSatisfy { $0.header.timestamp == 1234 })
        #expect(packets.map { $0.payload[0] } == [0x8A] + Array(repeating: 0x80, count: 6) + [0x84])
        #expect(Array(packets[0].payload[3..<8]) == [0x10, 0x05, 0x00, 0x02, 0xD0])
        #expect(packets.flatMap { $0.payload.dropFirst($0.payload[0] & 0x02 != 0 ? 8 : 3) } == frame)
        #expect(payloader.nextPictureID == 78)
    }

    @Test("an empty frame, a key frame the SS cannot describe, a budget without room are refused")
    func refusals() throws {
        var payloader = VP9Payloader(firstPictureID: 1)
        let empty = #expect(throws: RTPError.self) {
            try payloader.payloads(frame: [], info: Self.delta, maximumPayloadLength: 100)
        }
        #expect(empty?.code == .invalidVP9Payload)
        for (width, height) in [(0, 360), (65_536, 360), (640, -1)] {
            let size = #expect(throws: RTPError.self) {
                try payloader.payloads(
                    frame: [1],
                    info: .init(isKeyFrame: true, width: width, height: height),
                    maximumPayloadLength: 100
                )
            }
            #expect(size?.code == .invalidVP9Payload)
            #expect(size?.message.contains("\(width)x\(height)") == true)
        }
        // A delta frame's size is not sent, so it is not checked.
        #expect(
            try payloader.payloads(
                frame: [1],
                info: .init(isKeyFrame: false, width: 0, height: 0),
                maximumPayloadLength: 100
            ).count == 1
        )
        let small = #expect(throws: RTPError.self) {
            try payloader.payloads(frame: [1], info: Self.delta, maximumPayloadLength: 14)
        }
        #expect(small?.code == .invalidConfiguration)
        #expect(payloader.nextPictureID == 2)
    }

    // MARK: Descriptor

    struct Parsed: Sendable, CustomTestStringConvertible {
        var name: String
        var bytes: [UInt8]
        var descriptor: VP9PayloadDescriptor
        var length: Int
        var testDescription: String { name }
    }

    @Test(
        "descriptors parse field by field (§4.2, §4.2.1)",
        arguments: [
            Parsed(
                name: "ours, a key frame's first packet",
                bytes: [0x8A, 0x81, 0x02, 0x10, 0x02, 0x80, 0x01, 0x68, 0xAA],
                descriptor: .init(
                    pictureID: .fifteenBit(0x0102),
                    interPicturePredicted: false,
                    startOfFrame: true,
                    endOfFrame: false,
                    scalabilityStructure: .init(spatialLayers: 1, resolutions: [.init(width: 640, height: 360)])
                ),
                length: 8
            ),
            Parsed(
                name: "one octet: P E Z",
                bytes: [0x45, 0xAA],
                descriptor: .init(
                    interPicturePredicted: true,
                    startOfFrame: false,
                    endOfFrame: true,
                    notReferenceForUpperSpatialLayers: true
                ),
                length: 1
            ),
            Parsed(
                name: "non-flexible with layer indices: TID 1, TL0PICIDX 7",
                bytes: [0xA8, 0x05, 0x20, 0x07, 0xAA],
                descriptor: .init(
                    pictureID: .sevenBit(5),
                    interPicturePredicted: false,
                    startOfFrame: true,
                    endOfFrame: false,
                    layerIndices: .init(temporalID: 1, tl0PictureIndex: 7)
                ),
                length: 4
            ),
            Parsed(
                name: "flexible: TID 2 SID 1 D, two P_DIFFs (1, then 2 with N=0)",
                bytes: [0xF8, 0x05, 0x43, 0x03, 0x04, 0xAA],
                descriptor: .init(
                    pictureID: .sevenBit(5),
                    interPicturePredicted: true,
                    flexibleMode: true,
                    startOfFrame: true,
                    endOfFrame: false,
                    layerIndices: .init(temporalID: 2, spatialID: 1, interLayerDependency: true),
                    referenceIndices: [1, 2]
                ),
                length: 5
            ),
            Parsed(
                name: "SS of two layers with resolutions and a picture group of two",
                bytes: [
                    0x0A, 0x38, 0x01, 0x40, 0x00, 0xB4, 0x02, 0x80, 0x01, 0x68, 0x02, 0x04, 0x01, 0x34, 0x01, 0xAA,
                ],
                descriptor: .init(
                    interPicturePredicted: false,
                    startOfFrame: true,
                    endOfFrame: false,
                    scalabilityStructure: .init(
                        spatialLayers: 2,
                        resolutions: [.init(width: 320, height: 180), .init(width: 640, height: 360)],
                        pictureGroup: [
                            .init(temporalID: 0, switchingUpPoint: false, referenceIndices: [1]),
                            .init(temporalID: 1, switchingUpPoint: true, referenceIndices: [1]),
                        ]
                    )
                ),
                length: 15
            ),
            Parsed(
                name: "SS without resolutions or picture group",
                bytes: [0x0A, 0x40, 0xAA],
                descriptor: .init(
                    interPicturePredicted: false,
                    startOfFrame: true,
                    endOfFrame: false,
                    scalabilityStructure: .init(spatialLayers: 3)
                ),
                length: 2
            ),
        ]
    )
    func parse(input: Parsed) throws {
        let (descriptor, length) = try VP9PayloadDescriptor.parse(input.bytes[...])
        #expect(descriptor == input.descriptor)
        #expect(length == input.length)
        #expect(descriptor.length == input.length)
        #expect(descriptor.bytes == Array(input.bytes.dropLast()))
    }

    struct Malformed: Sendable, CustomTestStringConvertible {
        var name: String
        var bytes: [UInt8]
        var code: RTPError.Code
        var message: String
        var testDescription: String { name }
    }

    @Test(
        "malformed descriptors name the field and the offset",
        arguments: [
            Malformed(name: "empty", bytes: [], code: .truncated, message: "offset 0, need 1 for the first octet"),
            Malformed(
                name: "I=1 without PictureID",
                bytes: [0x80],
                code: .truncated,
                message: "offset 1, need 1 for the PictureID"
            ),
            Malformed(
                name: "M=1 without the second octet",
                bytes: [0x88, 0x80],
                code: .truncated,
                message: "offset 2, need 1 for the PictureID's second octet (M=1)"
            ),
            Malformed(
                name: "L=1 without layer indices",
                bytes: [0x28],
                code: .truncated,
                message: "offset 1, need 1 for the layer indices (TID U SID D), announced by L=1"
            ),
            Malformed(
                name: "L=1, F=0 without TL0PICIDX",
                bytes: [0x28, 0x00],
                code: .truncated,
                message: "offset 2, need 1 for the TL0PICIDX, announced by L=1 with F=0"
            ),
            Malformed(
                name: "F=1, P=1 without P_DIFF",
                bytes: [0x50],
                code: .truncated,
                message: "offset 1, need 1 for the P_DIFF, announced by F=1 and P=1"
            ),
            Malformed(
                name: "a P_DIFF with N=1 and nothing after it",
                bytes: [0x50, 0x03],
                code: .truncated,
                message: "offset 2, need 1 for the P_DIFF"
            ),
            Malformed(
                name: "a fourth P_DIFF",
                bytes: [0x50, 0x03, 0x03, 0x03, 0x00, 0xAA],
                code: .invalidVP9Payload,
                message: "P_DIFF at offset 3 announces a fourth reference index (N=1); at most 3 are allowed"
            ),
            Malformed(
                name: "V=1 without SS",
                bytes: [0x0A],
                code: .truncated,
                message: "offset 1, need 1 for the SS header (N_S Y G), announced by V=1"
            ),
            Malformed(
                name: "SS resolutions beyond the packet",
                bytes: [0x0A, 0x10, 0x02, 0x80],
                code: .truncated,
                message: "2 bytes left at offset 2, need 4 for the SS WIDTH and HEIGHT of N_S + 1 = 1 spatial layers"
            ),
            Malformed(
                name: "SS of 8 layers in a short packet",
                bytes: [0x0A, 0xF0, 0x00, 0x10, 0x00, 0x10],
                code: .truncated,
                message: "4 bytes left at offset 2, need 32 for the SS WIDTH and HEIGHT of N_S + 1 = 8 spatial layers"
            ),
            Malformed(
                name: "G=1 without N_G",
                bytes: [0x0A, 0x08],
                code: .truncated,
                message: "offset 2, need 1 for the SS N_G, announced by G=1"
            ),
            Malformed(
                name: "N_G beyond the packet",
                bytes: [0x0A, 0x08, 0x05, 0x00],
                code: .truncated,
                message: "1 bytes left at offset 3, need 5 for the SS picture group of 5 entries (N_G)"
            ),
            Malformed(
                name: "R=3 with one P_DIFF",
                bytes: [0x0A, 0x08, 0x01, 0x0C, 0x01],
                code: .truncated,
                message: "offset 5, need 1 for the SS P_DIFF 1 of picture group entry 0"
            ),
            Malformed(
                name: "descriptor without VP9 data",
                bytes: [0x8C, 0x81, 0x02],
                code: .invalidVP9Payload,
                message: "no VP9 data after the 3-byte payload descriptor"
            ),
        ]
    )
    func malformed(input: Malformed) throws {
        let error = #expect(throws: RTPError.self) { try VP9PayloadDescriptor.parse(input.bytes[...]) }
        #expect(error?.code == input.code)
        #expect(error?.message.contains(input.message) == true, "\(error?.message ?? "")")

        var depacketizer = VP9Depacketizer()
        _ = try depacketizer.push(
            payload: [0xC8, 0x80, 0x01, 0x00][...],
            sequenceNumber: 1,
            timestamp: 5,
            marker: false
        )
        #expect(throws: RTPError.self) {
            try depacketizer.push(payload: input.bytes[...], sequenceNumber: 2, timestamp: 5, marker: false)
        }
        #expect(depacketizer.statistics.malformedPackets == 1)
        let frames = try depacketizer.push(
            payload: [0xC4, 0x80, 0x01, 0x07][...],
            sequenceNumber: 3,
            timestamp: 5,
            marker: true
        )
        #expect(
            frames == [
                VP9Frame(
                    timestamp: 5,
                    pictureID: 1,
                    data: [0x00, 0x07],
                    isKeyFrame: false,
                    isComplete: false,
                    endsPicture: true
                )
            ]
        )
    }

    // MARK: Depacketizer

    static func packet(_ payload: [UInt8], sequence: UInt16, timestamp: UInt32 = 0, marker: Bool = false) -> RTPPacket {
        RTPPacket(
            header: RTPHeader(marker: marker, payloadType: 98, sequenceNumber: sequence, timestamp: timestamp, ssrc: 1),
            payload: payload
        )
    }

    @Test("depacketize(packetize(frame)) == frame over random sizes and MTUs (seeded), SS on key frames")
    func roundTrip() throws {
        var generator = SeededGenerator(seed: 9628)
        var depacketizer = VP9Depacketizer()
        var stream = try makeStream(payloadType: 98, sequenceNumber: 65_520)
        var nextPictureID: UInt16 = 0x7FF8
        for round in 0..<100 {
            let budget = try RTPPayloadBudget(
                mtu: Int.random(in: 128...1500, using: &generator),
                srtpTrailerRoom: [0, 4, 10, 16].randomElement(using: &generator) ?? 0
            )
            var payloader = VP9Payloader(budget: budget, firstPictureID: nextPictureID)
            let capacity = budget.maximumPayloadLength() - VP9Payloader.descriptorLength
            let key = round % 7 == 0
            let reduction = key ? VP9Payloader.scalabilityStructureLength : 0
            let boundary = [1, capacity - reduction, capacity - reduction + 1, 2 * capacity - reduction, 2 * capacity]
            let length =
                Bool.random(using: &generator)
                ? boundary.randomElement(using: &generator) ?? 1
                : Int.random(in: 1...30_000, using: &generator)
            let frame = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let info = VP9Payloader.FrameInfo(
                isKeyFrame: key,
                width: Int.random(in: 1...65_535, using: &generator),
                height: Int.random(in: 1...65_535, using: &generator)
            )
            let timestamp = UInt32(round) &* 3000 &+ 0xFFFF_0000
            let packets = try packetizeAll(budget, stream: &stream) { stream, buffer, emit in
                try payloader.packetize(
                    frame: frame[...],
                    info: info,
                    timestamp: timestamp,
                    stream: &stream,
                    into: buffer,
                    emit: emit
                )
            }
            #expect(packets.count == (length + reduction + capacity - 1) / capacity)
            #expect(
                packets.map { VP9Depacketizer.startsKeyFrame($0.payload[...]) } == [key]
                    + Array(repeating: false, count: packets.count - 1)
            )
            var frames: [VP9Frame] = []
            for packet in packets { frames += try depacketizer.push(packet) }
            let structure: VP9PayloadDescriptor.ScalabilityStructure? =
                key
                ? .init(spatialLayers: 1, resolutions: [.init(width: UInt16(info.width), height: UInt16(info.height))])
                : nil
            #expect(
                frames == [
                    VP9Frame(
                        timestamp: timestamp,
                        pictureID: nextPictureID,
                        data: frame,
                        isKeyFrame: key,
                        isComplete: true,
                        endsPicture: true,
                        scalabilityStructure: structure
                    )
                ]
            )
            if key {
                #expect(frames.first?.resolution == .init(width: UInt16(info.width), height: UInt16(info.height)))
            }
            nextPictureID = payloader.nextPictureID
        }
        #expect(depacketizer.statistics == .init())
        #expect(depacketizer.flush() == nil)
    }

    @Test("a lost packet makes its frame incomplete; a marker without E ends a frame incomplete")
    func losses() throws {
        var payloader = VP9Payloader(firstPictureID: 0)
        let first = try payloader.payloads(
            frame: patternBytes(40, header: 0x82)[...],
            info: Self.key320,
            maximumPayloadLength: 20
        )
        var depacketizer = VP9Depacketizer()
        var frames: [VP9Frame] = []
        for (index, payload) in first.enumerated() where index != 1 {
            frames += try depacketizer.push(
                Self.packet(payload, sequence: UInt16(index), timestamp: 100, marker: index == first.count - 1)
            )
        }
        #expect(frames.count == 1)
        #expect(frames.first?.isComplete == false && frames.first?.isKeyFrame == true)
        #expect(frames.first?.resolution == .init(width: 320, height: 180))
        #expect(depacketizer.statistics.lostPackets == 1)

        // B without E, then the marker on a packet without E.
        frames = try depacketizer.push(Self.packet([0xC8, 0x80, 0x01, 0x11], sequence: 10, timestamp: 200))
        frames += try depacketizer.push(
            Self.packet([0xC0, 0x80, 0x01, 0x12], sequence: 11, timestamp: 200, marker: true)
        )
        #expect(
            frames == [
                VP9Frame(
                    timestamp: 200,
                    pictureID: 1,
                    data: [0x11, 0x12],
                    isKeyFrame: false,
                    isComplete: false,
                    endsPicture: true
                )
            ]
        )
        // E without the marker: a whole layer frame that does not end the picture.
        frames = try depacketizer.push(Self.packet([0xCC, 0x80, 0x02, 0x13], sequence: 12, timestamp: 300))
        #expect(
            frames == [
                VP9Frame(
                    timestamp: 300,
                    pictureID: 2,
                    data: [0x13],
                    isKeyFrame: false,
                    isComplete: true,
                    endsPicture: false
                )
            ]
        )
        // A continuation whose start never came, ended by the next frame's B.
        frames = try depacketizer.push(Self.packet([0xC0, 0x80, 0x03, 0x14], sequence: 13, timestamp: 400))
        frames += try depacketizer.push(
            Self.packet([0xCC, 0x80, 0x04, 0x15], sequence: 14, timestamp: 400, marker: true)
        )
        #expect(frames.map(\.pictureID) == [3, 4])
        #expect(frames.map(\.isComplete) == [false, true])
        #expect(depacketizer.statistics.incompleteFrames == 3)
    }

    @Test("duplicates and late packets are ignored")
    func ordering() throws {
        var depacketizer = VP9Depacketizer()
        _ = try depacketizer.push(Self.packet([0xC8, 0x80, 0x01, 0x11], sequence: 65_535))
        #expect(try depacketizer.push(Self.packet([0xC8, 0x80, 0x01, 0x11], sequence: 65_535)).isEmpty)
        #expect(try depacketizer.push(Self.packet([0xC4, 0x80, 0x01, 0x77], sequence: 60_000)).isEmpty)
        let frames = try depacketizer.push(Self.packet([0xC4, 0x80, 0x01, 0x22], sequence: 0, marker: true))
        #expect(frames.map(\.data) == [[0x11, 0x22]] && frames.map(\.isComplete) == [true])
        #expect(depacketizer.statistics.duplicatePackets == 1 && depacketizer.statistics.latePackets == 1)
    }

    @Test("frames beyond the limit are dropped, not grown")
    func limit() throws {
        var depacketizer = VP9Depacketizer(limits: .init(maximumFrameLength: 4))
        _ = try depacketizer.push(Self.packet([0x48, 1, 2, 3], sequence: 1))
        let error = #expect(throws: RTPError.self) { try depacketizer.push(Self.packet([0x40, 4, 5], sequence: 2)) }
        #expect(error?.code == .tooLarge)
        let frames = try depacketizer.push(Self.packet([0x44, 6], sequence: 3, marker: true))
        #expect(frames.count == 1 && frames.first?.isComplete == false && (frames.first?.data.count ?? 0) <= 4)
    }

    @Test("key-frame detection: B=1 and P=0, and no inter-layer dependency")
    func keyFrameDetection() {
        #expect(VP9Depacketizer.startsKeyFrame([0x8E, 0x80, 0x00, 0x10, 0, 1, 0, 1, 0x82][...]))
        #expect(VP9Depacketizer.startsKeyFrame([0x08, 0x82][...]))  // no PictureID, no SS
        #expect(!VP9Depacketizer.startsKeyFrame([0xC8, 0x80, 0x00, 0x86][...]))  // P=1
        #expect(!VP9Depacketizer.startsKeyFrame([0x80, 0x80, 0x00, 0x82][...]))  // not B
        #expect(!VP9Depacketizer.startsKeyFrame([0x38, 0x03, 0x82][...]))  // L with D=1, flexible
        #expect(!VP9Depacketizer.startsKeyFrame([0x8E, 0x80, 0x00, 0x10, 0, 1][...]))  // SS cut short
    }
}
