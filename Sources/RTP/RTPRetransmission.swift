/// RFC 4588 §4 retransmission (RTX) packets, SSRC-multiplexed (§5.3): the lost packet is resent
/// in a stream of its own, so the receiver's sequence-number accounting and SRTP replay window
/// of the original stream never see a number twice.
///
/// ```
/// | RTP header: RTX payload type, RTX sequence number, original timestamp, RTX SSRC |
/// | OSN (original sequence number, 16 bits) | original RTP payload …                 |
/// ```
///
/// The header is the original's with three fields changed (payload type, sequence number,
/// SSRC); marker, timestamp, CSRCs and header extension are copied. The original's padding is
/// not carried: the RTX payload is the original payload, which is what the receiver restores.
/// Both directions work between caller-owned buffers and allocate nothing.
public enum RTPRetransmission {
    /// Bytes the RTX packet adds to the original: the OSN.
    public static let overhead = 2

    /// Writes the RTX packet for the clear-text RTP packet `original` into `destination` and
    /// returns its length (`original` minus padding, plus 2). The OSN is the original's
    /// sequence number, or `originalSequenceNumber` when the receiver knew the original under
    /// another one (a simulcast layer renumbered for one viewer).
    public static func write(
        original: UnsafeRawBufferPointer,
        ssrc: UInt32,
        payloadType: UInt8,
        sequenceNumber: UInt16,
        originalSequenceNumber: UInt16? = nil,
        into destination: UnsafeMutableRawBufferPointer
    ) throws(RTPError) -> Int {
        guard payloadType <= 127 else {
            throw RTPError(.invalidField, "RTX payload type \(payloadType) does not fit in 7 bits (0–127)")
        }
        let layout = try RTPHeaderLayout(original, context: "original RTP packet")
        let payloadLength = layout.payloadEnd - layout.headerLength
        let length = layout.headerLength + overhead + payloadLength
        try ByteWriter.ensure(length, fits: destination.count, what: "RTX packet")
        guard let source = original.baseAddress, let target = destination.baseAddress else { return 0 }
        target.copyMemory(from: source, byteCount: layout.headerLength)
        (target + layout.headerLength + overhead).copyMemory(
            from: source + layout.headerLength,
            byteCount: payloadLength
        )
        // The original sequence number goes in front of the payload before the header's is replaced.
        if let originalSequenceNumber {
            destination.storeBytes(
                of: originalSequenceNumber.bigEndian,
                toByteOffset: layout.headerLength,
                as: UInt16.self
            )
        } else {
            destination[layout.headerLength] = original[2]
            destination[layout.headerLength + 1] = original[3]
        }
        rewrite(destination, payloadType: payloadType, sequenceNumber: sequenceNumber, ssrc: ssrc)
        // The padding bit is cleared: the original's padding was left behind.
        destination[0] &= ~0x20
        return length
    }

    /// The inverse (a receiver's job): writes the original packet carried by the RTX packet
    /// `rtx` into `destination`, under the original stream's SSRC and payload type (the
    /// `apt` of the RTX format). Returns its length and sequence number (the OSN).
    public static func restore(
        rtx: UnsafeRawBufferPointer,
        originalSSRC: UInt32,
        originalPayloadType: UInt8,
        into destination: UnsafeMutableRawBufferPointer
    ) throws(RTPError) -> (length: Int, sequenceNumber: UInt16) {
        guard originalPayloadType <= 127 else {
            throw RTPError(.invalidField, "payload type \(originalPayloadType) does not fit in 7 bits (0–127)")
        }
        let layout = try RTPHeaderLayout(rtx, context: "RTX packet")
        guard layout.payloadEnd - layout.headerLength >= overhead else {
            throw RTPError(
                .truncated,
                "RTX packet: \(layout.payloadEnd - layout.headerLength) payload bytes after the "
                    + "\(layout.headerLength)-byte header; the 2-byte original sequence number is missing"
            )
        }
        let sequenceNumber = UInt16(rtx[layout.headerLength]) << 8 | UInt16(rtx[layout.headerLength + 1])
        let payloadLength = layout.payloadEnd - layout.headerLength - overhead
        let length = layout.headerLength + payloadLength
        try ByteWriter.ensure(length, fits: destination.count, what: "restored RTP packet")
        guard let source = rtx.baseAddress, let target = destination.baseAddress else { return (0, sequenceNumber) }
        target.copyMemory(from: source, byteCount: layout.headerLength)
        (target + layout.headerLength).copyMemory(
            from: source + layout.headerLength + overhead,
            byteCount: payloadLength
        )
        rewrite(destination, payloadType: originalPayloadType, sequenceNumber: sequenceNumber, ssrc: originalSSRC)
        destination[0] &= ~0x20
        return (length, sequenceNumber)
    }

    /// Array form of `write`, for tests and cold paths (allocates).
    public static func packet(
        original: [UInt8],
        ssrc: UInt32,
        payloadType: UInt8,
        sequenceNumber: UInt16
    ) throws(RTPError) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: original.count + overhead)
        let length = try withBuffers(original, &output) { (input, output) throws(RTPError) in
            try write(
                original: input,
                ssrc: ssrc,
                payloadType: payloadType,
                sequenceNumber: sequenceNumber,
                into: output
            )
        }
        return Array(output.prefix(length))
    }

    /// Array form of `restore`, for tests and receivers off the hot path (allocates).
    public static func original(
        fromRTX rtx: [UInt8],
        originalSSRC: UInt32,
        originalPayloadType: UInt8
    ) throws(RTPError) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: rtx.count)
        let length = try withBuffers(rtx, &output) { (input, output) throws(RTPError) in
            try restore(
                rtx: input,
                originalSSRC: originalSSRC,
                originalPayloadType: originalPayloadType,
                into: output
            ).length
        }
        return Array(output.prefix(length))
    }

    private static func withBuffers(
        _ input: [UInt8],
        _ output: inout [UInt8],
        _ body: (UnsafeRawBufferPointer, UnsafeMutableRawBufferPointer) throws(RTPError) -> Int
    ) throws(RTPError) -> Int {
        let result: Result<Int, RTPError> = input.withUnsafeBytes { inputBytes in
            output.withUnsafeMutableBytes { outputBytes in
                do throws(RTPError) { return .success(try body(inputBytes, outputBytes)) } catch {
                    return .failure(error)
                }
            }
        }
        return try result.get()
    }

    private static func rewrite(
        _ packet: UnsafeMutableRawBufferPointer,
        payloadType: UInt8,
        sequenceNumber: UInt16,
        ssrc: UInt32
    ) {
        packet[1] = packet[1] & 0x80 | payloadType
        packet.storeBytes(of: sequenceNumber.bigEndian, toByteOffset: 2, as: UInt16.self)
        packet.storeBytes(of: ssrc.bigEndian, toByteOffset: 8, as: UInt32.self)
    }
}
