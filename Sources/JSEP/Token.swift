/// RFC 8866 §9 `token`: visible ASCII except the separators `"(),/:;<=>?@[\]`. Mids, group
/// semantics, msid ids and many attribute values are tokens.
enum Token {
    static func isToken(_ text: some StringProtocol) -> Bool {
        !text.isEmpty
            && text.utf8.allSatisfy { byte in
                switch byte {
                case 0x21, 0x23...0x27, 0x2A...0x2B, 0x2D...0x2E, 0x30...0x39, 0x41...0x5A, 0x5E...0x7E: true
                default: false
                }
            }
    }

    /// Visible ASCII (%x21-7E), as in a URI or a byte-string without spaces.
    static func isVisible(_ text: some StringProtocol) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { (0x21...0x7E).contains($0) }
    }
}
