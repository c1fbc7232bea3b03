import Testing

@testable import RTP

/// Runs a VPX payloader's hot path and returns every packet it emitted, parsed.
func packetizeAll(
    _ budget: RTPPayloadBudget,
    stream: inout RTPStreamState,
    _ packetize: (inout RTPStreamState, RTPPacketBuffer, (RTPPacketBuffer) throws -> Void) throws -> Int
) throws -> [RTPPacket] {
    let buffer = RTPPacketBuffer(budget: budget)
    var packets: [RTPPacket] = []
    let count = try packetize(&stream, buffer) { buffer in
        #expect(buffer.count <= budget.maximumPacketLength)
        packets.append(try RTPPacket.parse(buffer.copyBytes()))
    }
    #expect(count == packets.count)
    return packets
}

@Suite("VP8 payload format (RFC 7741)")
struct VP8PayloadTests {
    // MARK: Payloader

    struct Vector: Sendable, CustomTestStringConvertible {
        var name: String
        var firstPictureID: UInt16
        var frames: [[UInt8]]
        var limit: Int
        /// Every payload of every frame, in order.
        var payloads: [[UInt8]]
        var testDescription: String { name }
    }

    @Test(
        "payloads are byte-exact (§4.2 descriptor: X=1, I=1, M=1, S on the first packet, PID 0)",
        arguments: [
            Vector(
                name: "one packet: 90 80 | 15-bit PictureID 0x1234 | frame",
                firstPictureID: 0x1234,
                frames: [[0x50, 0x01, 0x02]],
                limit: 100,
                payloads: [[0x90, 0x80, 0x92, 0x34, 0x50, 0x01, 0x02]]
            ),
            Vector(
                name: "PictureID counts frames and wraps 0x7FFF → 0",
                firstPictureID: 0x7FFE,
                frames: [[0x01], [0x02], [0x03]],
                limit: 100,
                payloads: [
                    [0x90, 0x80, 0xFF, 0xFE, 0x01],
                    [0x90, 0x80, 0xFF, 0xFF, 0x02],
                    [0x90, 0x80, 0x80, 0x00, 0x03],
                ]
            ),
            Vector(
                name: "a first PictureID beyond 15 bits is masked",
                firstPictureID: 0xFFFF,
                frames: [[0x01]],
                limit: 100,
                payloads: [[0x90, 0x80, 0xFF, 0xFF, 0x01]]
            ),
            Vector(
                name: "frame exactly fills one packet (limit 10 = 4 + 6)",
                firstPictureID: 5,
                frames: [[1, 2, 3, 4, 5, 6]],
                limit: 10,
                payloads: [[0x90, 0x80, 0x80, 0x05, 1, 2, 3, 4, 5, 6]]
            ),
            Vector(
                name: "one byte over: two packets 4 + 3, S only on the first",
                firstPictureID: 5,
                frames: [[1, 2, 3, 4, 5, 6, 7]],
                limit: 10,
                payloads: [
                    [0x90, 0x80, 0x80, 0x05, 1, 2, 3, 4],
                    [0x80, 0x80, 0x80, 0x05, 5, 6, 7],
                ]
            ),
            Vector(
                name: "exact multiple of the capacity: 6 + 6, no empty tail",
                firstPictureID: 5,
                frames: [[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]],
                limit: 10,
                payloads: [
                    [0x90, 0x80, 0x80, 0x05, 1, 2, 3, 4, 5, 6],
                    [0x80, 0x80, 0x80, 0x05, 7, 8, 9, 10, 11, 12],
                ]
            ),
            Vector(
                name: "13 bytes at capacity 6: three packets 5 + 4 + 4",
                firstPictureID: 0x0100,
                frames: [[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]],
                limit: 10,
                payloads: [
                    [0x90, 0x80, 0x81, 0x00, 1, 2, 3, 4, 5],
                    [0x80, 0x80, 0x81, 0x00, 6, 7, 8, 9],
                    [0x80, 0x80, 0x81, 0x00, 10, 11, 12, 13],
                ]
            ),
            Vector(
                name: "smallest limit (5): one frame byte per packet",
                firstPictureID: 0,
                frames: [[7, 8]],
                limit: 5,
                payloads: [[0x90, 0x80, 0x80, 0x00, 7], [0x80, 0x80, 0x80, 0x00, 8]]
            ),
        ]
    )
    func vectors(vector: Vector) throws {
        var payloader = VP8Payloader(firstPictureID: vector.firstPictureID)
        var payloads: [[UInt8]] = []
        for frame in vector.frames {
            payloads += try payloader.payloads(frame: frame[...], maximumPayloadLength: vector.limit)
        }
        #expect(payloads == vector.payloads)
    }

    @Test("the hot path: same timestamp, consecutive sequence numbers, marker on the last packet only")
    func hotPath() throws {
        let budget = try RTPPayloadBudget(mtu: 200, srtpTrailerRoom: 10)
        var payloader = VP8Payloader(budget: budget, firstPictureID: 0x7FFF)
        var stream = try makeStream(sequenceNumber: 65_534)
        let frame = patternBytes(1000, header: 0x9C)
        let packets = try packetizeAll(budget, stream: &stream) { stream, buffer, emit in
            try payloader.packetize(frame: frame[...], timestamp: 9000, stream: &stream, into: buffer, emit: emit)
        }
        // 200 − 10 − 12 = 178 payload bytes, 174 after the descriptor: ⌈1000 / 174⌉ = 6 packets.
        #expect(packets.count == 6)
        #expect(packets.map(\.header.sequenceNumber) == [65_534, 65_535, 0, 1, 2, 3])
        #expect(packets.allSatisfy { $0.header.timestamp == 9000 && $0.header.payloadType == 96 })
        #expect(packets.map(\.header.marker) == [false, false, false, false, false, true])
        #expect(packets.map { $0.payload[0] } == [0x90, 0x80, 0x80, 0x80, 0x80, 0x80])
        #expect(packets.allSatisfy { Array($0.payload[1...3]) == [0x80, 0xFF, 0xFF] })
        #expect(packets.flatMap { $0.payload.dropFirst(4) } == frame)
        #expect(payloader.nextPictureID == 0)
    }

    @Test("an empty frame or a budget without room is refused before anything is sent")
    func refusals() throws {
        var payloader = VP8Payloader(firstPictureID: 1)
        let empty = #expect(throws: RTPError.self) { try payloader.payloads(frame: [], maximumPayloadLength: 100) }
        #expect(empty?.code == .invalidVP8Payload)
        let small = #expect(throws: RTPError.self) { try payloader.payloads(frame: [1], maximumPayloadLength: 4) }
        #expect(small?.code == .invalidConfiguration)
        #expect(small?.message.contains("VP8 needs at least 5") == true)
        // Nothing was sent, so no PictureID was used up.
        #expect(payloader.nextPictureID == 1)
        var stream = try makeStream()
        let buffer = try RTPPacketBuffer(capacity: 100)
        let tooSmall = #expect(throws: RTPError.self) {
            try payloader.packetize(frame: [1], timestamp: 0, stream: &stream, into: buffer) { _ in
                Issue.record("sent a packet")
            }
        }
        #expect(tooSmall?.code == .bufferTooSmall)
    }

    // MARK: Descriptor

    struct Parsed: Sendable, CustomTestStringConvertible {
        var name: String
        var bytes: [UInt8]
        var descriptor: VP8PayloadDescriptor
        var length: Int
        var testDescription: String { name }
    }

    @Test(
        "descriptors parse field by field (§4.2)",
        arguments: [
            Parsed(
                name: "one octet: S=1, PID 0",
                bytes: [0x10, 0xAA],
                descriptor: .init(startOfPartition: true),
                length: 1
            ),
            Parsed(
                name: "reserved bits are ignored",
                bytes: [0x4B, 0xAA],
                descriptor: .init(startOfPartition: false, partitionIndex: 3),
                length: 1
            ),
            Parsed(
                name: "7-bit PictureID (M=0)",
                bytes: [0x90, 0x80, 0x12, 0xAA],
                descriptor: .init(startOfPartition: true, pictureID: .sevenBit(0x12)),
                length: 3
            ),
            Parsed(
                name: "15-bit PictureID (M=1), ours",
                bytes: [0x90, 0x80, 0x92, 0x34, 0xAA],
                descriptor: .init(startOfPartition: true, pictureID: .fifteenBit(0x1234)),
                length: 4
            ),
            Parsed(
                name: "every field: N, S, PID 3, PictureID, TL0PICIDX, TID 2 Y, KEYIDX 5",
                bytes: [0xB3, 0xF0, 0x81, 0x02, 0x33, 0xA5, 0xAA],
                descriptor: .init(
                    nonReference: true,
                    startOfPartition: true,
                    partitionIndex: 3,
                    pictureID: .fifteenBit(0x0102),
                    tl0PictureIndex: 0x33,
                    temporalLayer: 2,
                    layerSync: true,
                    keyIndex: 5
                ),
                length: 6
            ),
            Parsed(
                name: "X=1 with an extension octet that announces nothing",
                bytes: [0x90, 0x0F, 0xAA],
                descriptor: .init(startOfPartition: true, emptyExtensionOctet: true),
                length: 2
            ),
            Parsed(
                name: "K alone: the TID bits of the shared octet are not read",
                bytes: [0x80, 0x10, 0xDF, 0xAA],
                descriptor: .init(startOfPartition: false, keyIndex: 31),
                length: 3
            ),
        ]
    )
    func parse(input: Parsed) throws {
        let (descriptor, length) = try VP8PayloadDescriptor.parse(input.bytes[...])
        #expect(descriptor == input.descriptor)
        #expect(length == input.length)
        #expect(descriptor.length == input.length)
        // And written back: the same octets, reserved bits and unread TID bits aside.
        let written = descriptor.bytes
        let reparsed = try VP8PayloadDescriptor.parse((written + [0xAA])[...])
        #expect(reparsed.descriptor == descriptor)
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
            Malformed(
                name: "empty",
                bytes: [],
                code: .truncated,
                message: "0 bytes left at offset 0, need 1 for the first octet"
            ),
            Malformed(
                name: "X=1 without the extension octet",
                bytes: [0x90],
                code: .truncated,
                message: "0 bytes left at offset 1, need 1 for the extension octet (I L T K), announced by X=1"
            ),
            Malformed(
                name: "I=1 without the PictureID",
                bytes: [0x90, 0x80],
                code: .truncated,
                message: "offset 2, need 1 for the PictureID"
            ),
            Malformed(
                name: "M=1 without the PictureID's second octet",
                bytes: [0x90, 0x80, 0x80],
                code: .truncated,
                message: "offset 3, need 1 for the PictureID's second octet (M=1)"
            ),
            Malformed(
                name: "L=1 without TL0PICIDX",
                bytes: [0x90, 0xC0, 0x05],
                code: .truncated,
                message: "offset 3, need 1 for the TL0PICIDX, announced by L=1"
            ),
            Malformed(
                name: "T=1 without the TID octet",
                bytes: [0x90, 0x20],
                code: .truncated,
                message: "offset 2, need 1 for the TID/Y/KEYIDX octet"
            ),
            Malformed(
                name: "K=1 without the KEYIDX octet",
                bytes: [0x90, 0x90, 0x85, 0x00],
                code: .truncated,
                message: "offset 4, need 1 for the TID/Y/KEYIDX octet"
            ),
            Malformed(
                name: "descriptor without VP8 data",
                bytes: [0x90, 0x80, 0x92, 0x34],
                code: .invalidVP8Payload,
                message: "no VP8 data after the 4-byte payload descriptor"
            ),
        ]
    )
    func malformed(input: Malformed) throws {
        let error = #expect(throws: RTPError.self) { try VP8PayloadDescriptor.parse(input.bytes[...]) }
        #expect(error?.code == input.code)
        #expect(error?.message.contains(input.message) == true, "\(error?.message ?? "")")
        #expect(
            error?.message.hasPrefix(input.code == .truncated ? "VP8 payload descriptor: " : "VP8 payload: ") == true
        )

        // In the depacketizer: counted, the frame it belonged to incomplete, the stream goes on.
        var depacketizer = VP8Depacketizer()
        _ = try depacketizer.push(
            payload: [0x90, 0x80, 0x80, 0x01, 0x00][...],
            sequenceNumber: 1,
            timestamp: 5,
            marker: false
        )
        #expect(throws: RTPError.self) {
            try depacketizer.push(payload: input.bytes[...], sequenceNumber: 2, timestamp: 5, marker: false)
        }
        #expect(depacketizer.statistics.malformedPackets == 1)
        let frames = try depacketizer.push(
            payload: [0x80, 0x80, 0x80, 0x01, 0x07][...],
            sequenceNumber: 3,
            timestamp: 5,
            marker: true
        )
        #expect(
            frames == [VP8Frame(timestamp: 5, pictureID: 1, data: [0x00, 0x07], isKeyFrame: true, isComplete: false)]
        )
    }

    @Test("the VP8 frame header: P bit, version, show_frame, first partition size; key frame size")
    func frameHeader() throws {
        // Key frame tag: P=0, version 0, show_frame 1, size 0x123 → 0x123 << 5 | 1 << 4 = 0x2470.
        let key: [UInt8] = [0x70, 0x24, 0x00, 0x9D, 0x01, 0x2A, 0x80, 0x02, 0x68, 0x01]
        let header = try VP8FrameHeader.parse(key[...])
        #expect(
            header
                == VP8FrameHeader(
                    isKeyFrame: true,
                    version: 0,
                    showFrame: true,
                    firstPartitionSize: 0x123,
                    width: 640,
                    height: 360
                )
        )
        let inter = try VP8FrameHeader.parse([0x31, 0x00, 0x00][...])
        #expect(!inter.isKeyFrame && inter.showFrame && inter.width == nil)
        #expect(throws: RTPError.self) { try VP8FrameHeader.parse([0x70, 0x24][...]) }
        let noStart = #expect(throws: RTPError.self) {
            try VP8FrameHeader.parse([0x70, 0x24, 0x00, 0x9D, 0x01, 0x2B, 0, 0, 0, 0][...])
        }
        #expect(noStart?.code == .invalidVP8Payload)
    }

    // MARK: Depacketizer

    static func packet(_ payload: [UInt8], sequence: UInt16, timestamp: UInt32 = 0, marker: Bool = false) -> RTPPacket {
        RTPPacket(
            header: RTPHeader(marker: marker, payloadType: 96, sequenceNumber: sequence, timestamp: timestamp, ssrc: 1),
            payload: payload
        )
    }

    @Test("depacketize(packetize(frame)) == frame over random sizes and MTUs (seeded)")
    func roundTrip() throws {
        var generator = SeededGenerator(seed: 7741)
        var depacketizer = VP8Depacketizer()
        var stream = try makeStream(sequenceNumber: 65_500)
        var payloader = VP8Payloader(firstPictureID: 0x7FF0)
        for round in 0..<100 {
            let budget = try RTPPayloadBudget(
                mtu: Int.random(in: 128...1500, using: &generator),
                srtpTrailerRoom: [0, 4, 10, 16].randomElement(using: &generator) ?? 0
            )
            payloader = VP8Payloader(budget: budget, firstPictureID: payloader.nextPictureID)
            let capacity = budget.maximumPayloadLength() - VP8Payloader.descriptorLength
            let boundary = [1, capacity - 1, capacity, capacity + 1, 2 * capacity, 2 * capacity + 1]
            let length =
                Bool.random(using: &generator)
                ? boundary.randomElement(using: &generator) ?? 1
                : Int.random(in: 1...30_000, using: &generator)
            let key = round % 10 == 0
            let frame = [key ? 0x10 : 0x11] + (1..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let timestamp = UInt32(round) * 3000
            let pictureID = payloader.nextPictureID
            let packets = try packetizeAll(budget, stream: &stream) { stream, buffer, emit in
                try payloader.packetize(
                    frame: frame[...],
                    timestamp: timestamp,
                    stream: &stream,
                    into: buffer,
                    emit: emit
                )
            }
            #expect(packets.count == (length + capacity - 1) / capacity)
            #expect(
                packets.map { VP8Depacketizer.startsKeyFrame($0.payload[...]) } == [key]
                    + Array(repeating: false, count: packets.count - 1)
            )
            var frames: [VP8Frame] = []
            for packet in packets { frames += try depacketizer.push(packet) }
            #expect(
                frames == [
                    VP8Frame(timestamp: timestamp, pictureID: pictureID, data: frame, isKeyFrame: key, isComplete: true)
                ]
            )
        }
        #expect(depacketizer.statistics == .init())
        #expect(depacketizer.flush() == nil)
    }

    @Test("a lost packet makes its frame incomplete; the next frame is whole again")
    func lostPacket() throws {
        var payloader = VP8Payloader(firstPictureID: 10)
        let first = try payloader.payloads(frame: patternBytes(20, header: 0x10)[...], maximumPayloadLength: 10)
        let second = try payloader.payloads(frame: [0x11, 1, 2][...], maximumPayloadLength: 10)
        var depacketizer = VP8Depacketizer()
        var frames: [VP8Frame] = []
        for (index, payload) in first.enumerated() where index != 1 {
            frames += try depacketizer.push(
                Self.packet(payload, sequence: UInt16(index), timestamp: 100, marker: index == first.count - 1)
            )
        }
        frames += try depacketizer.push(
            Self.packet(second[0], sequence: UInt16(first.count), timestamp: 200, marker: true)
        )
        #expect(frames.map(\.isComplete) == [false, true])
        #expect(frames.map(\.pictureID) == [10, 11])
        #expect(frames[0].isKeyFrame && !frames[1].isKeyFrame)
        #expect(frames[1].data == [0x11, 1, 2])
        #expect(depacketizer.statistics.lostPackets == 1)
        #expect(depacketizer.statistics.incompleteFrames == 1)
    }

    @Test("a lost start packet: the rest is an incomplete frame that is not called a key frame")
    func lostStart() throws {
        var payloader = VP8Payloader(firstPictureID: 3)
        let payloads = try payloader.payloads(frame: patternBytes(20, header: 0x10)[...], maximumPayloadLength: 10)
        var depacketizer = VP8Depacketizer()
        _ = try depacketizer.push(Self.packet([0x90, 0x80, 0x80, 0x02, 0x11], sequence: 1, timestamp: 0, marker: true))
        var frames: [VP8Frame] = []
        for (index, payload) in payloads.enumerated().dropFirst() {
            frames += try depacketizer.push(
                Self.packet(payload, sequence: UInt16(index + 1), timestamp: 3000, marker: index == payloads.count - 1)
            )
        }
        #expect(frames.count == 1)
        #expect(frames.first?.isComplete == false && frames.first?.isKeyFrame == false)
        #expect(frames.first?.pictureID == 3)
    }

    @Test("a lost marker: the frame ends, incomplete, at the next start, timestamp or PictureID")
    func lostMarker() throws {
        var depacketizer = VP8Depacketizer()
        // Next timestamp.
        _ = try depacketizer.push(Self.packet([0x90, 0x80, 0x80, 0x01, 0x10], sequence: 1, timestamp: 100))
        var frames = try depacketizer.push(Self.packet([0x90, 0x80, 0x80, 0x02, 0x11], sequence: 2, timestamp: 200))
        #expect(frames.map(\.isComplete) == [false] && frames.map(\.pictureID) == [1])
        // A new start at the same timestamp.
        frames = try depacketizer.push(Self.packet([0x90, 0x80, 0x80, 0x03, 0x11], sequence: 3, timestamp: 200))
        #expect(frames.map(\.pictureID) == [2] && frames.map(\.isComplete) == [false])
        // Another PictureID in a continuation packet.
        frames = try depacketizer.push(
            Self.packet([0x80, 0x80, 0x80, 0x04, 0x11], sequence: 4, timestamp: 200, marker: true)
        )
        #expect(frames.map(\.pictureID) == [3, 4] && frames.map(\.isComplete) == [false, false])
        #expect(depacketizer.statistics.incompleteFrames == 4)
        #expect(depacketizer.statistics.lostPackets == 0)
    }

    @Test("duplicates and late packets are ignored; 65535 → 0 is no gap")
    func ordering() throws {
        var depacketizer = VP8Depacketizer()
        _ = try depacketizer.push(Self.packet([0x90, 0x80, 0x80, 0x01, 0x11], sequence: 65_535))
        #expect(try depacketizer.push(Self.packet([0x90, 0x80, 0x80, 0x01, 0x11], sequence: 65_535)).isEmpty)
        #expect(try depacketizer.push(Self.packet([0x80, 0x80, 0x80, 0x01, 0x77], sequence: 65_000)).isEmpty)
        let frames = try depacketizer.push(Self.packet([0x80, 0x80, 0x80, 0x01, 0x22], sequence: 0, marker: true))
        #expect(
            frames == [VP8Frame(timestamp: 0, pictureID: 1, data: [0x11, 0x22], isKeyFrame: false, isComplete: true)]
        )
        #expect(depacketizer.statistics.duplicatePackets == 1)
        #expect(depacketizer.statistics.latePackets == 1)
        #expect(depacketizer.statistics.lostPackets == 0)
    }

    @Test("frames beyond the limit are dropped, not grown")
    func limit() throws {
        var depacketizer = VP8Depacketizer(limits: .init(maximumFrameLength: 6))
        _ = try depacketizer.push(Self.packet([0x10, 1, 2, 3, 4], sequence: 1))
        let error = #expect(throws: RTPError.self) {
            try depacketizer.push(Self.packet([0x00, 5, 6, 7], sequence: 2))
        }
        #expect(error?.code == .tooLarge)
        let frames = try depacketizer.push(Self.packet([0x00, 8], sequence: 3, marker: true))
        #expect(frames.count == 1 && frames.first?.isComplete == false)
        #expect((frames.first?.data.count ?? 0) <= 6)
    }

    @Test("key-frame detection needs S=1, PID 0 and P=0")
    func keyFrameDetection() {
        #expect(VP8Depacketizer.startsKeyFrame([0x90, 0x80, 0x80, 0x01, 0x10][...]))
        #expect(!VP8Depacketizer.startsKeyFrame([0x90, 0x80, 0x80, 0x01, 0x11][...]))  // P=1
        #expect(!VP8Depacketizer.startsKeyFrame([0x80, 0x80, 0x80, 0x01, 0x10][...]))  // S=0
        #expect(!VP8Depacketizer.startsKeyFrame([0x11, 0x10][...]))  // PID 1
        #expect(!VP8Depacketizer.startsKeyFrame([0x90, 0x80, 0x80][...]))  // malformed
    }
}
