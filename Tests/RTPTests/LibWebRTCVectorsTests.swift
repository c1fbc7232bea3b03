import Testing

@testable import RTP

/// Our VP8 and VP9 payload formats against what a real libwebrtc sender (Chromium 156) put on
/// the wire: `LibWebRTCCaptures`. The depacketizers must read every packet as libwebrtc meant it
/// and put its frames back together; our payloaders must lay out their descriptors as libwebrtc
/// does wherever our design means the same thing.
///
/// What the captures show of libwebrtc's layout (single layer, L1T1, as a browser sends by
/// default), and how ours compares:
///
/// - VP8: every packet `X=1 | I=1 | M=1 + 15-bit PictureID`, S and PID 0 on a frame's first
///   packet, N=0, no TL0PICIDX, TID or KEYIDX. That is byte for byte our `VP8Payloader`'s
///   descriptor, with or without the screen-content hint.
/// - VP9 screen content (`detail`): non-flexible (F=0) with no layer indices, PictureID on every
///   packet, SS with the resolution on a key frame's first packet: our `VP9Payloader`'s layout,
///   except for Z=1 and a one-entry picture group (G=1) in the SS; see `ourVP9Layout`.
/// - VP9 camera content: flexible mode (F=1), a P_DIFF of 1 on every delta frame.
/// - A frame larger than a packet is split into near-equal parts, as ours is; libwebrtc gives the
///   spare bytes to the last packets, we give them to the first ones (RFC 7741 §4.4 and RFC 9628
///   leave the split to the sender).
/// - Header extensions in the RFC 8285 one-byte form: abs-send-time on every packet, mid on the
///   first ones only (each capture loses it within its first two seconds).
@Suite("libwebrtc's VP8 and VP9 packets (a real Chromium capture)")
struct LibWebRTCVectorsTests {
    /// What each capture must read as, written out by hand from the packets (not derived from
    /// our parsers).
    struct Expectation: Sendable, CustomTestStringConvertible {
        var capture: LibWebRTCCapture
        var payloadType: UInt8
        var ssrc: UInt32
        var firstSequenceNumber: UInt16
        /// The key frame's PictureID; the next frames count on from it.
        var firstPictureID: UInt16
        /// Packets of each frame: the key frame, then three delta frames.
        var packetsPerFrame: [Int]
        /// VP9 only: F, and the SS's picture group (G) on the key frame.
        var flexibleMode = false
        var pictureGroup: [VP9PayloadDescriptor.ScalabilityStructure.PictureGroupEntry]?

        var testDescription: String { capture.name }
    }

    static let width = 320
    static let height = 180

    static let vp8: [Expectation] = [
        .init(
            capture: LibWebRTCCaptures.vp8,
            payloadType: 96,
            ssrc: 0x18C7_B9D7,
            firstSequenceNumber: 0x5FB3,
            firstPictureID: 0x183F,
            packetsPerFrame: [4, 1, 1, 1]
        ),
        .init(
            capture: LibWebRTCCaptures.vp8Detail,
            payloadType: 96,
            ssrc: 0x3CC6_57AB,
            firstSequenceNumber: 0x7E4E,
            firstPictureID: 0x3334,
            packetsPerFrame: [2, 1, 1, 1]
        ),
    ]

    static let vp9: [Expectation] = [
        .init(
            capture: LibWebRTCCaptures.vp9,
            payloadType: 98,
            ssrc: 0xB025_C83E,
            firstSequenceNumber: 0x544A,
            firstPictureID: 0x2750,
            packetsPerFrame: [7, 1, 1, 1],
            flexibleMode: true,
            pictureGroup: nil
        ),
        .init(
            capture: LibWebRTCCaptures.vp9Detail,
            payloadType: 98,
            ssrc: 0xF3F4_3A6C,
            firstSequenceNumber: 0x31B9,
            firstPictureID: 0x1D68,
            packetsPerFrame: [7, 1, 1, 1],
            flexibleMode: false,
            // TID 0, U=1, one reference: the picture before.
            pictureGroup: [.init(temporalID: 0, switchingUpPoint: true, referenceIndices: [1])]
        ),
    ]

    /// One captured packet, parsed, with where it sits in its frame.
    struct Placed {
        var rtp: RTPPacket
        var payloadLength: Int
        var frame: Int
        var isFirst: Bool
        var isLast: Bool
        /// The packet's payload is all there (its frame was kept whole).
        var isWhole: Bool { rtp.payload.count == payloadLength }
    }

    static func placed(_ expectation: Expectation) throws -> [Placed] {
        let packets = expectation.capture.packets
        #expect(packets.count == expectation.packetsPerFrame.reduce(0, +))
        var result: [Placed] = []
        var index = 0
        for (frame, count) in expectation.packetsPerFrame.enumerated() {
            for position in 0..<count where index < packets.count {
                let packet = packets[index]
                result.append(
                    Placed(
                        rtp: try RTPPacket.parse(packet.bytes),
                        payloadLength: packet.payloadLength,
                        frame: frame,
                        isFirst: position == 0,
                        isLast: position == count - 1
                    )
                )
                index += 1
            }
        }
        return result
    }

    static func pictureID(_ expectation: Expectation, frame: Int) -> UInt16 {
        (expectation.firstPictureID &+ UInt16(frame)) & VPXPictureID.maximum15Bit
    }

    // MARK: RTP

    @Test("RTP headers: PT, SSRC, sequence, timestamps, marker on each frame's last packet, extensions")
    func rtpHeaders() throws {
        for expectation in Self.vp8 + Self.vp9 {
            let placed = try Self.placed(expectation)
            var timestamps: [UInt32] = []
            for (index, packet) in placed.enumerated() {
                let header = packet.rtp.header
                #expect(header.payloadType == expectation.payloadType)
                #expect(header.ssrc == expectation.ssrc)
                #expect(header.csrcs.isEmpty && packet.rtp.paddingLength == 0)
                #expect(header.sequenceNumber == expectation.firstSequenceNumber &+ UInt16(index))
                #expect(header.marker == packet.isLast, "\(expectation.capture.name) packet \(index)")
                if packet.isFirst {
                    timestamps.append(header.timestamp)
                } else {
                    #expect(header.timestamp == timestamps.last)
                }
                // abs-send-time (id 2, 3 bytes) and mid (id 9, "0"), RFC 8285 one-byte form.
                let headerExtension = try #require(header.headerExtension)
                #expect(headerExtension.profile == RTPHeaderExtension.oneByteProfile)
                let elements = try headerExtension.elements()
                #expect(elements.map(\.id) == [2, 9])
                #expect(elements.first?.data.count == 3)
                #expect(elements.last?.data == Array("0".utf8))
            }
            // 90 kHz, about 30 frames a second: the timestamps only go forward.
            #expect(zip(timestamps, timestamps.dropFirst()).allSatisfy { $1 &- $0 > 0 && $1 &- $0 < 9000 })
        }
    }

    // MARK: VP8

    @Test(
        "VP8: each descriptor is X I M with the frame's 15-bit PictureID, S and PID 0 first, and reads back the same",
        arguments: vp8
    )
    func vp8Descriptors(expectation: Expectation) throws {
        #expect(expectation.capture.codec == .vp8)
        for packet in try Self.placed(expectation) {
            let payload = packet.rtp.payload[...]
            let (descriptor, length) = try VP8PayloadDescriptor.parse(payload)
            let expected = VP8PayloadDescriptor(
                startOfPartition: packet.isFirst,
                partitionIndex: 0,
                pictureID: .fifteenBit(Self.pictureID(expectation, frame: packet.frame))
            )
            #expect(descriptor == expected)
            #expect(length == VP8Payloader.descriptorLength)
            #expect(descriptor.bytes == Array(payload.prefix(length)))
            let isKeyStart = packet.isFirst && packet.frame == 0
            #expect(VP8Depacketizer.startsKeyFrame(payload) == isKeyStart)
            guard packet.isFirst else { continue }
            let header = try VP8FrameHeader.parse(payload.dropFirst(length))
            #expect(header.isKeyFrame == (packet.frame == 0))
            #expect(header.version == 0 && header.showFrame)
            if header.isKeyFrame {
                #expect(header.width == Self.width && header.height == Self.height)
            }
        }
    }

    @Test("VP8: the depacketizer puts libwebrtc's frames back together", arguments: vp8)
    func vp8Reassembly(expectation: Expectation) throws {
        let placed = try Self.placed(expectation)
        var depacketizer = VP8Depacketizer()
        var frames: [VP8Frame] = []
        for packet in placed { frames += try depacketizer.push(packet.rtp) }
        #expect(depacketizer.flush() == nil)
        #expect(depacketizer.statistics == VPXDepacketizerStatistics())
        try #require(frames.count == expectation.packetsPerFrame.count)
        for (index, frame) in frames.enumerated() {
            let packets = placed.filter { $0.frame == index }
            #expect(frame.isComplete)
            #expect(frame.isKeyFrame == (index == 0))
            #expect(frame.pictureID == Self.pictureID(expectation, frame: index))
            #expect(frame.timestamp == packets[0].rtp.header.timestamp)
            let pieces = packets.map { $0.rtp.payload.dropFirst(VP8Payloader.descriptorLength) }
            #expect(frame.data == Array(pieces.joined()))
            if packets.allSatisfy(\.isWhole) {
                // The whole frame: its first partition fits in it.
                let header = try VP8FrameHeader.parse(frame.data[...])
                #expect(header.firstPartitionSize < frame.data.count)
            }
        }
        let key = try VP8FrameHeader.parse(frames[0].data[...])
        #expect(key.width == Self.width && key.height == Self.height)
    }

    @Test("VP8: our payloader sends libwebrtc's descriptors, in as many packets of the same sizes", arguments: vp8)
    func vp8PayloaderShape(expectation: Expectation) throws {
        let placed = try Self.placed(expectation)
        // libwebrtc's own limit is not on the wire; its key frame's largest payload gives the
        // same number of packets.
        let limit = try #require(placed.filter { $0.frame == 0 }.map(\.payloadLength).max())
        var payloader = VP8Payloader(firstPictureID: expectation.firstPictureID)
        for frame in 0..<expectation.packetsPerFrame.count {
            let theirs = placed.filter { $0.frame == frame }
            let frameLength = theirs.reduce(0) { $0 + $1.payloadLength - VP8Payloader.descriptorLength }
            let ours = try payloader.payloads(
                frame: patternBytes(frameLength, header: 0)[...],
                maximumPayloadLength: limit
            )
            #expect(ours.count == theirs.count)
            #expect(ours.map { Array($0.prefix(4)) } == theirs.map { Array($0.rtp.payload.prefix(4)) })
            // The same sizes; libwebrtc puts the larger packets last, we put them first.
            #expect(ours.map(\.count).sorted() == theirs.map(\.payloadLength).sorted())
        }
    }

    // MARK: VP9

    /// The descriptor our `VP9Payloader` writes where libwebrtc wrote `theirs`. The differences,
    /// and why each is fine:
    ///
    /// - Z (not a reference for upper spatial layers): libwebrtc sets it on every packet here; we
    ///   leave it 0. It tells a receiver that no higher spatial layer predicts from this frame;
    ///   with one spatial layer there is none, so Z=0 and Z=1 say the same.
    /// - G, the SS's picture group: libwebrtc's screen content describes a group of one picture
    ///   (TID 0, U=1, P_DIFF 1: each picture refers to the one before). RFC 9628 §4.2.1 makes G
    ///   optional, and with one layer the PictureID sequence already says that; we send Y alone.
    /// - F, flexible mode (libwebrtc's camera content only): each delta frame carries a P_DIFF of
    ///   1, the picture before. Both modes are RFC 9628's; with one layer they describe the same
    ///   chain of references, and libwebrtc itself uses non-flexible mode for screen content.
    static func ourVP9Layout(_ theirs: VP9PayloadDescriptor) -> VP9PayloadDescriptor {
        var ours = theirs
        ours.notReferenceForUpperSpatialLayers = false
        ours.scalabilityStructure?.pictureGroup = nil
        ours.flexibleMode = false
        ours.referenceIndices = []
        return ours
    }

    @Test(
        "VP9: each descriptor reads as sent (I M, P, F, B E, V with the SS, Z; P_DIFFs in flexible mode) and back",
        arguments: vp9
    )
    func vp9Descriptors(expectation: Expectation) throws {
        #expect(expectation.capture.codec == .vp9)
        for packet in try Self.placed(expectation) {
            let payload = packet.rtp.payload[...]
            let (descriptor, length) = try VP9PayloadDescriptor.parse(payload)
            let isKey = packet.frame == 0
            let structure = VP9PayloadDescriptor.ScalabilityStructure(
                spatialLayers: 1,
                resolutions: [.init(width: UInt16(Self.width), height: UInt16(Self.height))],
                pictureGroup: expectation.pictureGroup
            )
            let expected = VP9PayloadDescriptor(
                pictureID: .fifteenBit(Self.pictureID(expectation, frame: packet.frame)),
                interPicturePredicted: !isKey,
                flexibleMode: expectation.flexibleMode,
                startOfFrame: packet.isFirst,
                endOfFrame: packet.isLast,
                notReferenceForUpperSpatialLayers: true,
                layerIndices: nil,
                referenceIndices: expectation.flexibleMode && !isKey ? [1] : [],
                scalabilityStructure: packet.isFirst && isKey ? structure : nil
            )
            #expect(descriptor == expected)
            #expect(descriptor.length == length)
            #expect(descriptor.bytes == Array(payload.prefix(length)))
            #expect(VP9Depacketizer.startsKeyFrame(payload) == (packet.isFirst && isKey))
            guard packet.isFirst else { continue }
            // The VP9 bitstream agrees: frame type, and on the key frame the SS's size.
            let header = try #require(VP9FrameHeaderStart(payload.dropFirst(length)))
            #expect(header.profile == 0 && header.showFrame)
            #expect(header.isKeyFrame == isKey)
            if isKey {
                #expect(header.width == Self.width && header.height == Self.height)
            }
        }
    }

    @Test("VP9: the depacketizer puts libwebrtc's frames back together, the SS's size on the key frame", arguments: vp9)
    func vp9Reassembly(expectation: Expectation) throws {
        let placed = try Self.placed(expectation)
        var depacketizer = VP9Depacketizer()
        var frames: [VP9Frame] = []
        for packet in placed { frames += try depacketizer.push(packet.rtp) }
        #expect(depacketizer.flush() == nil)
        #expect(depacketizer.statistics == VPXDepacketizerStatistics())
        try #require(frames.count == expectation.packetsPerFrame.count)
        for (index, frame) in frames.enumerated() {
            let packets = placed.filter { $0.frame == index }
            #expect(frame.isComplete && frame.endsPicture)
            #expect(frame.isKeyFrame == (index == 0))
            #expect(frame.pictureID == Self.pictureID(expectation, frame: index))
            #expect(frame.timestamp == packets[0].rtp.header.timestamp)
            #expect(frame.layerIndices == nil)
            var pieces: [UInt8] = []
            for packet in packets {
                let (_, length) = try VP9PayloadDescriptor.parse(packet.rtp.payload[...])
                pieces += packet.rtp.payload.dropFirst(length)
            }
            #expect(frame.data == pieces)
            let header = try #require(VP9FrameHeaderStart(frame.data[...]))
            #expect(header.isKeyFrame == frame.isKeyFrame)
        }
        let resolution = try #require(frames[0].resolution)
        #expect(Int(resolution.width) == Self.width && Int(resolution.height) == Self.height)
        let key = try #require(VP9FrameHeaderStart(frames[0].data[...]))
        #expect(key.width == Self.width && key.height == Self.height)
        #expect(frames.dropFirst().allSatisfy { $0.scalabilityStructure == nil })
    }

    @Test(
        "VP9: our payloader sends libwebrtc's layout but for Z, G and flexible mode, in as many packets",
        arguments: vp9
    )
    func vp9PayloaderShape(expectation: Expectation) throws {
        let placed = try Self.placed(expectation)
        let limit = try #require(placed.filter { $0.frame == 0 }.map(\.payloadLength).max())
        var payloader = VP9Payloader(firstPictureID: expectation.firstPictureID)
        for frame in 0..<expectation.packetsPerFrame.count {
            let theirs = try placed.filter { $0.frame == frame }.map {
                (packet: $0, parsed: try VP9PayloadDescriptor.parse($0.rtp.payload[...]))
            }
            let frameLength = theirs.reduce(0) { $0 + $1.packet.payloadLength - $1.parsed.length }
            let info = VP9Payloader.FrameInfo(isKeyFrame: frame == 0, width: Self.width, height: Self.height)
            let ours = try payloader.payloads(
                frame: patternBytes(frameLength, header: 0)[...],
                info: info,
                maximumPayloadLength: limit
            )
            #expect(ours.count == theirs.count)
            var sameLengths = true
            for (our, their) in zip(ours, theirs) {
                let (descriptor, length) = try VP9PayloadDescriptor.parse(our[...])
                #expect(descriptor == Self.ourVP9Layout(their.parsed.descriptor))
                sameLengths = sameLengths && length == their.parsed.length
            }
            if sameLengths {
                // The same sizes; libwebrtc puts the larger packets last, we put them first.
                #expect(ours.map(\.count).sorted() == theirs.map(\.packet.payloadLength).sorted())
            } else {
                // Our descriptors are the shorter ones (no P_DIFF, no picture group).
                #expect(ours.reduce(0) { $0 + $1.count } < theirs.reduce(0) { $0 + $1.packet.payloadLength })
            }
        }
    }
}

/// The start of a VP9 frame's uncompressed header (VP9 bitstream specification §6.2): profile,
/// frame type, show_frame and, on a key frame, after the sync code and the colour config, the
/// frame size. Nil when the bytes are not a VP9 frame or end before the size.
struct VP9FrameHeaderStart {
    var profile: Int
    var isKeyFrame: Bool
    var showFrame: Bool
    var width: Int?
    var height: Int?

    init?(_ bytes: ArraySlice<UInt8>) {
        var reader = BitReader(bytes: Array(bytes))
        guard let marker = reader.read(2), marker == 2, let low = reader.read(1), let high = reader.read(1) else {
            return nil
        }
        profile = high << 1 | low
        if profile == 3 { guard reader.read(1) == 0 else { return nil } }
        guard reader.read(1) == 0 else { return nil }  // show_existing_frame
        guard let frameType = reader.read(1), let show = reader.read(1), reader.read(1) != nil else { return nil }
        isKeyFrame = frameType == 0
        showFrame = show == 1
        guard isKeyFrame else { return }
        guard reader.read(24) == 0x49_8342 else { return nil }  // frame_sync_code
        if profile >= 2 { guard reader.read(1) != nil else { return nil } }  // ten_or_twelve_bit
        guard let colorSpace = reader.read(3) else { return nil }
        if colorSpace != 7 {  // not CS_RGB: color_range, then subsampling in profiles 1 and 3
            guard reader.read(1) != nil else { return nil }
            if profile == 1 || profile == 3 { guard reader.read(3) != nil else { return nil } }
        } else if profile == 1 || profile == 3 {
            guard reader.read(1) != nil else { return nil }
        }
        guard let widthMinusOne = reader.read(16), let heightMinusOne = reader.read(16) else { return nil }
        width = widthMinusOne + 1
        height = heightMinusOne + 1
    }

    private struct BitReader {
        var bytes: [UInt8]
        var position = 0

        mutating func read(_ count: Int) -> Int? {
            guard position + count <= bytes.count * 8 else { return nil }
            var value = 0
            for _ in 0..<count {
                value = value << 1 | Int(bytes[position >> 3] >> (7 - UInt8(position & 7)) & 1)
                position += 1
            }
            return value
        }
    }
}
