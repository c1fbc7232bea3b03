/// Reads big-endian (network order) fields from a byte buffer, checking the bounds before
/// every read so that no input, however short, can read past its end.
///
/// Each read names the field it is after; a short input then produces an error like
/// "RTP packet: 3 bytes left at offset 9, need 4 for the SSRC", which is what a user needs to
/// find the broken byte.
struct ByteReader {
    let bytes: UnsafeRawBufferPointer
    let context: String
    private(set) var offset: Int

    init(_ bytes: UnsafeRawBufferPointer, context: String, offset: Int = 0) {
        self.bytes = bytes
        self.context = context
        self.offset = offset
    }

    var remaining: Int { bytes.count - offset }

    func need(_ count: Int, for field: String) throws(RTPError) {
        guard count >= 0, remaining >= count else {
            throw RTPError(
                .truncated,
                "\(context): \(remaining) bytes left at offset \(offset), need \(count) for the \(field)"
            )
        }
    }

    mutating func readUInt8(_ field: String) throws(RTPError) -> UInt8 {
        try need(1, for: field)
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func readUInt16(_ field: String) throws(RTPError) -> UInt16 {
        try need(2, for: field)
        defer { offset += 2 }
        return UInt16(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
    }

    mutating func readUInt24(_ field: String) throws(RTPError) -> UInt32 {
        try need(3, for: field)
        defer { offset += 3 }
        return UInt32(bytes[offset]) << 16 | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2])
    }

    mutating func readUInt32(_ field: String) throws(RTPError) -> UInt32 {
        try need(4, for: field)
        defer { offset += 4 }
        return UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    mutating func readUInt64(_ field: String) throws(RTPError) -> UInt64 {
        try need(8, for: field)
        defer { offset += 8 }
        return UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    /// Copies `count` bytes out; the caller has checked `count` against a limit already, and
    /// `need` checks it against the input, so the allocation is bounded by the input size.
    mutating func readBytes(_ count: Int, _ field: String) throws(RTPError) -> [UInt8] {
        try need(count, for: field)
        defer { offset += count }
        return [UInt8](UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count]))
    }

    mutating func advance(_ count: Int, _ field: String) throws(RTPError) {
        try need(count, for: field)
        offset += count
    }
}
