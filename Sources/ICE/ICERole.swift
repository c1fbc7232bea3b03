/// The agent's ICE role (RFC 8445 §6.1.1). A full agent that offers is controlling, one that
/// answers is controlled; libnice resolves a role conflict (both claim the same role) itself, with
/// the tie-breaker and 487 Role Conflict.
public enum ICERole: Hashable, Sendable, CustomStringConvertible {
    /// Offerer: nominates the pair media goes over.
    case controlling
    /// Answerer: takes the controlling agent's nomination.
    case controlled

    public var description: String {
        switch self {
        case .controlling: return "controlling"
        case .controlled: return "controlled"
        }
    }
}

/// `a=ice-ufrag` and `a=ice-pwd` (RFC 8839 §5.4): a ufrag of 4 to 256 ice-chars, a password of 22
/// to 256 ice-chars (ALPHA / DIGIT / "+" / "/").
public struct ICECredentials: Hashable, Sendable, CustomStringConvertible {
    public var ufrag: String
    public var password: String

    public init(ufrag: String, password: String) throws {
        guard Self.isICEChars(ufrag, lengths: 4...256) else {
            throw ICEError(.invalidCredentials, "ice-ufrag must be 4 to 256 ice-chars")
        }
        guard Self.isICEChars(password, lengths: 22...256) else {
            throw ICEError(.invalidCredentials, "ice-pwd must be 22 to 256 ice-chars")
        }
        self.ufrag = ufrag
        self.password = password
    }

    /// The password is not printed.
    public var description: String { "ufrag \(ufrag)" }

    static func isICEChars(_ text: String, lengths: ClosedRange<Int>) -> Bool {
        let bytes = Array(text.utf8)
        guard lengths.contains(bytes.count) else { return false }
        return bytes.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "/"):
                return true
            default:
                return false
            }
        }
    }
}
