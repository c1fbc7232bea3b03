#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Character classes and number forms of the RFC 8866 §9 grammar, shared by parser and writer so
/// that whatever the writer accepts the parser reads back unchanged.
enum SDPSyntax {
    /// RFC 8866 `token-char`: visible ASCII except the separators `"(),/:;<=>?@[\]`.
    static func isToken(_ text: some StringProtocol) -> Bool {
        guard !text.isEmpty else { return false }
        return text.utf8.allSatisfy { byte in
            switch byte {
            case 0x21, 0x23...0x27, 0x2A...0x2B, 0x2D...0x2E, 0x30...0x39, 0x41...0x5A, 0x5E...0x7E: return true
            default: return false
            }
        }
    }

    /// Visible ASCII (%x21-7E): no spaces, no control characters. Used for space-separated fields.
    static func isVisible(_ text: some StringProtocol) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { (0x21...0x7E).contains($0) }
    }

    /// RFC 8866 `byte-string`/`text`: anything but NUL, CR and LF (which would end the line).
    static func isText(_ text: some StringProtocol) -> Bool {
        text.utf8.allSatisfy { $0 != 0 && $0 != 0x0D && $0 != 0x0A }
    }

    /// A decimal number of ASCII digits only: Swift's `Int(_:)` alone would accept "+5".
    static func decimal<T: FixedWidthInteger & UnsignedInteger>(_ text: some StringProtocol, as: T.Type) -> T? {
        guard !text.isEmpty, text.utf8.count <= 20, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
            return nil
        }
        return T(text, radix: 10)
    }

    /// A dotted-quad IPv4 literal (four decimal parts 0-255, no leading "+").
    static func isIPv4Literal(_ text: some StringProtocol) -> Bool {
        let parts = split(Substring(text), on: ".")
        guard parts.count == 4 else { return false }
        return parts.allSatisfy { $0.utf8.count <= 3 && decimal($0, as: UInt16.self).map { $0 <= 255 } == true }
    }

    /// An IPv6 literal as inet_pton(3) reads it.
    static func isIPv6Literal(_ text: some StringProtocol) -> Bool {
        guard text.utf8.count <= 45, text.utf8.contains(UInt8(ascii: ":")), isVisible(text) else { return false }
        var storage = in6_addr()
        return String(text).withCString { inet_pton(AF_INET6, $0, &storage) } == 1
    }

    /// RFC 8866 `proto`: tokens joined by "/" (`RTP/SAVP`, `UDP/TLS/RTP/SAVPF`).
    static func isProtocol(_ text: some StringProtocol) -> Bool {
        split(Substring(text), on: "/").allSatisfy { isToken($0) }
    }

    /// An `a=fmtp` item name: visible characters except `;` and `=`, which delimit items.
    static func isFormatParameterName(_ text: some StringProtocol) -> Bool {
        isVisible(text) && !text.utf8.contains(UInt8(ascii: ";")) && !text.utf8.contains(UInt8(ascii: "="))
    }

    /// An `a=fmtp` item value: text without `;` and without surrounding spaces (the parser trims
    /// them, so a value with them could not come back unchanged). May be empty.
    static func isFormatParameterValue(_ text: some StringProtocol) -> Bool {
        isText(text) && !text.utf8.contains(UInt8(ascii: ";")) && text.utf8.first != 0x20
            && Substring(text).utf8.last != 0x20
    }

    /// RFC 4568 `crypto-suite = 1*(ALPHA / DIGIT / "_")`.
    static func isCryptoSuite(_ text: some StringProtocol) -> Bool {
        !text.isEmpty
            && text.utf8.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || byte == UInt8(ascii: "_")
            }
    }

    /// RFC 4568 `lifetime = ["2^"] 1*(DIGIT)`.
    static func isKeyLifetime(_ text: some StringProtocol) -> Bool {
        let text = Substring(text)
        let digits = text.utf8.starts(with: "2^".utf8) ? Substring(text.utf8.dropFirst(2)) : text
        return decimal(digits, as: UInt64.self) != nil
    }

    /// RFC 4568 `mki = mki-value ":" mki-length`, `1*DIGIT ":" 1*3DIGIT`.
    static func isMKI(_ text: some StringProtocol) -> Bool {
        let parts = split(Substring(text), on: ":")
        return parts.count == 2 && decimal(parts[0], as: UInt64.self) != nil && parts[1].utf8.count <= 3
            && decimal(parts[1], as: UInt16.self) != nil
    }

    // Splitting works on Unicode scalars, not Characters: a separator followed by a combining mark
    // is one Character, and grapheme-based splitting would then disagree with the byte-level
    // grammar (and with the writer's checks).

    /// Splits at every `separator`, keeping empty fields (a double space is an empty field).
    static func split(_ text: Substring, on separator: Unicode.Scalar, omittingEmpty: Bool = false) -> [Substring] {
        text.unicodeScalars.split(separator: separator, omittingEmptySubsequences: omittingEmpty).map {
            Substring($0)
        }
    }

    /// Splits at the first `separator`; nil when there is none.
    static func splitOnce(_ text: Substring, on separator: Unicode.Scalar) -> (Substring, Substring)? {
        let scalars = text.unicodeScalars
        guard let index = scalars.firstIndex(of: separator) else { return nil }
        return (Substring(scalars[..<index]), Substring(scalars[scalars.index(after: index)...]))
    }

    /// Drops leading and trailing spaces (U+0020 only).
    static func trimmingSpaces(_ text: Substring) -> Substring {
        var scalars = text.unicodeScalars[...]
        while scalars.first == " " { scalars = scalars.dropFirst() }
        while scalars.last == " " { scalars = scalars.dropLast() }
        return Substring(scalars)
    }
}
