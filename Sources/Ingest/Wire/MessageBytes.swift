import NIOCore

/// Reads little-endian fields of one message at offsets from its first header byte, so every
/// error can name the field and its byte offset, and a read past the end is an error, not a trap.
struct MessageBytes {
    let buffer: ByteBuffer
    /// Index in `buffer` of the message's first byte.
    let start: Int

    func integer<T: FixedWidthInteger>(_ offset: Int, _ field: String, as: T.Type = T.self) throws(IngestError) -> T {
        guard let value = buffer.getInteger(at: start + offset, endianness: .little, as: T.self) else {
            throw .field(.truncated, field, at: offset, "the message ends before this field")
        }
        return value
    }

    func bytes(_ offset: Int, count: Int, _ field: String) throws(IngestError) -> [UInt8] {
        guard let bytes = buffer.getBytes(at: start + offset, length: count) else {
            throw .field(.truncated, field, at: offset, "the message ends before these \(count) bytes")
        }
        return bytes
    }

    /// Valid UTF-8 without control characters (names and texts end up in logs and on screens).
    func text(_ offset: Int, count: Int, _ field: String) throws(IngestError) -> String {
        let raw = try bytes(offset, count: count, field)
        guard let text = String(validating: raw, as: UTF8.self) else {
            throw .field(.invalidField, field, at: offset, "is not valid UTF-8")
        }
        guard !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw .field(.invalidField, field, at: offset, "contains control characters")
        }
        return text
    }
}

extension Array where Element == UInt8 {
    /// `52 54 43 49`, for error messages about bytes.
    var hexDescription: String {
        map { byte in
            let digits = String(byte, radix: 16, uppercase: true)
            return digits.count == 1 ? "0" + digits : digits
        }.joined(separator: " ")
    }
}
