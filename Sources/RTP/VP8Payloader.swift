/// Packs VP8 frames into RTP payloads, RFC 7741.
///
/// RFC 7741 §4.2, the payload descriptor every packet starts with; ours is always 4 octets:
///
/// ```
///          0 1 2 3 4 5 6 7
///         +-+-+-+-+-+-+-+-+
///         |1|0|0|S|0|0 0 0|   X=1, N=0, S on the frame's first packet only, PID=0
///         +-+-+-+-+-+-+-+-+
///         |1|0|0|0|0 0 0 0|   I=1 (PictureID), no TL0PICIDX, TID or KEYIDX
///         +-+-+-+-+-+-+-+-+
///         |1| PictureID   |   M=1: 15-bit PictureID, high 7 bits ...
///         +-+-+-+-+-+-+-+-+
///         |   PictureID   |   ... and low 8 bits
///         +-+-+-+-+-+-+-+-+
/// ```
///
/// - "The S bit MUST be set to 1 for the first packet of each encoded frame" and PID "MAY be kept
///   at 0 for all packets" (§4.2): we do not look for partition boundaries, so S is set only on
///   the first packet and PID is always 0, as libwebrtc does.
/// - N=0: every frame may be a reference; it is only a hint to a receiver that wants to discard.
/// - PictureID (15 bits, M=1) counts frames: the same on every packet of a frame, one more on
///   the next, 0x7FFF → 0. It is what lets a receiver (libwebrtc's `RtpFrameIdOnlyRefFinder`
///   when there are no temporal layers) see a whole frame went missing.
/// - A frame larger than the budget is cut into the fewest packets possible, of near-equal size
///   (§4.4 leaves the split to the sender); the RTP timestamp is the same on all of them and the
///   marker bit is set on the frame's last packet and only there (§4.1).
///
/// The API is `H264Payloader`'s, so the send path can treat both alike: `packetize` writes each
/// whole RTP packet into a caller-owned buffer and hands it to `emit`, with no allocation per
/// packet; each frame byte is copied once, from the encoder's output into the packet.
public struct VP8Payloader: Sendable {
    /// The descriptor our packets carry: X, I with M=1, nothing else.
    public static let descriptorLength = 4

    public let budget: RTPPayloadBudget
    /// The PictureID the next frame gets (0...0x7FFF).
    public private(set) var nextPictureID: UInt16

    /// `firstPictureID` (masked to 15 bits) is the first frame's; random by default, as
    /// libwebrtc starts its streams, so a restarted sender does not repeat the IDs a receiver
    /// has just seen.
    public init(
        budget: RTPPayloadBudget = .standard,
        firstPictureID: UInt16 = .random(in: 0...VPXPictureID.maximum15Bit)
    ) {
        self.budget = budget
        self.nextPictureID = firstPictureID & VPXPictureID.maximum15Bit
    }

    /// Hot path: writes each RTP packet of `frame` (one coded VP8 frame, as the encoder output
    /// it) into `buffer` (header from `stream`, which also hands out the sequence numbers) and
    /// calls `emit` with it, once per packet, in order. `buffer` is reused for the next packet as
    /// soon as `emit` returns; there is spare capacity after the packet for an SRTP trailer.
    ///
    /// Returns the number of packets emitted. Throws `RTPError` before sending anything when the
    /// frame is empty, the budget leaves no room for a payload or the buffer is smaller than the
    /// budget's packet; rethrows what `emit` throws. The frame's PictureID is used up once
    /// packetizing starts.
    @discardableResult
    public mutating func packetize(
        frame: ArraySlice<UInt8>,
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
        let split = try plan(frame, maximumPayload: maximumPayload)
        let pictureID = takePictureID()
        var packets = 0
        try split.forEach { range, isFirst, isLast in
            buffer.withUnsafeMutableStorage { storage, count in
                var writer = ByteWriter(storage)
                stream.writeHeader(to: &writer, timestamp: timestamp, marker: isLast)
                Self.writeDescriptor(to: &writer, start: isFirst, pictureID: pictureID)
                writer.write(frame[frame.startIndex + range.lowerBound..<frame.startIndex + range.upperBound])
                count = writer.offset
            }
            try emit(buffer)
            packets += 1
        }
        return packets
    }

    /// Convenience for tests and cold paths (allocates): the RTP payloads, without RTP headers,
    /// that `packetize` would send for `frame` with at most `maximumPayloadLength` bytes each.
    /// The marker belongs on the last one.
    public mutating func payloads(frame: ArraySlice<UInt8>, maximumPayloadLength: Int) throws(RTPError) -> [[UInt8]] {
        let maximumPayload = try Self.checkedPayloadLimit(maximumPayloadLength, what: "the requested payload limit")
        let split = try plan(frame, maximumPayload: maximumPayload)
        let pictureID = takePictureID()
        var result: [[UInt8]] = []
        result.reserveCapacity(split.count)
        split.forEach { range, isFirst, _ in
            result.append(
                [UInt8](unsafeUninitializedCapacity: Self.descriptorLength + range.count) { storage, count in
                    var writer = ByteWriter(UnsafeMutableRawBufferPointer(storage))
                    Self.writeDescriptor(to: &writer, start: isFirst, pictureID: pictureID)
                    writer.write(frame[frame.startIndex + range.lowerBound..<frame.startIndex + range.upperBound])
                    count = writer.offset
                }
            )
        }
        return result
    }

    private func plan(_ frame: ArraySlice<UInt8>, maximumPayload: Int) throws(RTPError) -> VPXFragmentation {
        guard !frame.isEmpty else {
            throw RTPError(.invalidVP8Payload, "VP8 frame is empty; RTP cannot carry an empty frame")
        }
        return VPXFragmentation(
            frameLength: frame.count,
            capacity: maximumPayload - Self.descriptorLength,
            firstPacketReduction: 0
        )
    }

    private mutating func takePictureID() -> UInt16 {
        defer { nextPictureID = VPXPictureID.next15Bit(after: nextPictureID) }
        return nextPictureID
    }

    static func writeDescriptor(to writer: inout ByteWriter, start: Bool, pictureID: UInt16) {
        writer.write(start ? 0x90 as UInt8 : 0x80)  // X=1, S on the first packet, PID 0
        writer.write(0x80 as UInt8)  // I=1
        writer.write(0x8000 | pictureID)  // M=1, 15-bit PictureID
    }

    /// A payload limit must leave room for the descriptor and one byte of the frame.
    static func checkedPayloadLimit(_ limit: Int, what: @autoclosure () -> String) throws(RTPError) -> Int {
        guard limit > descriptorLength else {
            throw RTPError(
                .invalidConfiguration,
                "\(what()) leaves \(limit) payload bytes per packet; VP8 needs at least \(descriptorLength + 1)"
            )
        }
        return min(limit, RTPPacket.maximumLength)
    }
}
