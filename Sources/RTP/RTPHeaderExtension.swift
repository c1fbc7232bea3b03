/// The header extension of an RTP packet (RFC 3550 §5.3.1): a 16-bit profile-defined value and
/// a body whose length is a whole number of 32-bit words.
///
/// RFC 8285 gives the profile values 0xBEDE (one-byte elements) and 0x100X (two-byte elements)
/// a meaning; `RTPHeaderExtensionElement` builds and reads those. Any other profile round-trips
/// as opaque bytes.
public struct RTPHeaderExtension: Sendable, Hashable {
    /// The "defined by profile" field.
    public var profile: UInt16
    /// The extension body, without the 4-byte profile/length preamble. Its length must be a
    /// multiple of 4 and at most 65,535 words.
    public var data: [UInt8]

    /// Largest body the 16-bit length field can describe (in bytes).
    public static let maximumDataLength = Int(UInt16.max) * 4

    public init(profile: UInt16, data: [UInt8]) {
        self.profile = profile
        self.data = data
    }

    /// Bytes on the wire: the 4-byte preamble plus the body.
    public var serializedLength: Int { 4 + data.count }

    /// RFC 3550 §5.3.1: the length field counts 32-bit words, so the body must be word-aligned.
    public func validate() throws(RTPError) {
        guard data.count % 4 == 0 else {
            throw RTPError(
                .invalidExtension,
                "header extension body is \(data.count) bytes; it must be a multiple of 4 (RFC 3550 §5.3.1)"
            )
        }
        guard data.count <= Self.maximumDataLength else {
            throw RTPError(
                .invalidExtension,
                "header extension body is \(data.count) bytes; the length field allows at most \(Self.maximumDataLength)"
            )
        }
    }

    func write(to writer: inout ByteWriter) {
        writer.write(profile)
        writer.write(UInt16(truncatingIfNeeded: data.count / 4))
        writer.write(data)
    }
}
