/// Packs VP9 frames into RTP payloads, RFC 9628, non-flexible mode with one spatial and one
/// temporal layer.
///
/// RFC 9628 §4.2, the payload descriptor every packet starts with; ours is 3 octets, plus the
/// 5-octet scalability structure on a key frame's first packet:
///
/// ```
///          0 1 2 3 4 5 6 7
///         +-+-+-+-+-+-+-+-+
///         |1|P|0|0|B|E|V|0|   I=1, P=!keyframe, L=0, F=0, B first, E last, V key frame's first, Z=0
///         +-+-+-+-+-+-+-+-+
///         |1| PICTURE ID  |   M=1: 15-bit PictureID, high 7 bits ...
///         +-+-+-+-+-+-+-+-+
///         | EXTENDED PID  |   ... and low 8 bits
///         +-+-+-+-+-+-+-+-+
///    V:   |0 0 0|1|0|0 0 0|   SS (§4.2.1): N_S=0 (one spatial layer), Y=1, G=0
///         +-+-+-+-+-+-+-+-+
///         |     WIDTH     |   16 bits
///         |               |
///         +-+-+-+-+-+-+-+-+
///         |     HEIGHT    |   16 bits
///         |               |
///         +-+-+-+-+-+-+-+-+
/// ```
///
/// - I=1 with M=1 on every packet: §4.2 asks for the PictureID on every packet once an SS has
///   been sent in non-flexible mode. It counts frames, 0x7FFF → 0, as in `VP8Payloader`.
/// - L=0: layer indices are "conditionally recommended" for streams with more than one layer;
///   with one layer there is nothing to say. (libwebrtc's receiver then orders frames by
///   PictureID alone, `RtpFrameIdOnlyRefFinder`; with L=1 and no TL0PICIDX it would drop them.)
/// - F=0 (non-flexible): no P_DIFFs; a single-layer stream's references are simply "the frame
///   before", which the PictureID sequence already says.
/// - P=0 exactly on key frames (no inter-picture prediction), 1 otherwise.
/// - B on the frame's first packet, E on its last; V and the SS only on the first packet of a key
///   frame (as libwebrtc sends it): one spatial layer with its WIDTH and HEIGHT, no picture group
///   (G=0). With one layer the end of the frame is the end of the picture: the marker bit goes on
///   the packet with E and only there.
/// - A frame larger than the budget is cut into the fewest packets possible, of near-equal size
///   counting the SS the first packet carries.
///
/// The API is `H264Payloader`'s and `VP8Payloader`'s, plus `FrameInfo` for what the descriptor
/// needs to know about the frame; no allocation per packet, each frame byte copied once.
public struct VP9Payloader: Sendable {
    /// What the descriptor says about a frame, from the encoder's output.
    public struct FrameInfo: Sendable, Hashable {
        /// A key frame: P=0, and an SS with the resolution in the first packet.
        public var isKeyFrame: Bool
        /// The coded size, for the SS (1...65535 each; read on key frames only).
        public var width: Int
        public var height: Int

        public init(isKeyFrame: Bool, width: Int, height: Int) {
            self.isKeyFrame = isKeyFrame
            self.width = width
            self.height = height
        }
    }

    /// The descriptor every packet carries: first octet and the 15-bit PictureID.
    public static let descriptorLength = 3
    /// The SS on a key frame's first packet: header, WIDTH, HEIGHT.
    public static let scalabilityStructureLength = 5

    public let budget: RTPPayloadBudget
    /// The PictureID the next frame gets (0...0x7FFF).
    public private(set) var nextPictureID: UInt16

    /// `firstPictureID` (masked to 15 bits) is the first frame's; random by default.
    public init(
        budget: RTPPayloadBudget = .standard,
        firstPictureID: UInt16 = .random(in: 0...VPXPictureID.maximum15Bit)
    ) {
        self.budget = budget
        self.nextPictureID = firstPictureID & VPXPictureID.maximum15Bit
    }

    /// Hot path: writes each RTP packet of `frame` (one coded VP9 frame) into `buffer` (header
    /// from `stream`, which also hands out the sequence numbers) and calls `emit` with it, once
    /// per packet, in order; `buffer` is reused as soon as `emit` returns.
    ///
    /// Returns the number of packets emitted. Throws `RTPError` before sending anything when the
    /// frame is empty, a key frame's size does not fit the SS, the budget leaves no room or the
    /// buffer is smaller than the budget's packet; rethrows what `emit` throws. The frame's
    /// PictureID is used up once packetizing starts.
    @discardableResult
    public mutating func packetize(
        frame: ArraySlice<UInt8>,
        info: FrameInfo,
        timestamp: UInt32,
        stream: inout RTPStreamState,
        into buffer: RTPPacketBuffer,
        emit: (RTPPacketBuffer) throws -> Void
    ) throws -> Int {
        try stream.validateHeaderFields()
        let maximumPayload = try Self.checkedPayloadLimit(
            budget.maximumPayloadLength(headerLength: stream.headerLength),
            what: "\(budget) with a \(stream.headerLength)-byte RTP header"
        )
        try ByteWriter.ensure(budget.maximumPacketLength, fits: buffer.capacity, what: "an RTP packet for \(budget)")
        let split = try plan(frame, info: info, maximumPayload: maximumPayload)
        let pictureID = takePictureID()
        var packets = 0
        try split.forEach { range, isFirst, isLast in
            buffer.withUnsafeMutableStorage { storage, count in
                var writer = ByteWriter(storage)
                stream.writeHeader(to: &writer, timestamp: timestamp, marker: isLast)
                Self.writeDescriptor(to: &writer, info: info, first: isFirst, last: isLast, pictureID: pictureID)
                writer.write(frame[frame.startIndex + range.lowerBound..<frame.startIndex + range.upperBound])
                count = writer.offset
            }
            try emit(buffer)
            packets += 1
        }
        return packets
    }

    /// Convenience for tests and cold paths (allocates): the RTP payloads, without RTP headers,
    /// that `packetize` would send for `frame`, at most `maximumPayloadLength` bytes each. The
    /// marker belongs on the last one.
    public mutating func payloads(
        frame: ArraySlice<UInt8>,
        info: FrameInfo,
        maximumPayloadLength: Int
    ) throws(RTPError) -> [[UInt8]] {
        let maximumPayload = try Self.checkedPayloadLimit(maximumPayloadLength, what: "the requested payload limit")
        let split = try plan(frame, info: info, maximumPayload: maximumPayload)
        let pictureID = takePictureID()
        var result: [[UInt8]] = []
        result.reserveCapacity(split.count)
        split.forEach { range, isFirst, isLast in
            let length = Self.descriptorLength + (isFirst && info.isKeyFrame ? Self.scalabilityStructureLength : 0)
            result.append(
                [UInt8](unsafeUninitializedCapacity: length + range.count) { storage, count in
                    var writer = ByteWriter(UnsafeMutableRawBufferPointer(storage))
                    Self.writeDescriptor(to: &writer, info: info, first: isFirst, last: isLast, pictureID: pictureID)
                    writer.write(frame[frame.startIndex + range.lowerBound..<frame.startIndex + range.upperBound])
                    count = writer.offset
                }
            )
        }
        return result
    }

    private func plan(
        _ frame: ArraySlice<UInt8>,
        info: FrameInfo,
        maximumPayload: Int
    ) throws(RTPError) -> VPXFragmentation {
        guard !frame.isEmpty else {
            throw RTPError(.invalidVP9Payload, "VP9 frame is empty; RTP cannot carry an empty frame")
        }
        if info.isKeyFrame {
            let sizes = 1...Int(UInt16.max)
            guard sizes.contains(info.width), sizes.contains(info.height) else {
                throw RTPError(
                    .invalidVP9Payload,
                    "VP9 key frame size \(info.width)x\(info.height) does not fit the scalability structure's "
                        + "16-bit WIDTH and HEIGHT (RFC 9628 §4.2.1)"
                )
            }
        }
        return VPXFragmentation(
            frameLength: frame.count,
            capacity: maximumPayload - Self.descriptorLength,
            firstPacketReduction: info.isKeyFrame ? Self.scalabilityStructureLength : 0
        )
    }

    private mutating func takePictureID() -> UInt16 {
        defer { nextPictureID = VPXPictureID.next15Bit(after: nextPictureID) }
        return nextPictureID
    }

    static func writeDescriptor(
        to writer: inout ByteWriter,
        info: FrameInfo,
        first: Bool,
        last: Bool,
        pictureID: UInt16
    ) {
        let withStructure = first && info.isKeyFrame
        // I=1, P, L=0, F=0, B, E, V, Z=0.
        let flags: UInt8 =
            0x80 | (info.isKeyFrame ? 0 : 0x40) | (first ? 0x08 : 0) | (last ? 0x04 : 0) | (withStructure ? 0x02 : 0)
        writer.write(flags)
        writer.write(0x8000 | pictureID)  // M=1, 15-bit PictureID
        if withStructure {
            writer.write(0x10 as UInt8)  // N_S=0, Y=1, G=0
            writer.write(UInt16(truncatingIfNeeded: info.width))
            writer.write(UInt16(truncatingIfNeeded: info.height))
        }
    }

    /// A payload limit must leave room for the descriptor and a key frame's SS twice over (so the
    /// near-equal split still gives the first packet a byte of the frame) and one byte.
    static let minimumPayloadLength = descriptorLength + 2 * (scalabilityStructureLength + 1)

    static func checkedPayloadLimit(_ limit: Int, what: @autoclosure () -> String) throws(RTPError) -> Int {
        guard limit >= minimumPayloadLength else {
            throw RTPError(
                .invalidConfiguration,
                "\(what()) leaves \(limit) payload bytes per packet; VP9 needs at least \(minimumPayloadLength)"
            )
        }
        return min(limit, RTPPacket.maximumLength)
    }
}
