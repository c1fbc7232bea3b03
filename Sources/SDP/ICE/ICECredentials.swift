/// RFC 8839 §5.4 `a=ice-ufrag` and `a=ice-pwd`: the short-term credentials that authenticate
/// every connectivity check of one ICE session.
///
/// The password is a shared secret between the two agents for the session's lifetime: it prints
/// redacted.
public struct ICECredentials: Sendable, Hashable, CustomStringConvertible {
    /// `ice-ufrag = 4*256ice-char`.
    public static let ufragLengths = 4...256
    /// `ice-pwd = 22*256ice-char`.
    public static let passwordLengths = 22...256

    public let ufrag: String
    public let password: String

    /// Checks both against the RFC 8839 §5.4 grammar (`ice-char = ALPHA / DIGIT / "+" / "/"`).
    public init(ufrag: String, password: String) throws(SDPError) {
        if let problem = Self.problem(with: ufrag, name: "ice-ufrag", lengths: Self.ufragLengths) {
            throw SDPError(code: .invalidICECredentials, message: problem)
        }
        if let problem = Self.problem(with: password, name: "ice-pwd", lengths: Self.passwordLengths) {
            throw SDPError(code: .invalidICECredentials, message: problem)
        }
        self.ufrag = ufrag
        self.password = password
    }

    package init(unchecked ufrag: String, _ password: String) {
        self.ufrag = ufrag
        self.password = password
    }

    /// Fresh credentials from the system CSPRNG: 8 and 24 ice-chars (48 and 144 bits, above
    /// RFC 8445 §5.3's 24 and 128).
    public static func random() -> ICECredentials {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".unicodeScalars)
        func draw(_ count: Int) -> String {
            var text = ""
            for _ in 0..<count { text.unicodeScalars.append(alphabet[Int.random(in: 0..<64, using: &generator)]) }
            return text
        }
        return ICECredentials(unchecked: draw(8), draw(24))
    }

    public var description: String { "ICECredentials(ufrag: \(ufrag), password: <redacted>)" }

    /// What is wrong with an ufrag or password, or nil when it follows the grammar. Lengths are
    /// in characters; ice-chars are ASCII, so characters and bytes agree.
    package static func problem(with text: some StringProtocol, name: String, lengths: ClosedRange<Int>) -> String? {
        guard text.utf8.allSatisfy(isICEChar) else {
            return "\(name) has a character other than letters, digits, '+' and '/'"
        }
        guard lengths.contains(text.utf8.count) else {
            return
                "\(name) has \(text.utf8.count) characters; RFC 8839 needs \(lengths.lowerBound) to \(lengths.upperBound)"
        }
        return nil
    }

    /// RFC 8839 `ice-char = ALPHA / DIGIT / "+" / "/"`.
    package static func isICEChar(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, UInt8(ascii: "+"), UInt8(ascii: "/"): true
        default: false
        }
    }
}
