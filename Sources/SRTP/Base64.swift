/// RFC 4648 §4 base64 with padding, the encoding RFC 4568 §6.1 prescribes for `inline:` key material.
///
/// Written here rather than taken from Foundation so the SRTP module depends on libsrtp alone, and so
/// decoding is canonical: only the one spelling `encode` produces is accepted (padding required,
/// unused trailing bits zero), which keeps "decode, then encode" an exact round trip.
enum Base64 {
    private static let alphabet: [UInt8] = Array(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8
    )

    static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let remaining = bytes.count - index
            let b0 = UInt32(bytes[index])
            let b1 = remaining > 1 ? UInt32(bytes[index + 1]) : 0
            let b2 = remaining > 2 ? UInt32(bytes[index + 2]) : 0
            let group = (b0 << 16) | (b1 << 8) | b2
            out.append(alphabet[Int((group >> 18) & 0x3F)])
            out.append(alphabet[Int((group >> 12) & 0x3F)])
            out.append(remaining > 1 ? alphabet[Int((group >> 6) & 0x3F)] : UInt8(ascii: "="))
            out.append(remaining > 2 ? alphabet[Int(group & 0x3F)] : UInt8(ascii: "="))
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Returns nil for anything but canonical padded base64.
    static func decode(_ text: some StringProtocol) -> [UInt8]? {
        let chars = Array(text.utf8)
        guard chars.count % 4 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(chars.count / 4 * 3)
        var index = 0
        while index < chars.count {
            // Only the last group may end in one or two "=".
            var padding = 0
            if index + 4 == chars.count && chars[index + 3] == UInt8(ascii: "=") {
                padding = chars[index + 2] == UInt8(ascii: "=") ? 2 : 1
            }
            var group: UInt32 = 0
            for offset in 0..<4 {
                let char = chars[index + offset]
                if offset >= 4 - padding {
                    group <<= 6
                    continue
                }
                guard let value = sextet(char) else { return nil }
                group = (group << 6) | UInt32(value)
            }
            out.append(UInt8(truncatingIfNeeded: group >> 16))
            if padding < 2 { out.append(UInt8(truncatingIfNeeded: group >> 8)) }
            if padding < 1 { out.append(UInt8(truncatingIfNeeded: group)) }
            // Canonical form: the bits the padding stands for must be zero.
            if padding == 1 && group & 0xFF != 0 { return nil }
            if padding == 2 && group & 0xFFFF != 0 { return nil }
            index += 4
        }
        return out
    }

    private static func sextet(_ char: UInt8) -> UInt8? {
        switch char {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return char - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return char - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return char - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"): return 62
        case UInt8(ascii: "/"): return 63
        default: return nil
        }
    }
}
