/// Where the header of an RTP packet ends and its padding starts (RFC 3550 §5.1, §5.3.1),
/// read without building an `RTPHeader` (which would allocate its CSRC list and extension).
struct RTPHeaderLayout {
    /// Fixed header, CSRCs and header extension.
    let headerLength: Int
    /// Where the payload ends: the packet length minus any padding.
    let payloadEnd: Int

    init(_ bytes: UnsafeRawBufferPointer, context: String) throws(RTPError) {
        guard bytes.count <= RTPPacket.maximumLength else {
            throw RTPError(.tooLarge, "\(context) is \(bytes.count) bytes; at most \(RTPPacket.maximumLength) accepted")
        }
        guard bytes.count >= RTPHeader.fixedLength else {
            throw RTPError(.truncated, "\(context): \(bytes.count) bytes, shorter than the 12-byte RTP header")
        }
        let version = bytes[0] >> 6
        guard version == RTPHeader.supportedVersion else {
            throw RTPError(
                .unsupportedVersion,
                "\(context): version \(version) at offset 0; only version 2 exists (RFC 3550 §5.1)"
            )
        }
        var length = RTPHeader.fixedLength + 4 * Int(bytes[0] & 0x0F)
        if bytes[0] & 0x10 != 0 {
            guard bytes.count >= length + 4 else {
                throw RTPError(.truncated, "\(context): header extension announced at offset \(length) is cut off")
            }
            length += 4 + 4 * (Int(bytes[length + 2]) << 8 | Int(bytes[length + 3]))
        }
        guard bytes.count >= length else {
            throw RTPError(
                .truncated,
                "\(context): its CSRCs and header extension need \(length) bytes, the packet has \(bytes.count)"
            )
        }
        var end = bytes.count
        if bytes[0] & 0x20 != 0 {
            let padding = Int(bytes[bytes.count - 1])
            guard padding > 0, padding <= bytes.count - length else {
                throw RTPError(
                    .invalidPadding,
                    "\(context): padding count \(padding) at offset \(bytes.count - 1) is 0 or exceeds the "
                        + "\(bytes.count - length) bytes after the header"
                )
            }
            end -= padding
        }
        headerLength = length
        payloadEnd = end
    }
}
