/// Why a session description could not be parsed or written.
///
/// Parse errors name the 1-based line (`line`) and repeat it at the start of `message`
/// ("line 4: m= line has a non-numeric port 'abc'"), so the message alone is enough for a user.
public struct SDPError: Error, Sendable, Equatable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let name: String

        init(_ name: String) { self.name = name }

        public var description: String { name }

        /// The input exceeds `SDPParser.Limits.maximumBytes`.
        public static let tooLarge = Code("too_large")
        /// The input has more lines than `SDPParser.Limits.maximumLines`.
        public static let tooManyLines = Code("too_many_lines")
        /// A line is longer than `SDPParser.Limits.maximumLineLength`.
        public static let lineTooLong = Code("line_too_long")
        /// The input is not UTF-8, or contains NUL or a bare carriage return.
        public static let invalidCharacters = Code("invalid_characters")
        /// A line is not `<letter>=<value>`, or its value does not follow the grammar of its type.
        public static let malformedLine = Code("malformed_line")
        /// A line appears where RFC 8866's order does not allow it, or twice where once is allowed.
        public static let unexpectedLine = Code("unexpected_line")
        /// A required line (v=, o=, s=, t=) is absent.
        public static let missingLine = Code("missing_line")
        /// Valid SDP this parser deliberately does not handle (multicast, key methods but inline:).
        public static let unsupported = Code("unsupported")
        /// The writer was given a description it cannot write faithfully (for example a line break
        /// inside a value, or a value the parser could not read back).
        public static let invalidDescription = Code("invalid_description")
        /// An H.264 parameter set is too short or not the NAL unit type its role needs.
        public static let invalidParameterSet = Code("invalid_parameter_set")
        /// An `ice-ufrag` or `ice-pwd` outside RFC 8839 section 5.4's grammar.
        public static let invalidICECredentials = Code("invalid_ice_credentials")
    }

    public var code: Code
    /// 1-based line number for parse errors, nil when the problem is not tied to one line.
    public var line: Int?
    public var message: String

    public init(code: Code, line: Int? = nil, message: String) {
        self.code = code
        self.line = line
        self.message = message
    }

    public var description: String { "SDPError(\(code.name)): \(message)" }

    /// A parse error at `line`; the message gets the "line N: " prefix.
    static func at(_ line: Int, _ code: Code, _ problem: String) -> SDPError {
        SDPError(code: code, line: line, message: "line \(line): \(problem)")
    }

    /// A writer error about one field of the description.
    static func invalid(_ problem: String) -> SDPError {
        SDPError(code: .invalidDescription, message: problem)
    }
}

/// Quotes untrusted text for an error message: at most 40 characters, control and non-ASCII
/// characters shown as `?`, so a message never carries terminal escapes or a wall of input.
func quoted(_ text: some StringProtocol) -> String {
    var out = "'"
    var count = 0
    for scalar in text.unicodeScalars {
        if count == 40 {
            out += "..."
            break
        }
        out.unicodeScalars.append(scalar.value >= 0x20 && scalar.value < 0x7F ? scalar : "?")
        count += 1
    }
    return out + "'"
}
