/// A failure of the ingest protocol or its tools: a code a caller can switch on, and a message that
/// names the field and the byte offset where the input went wrong, fit to show a user as it is.
///
/// Modelled on SwiftNIO's errors: a struct with an extensible code rather than an enum, so new codes
/// do not break callers' exhaustive switches.
public struct IngestError: Error, Hashable, Sendable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let name: String
        public init(_ name: String) { self.name = name }
        public var description: String { name }

        /// The four bytes at the start of a message are not `RTCI`: the stream is not ours, or
        /// framing was lost.
        public static let badMagic = Code("bad-magic")
        /// A hello names a protocol version this side does not speak.
        public static let versionMismatch = Code("version-mismatch")
        /// The header's message type is not one this version defines.
        public static let unknownType = Code("unknown-type")
        /// The header's payload length is above the limit for its message type.
        public static let payloadTooLarge = Code("payload-too-large")
        /// A picture is wider or taller than the limits allow.
        public static let dimensionsTooLarge = Code("dimensions-too-large")
        /// The payload is too short to hold the fixed fields of its message type.
        public static let impossibleLength = Code("impossible-length")
        /// The payload length disagrees with what the body's format and sizes imply.
        public static let lengthMismatch = Code("length-mismatch")
        /// A plane's stride is below the bytes of one of its rows, or too far above them.
        public static let strideTooSmall = Code("stride-too-small")
        /// A field holds a value outside its rules (a reserved byte that is not zero, a pixel
        /// format, rotation, channel count, sample rate or text that is not allowed).
        public static let invalidField = Code("invalid-field")
        /// The bytes end before the message does.
        public static let truncated = Code("truncated")
        /// A well-formed message that is not allowed here (media before the hello, a second
        /// hello, a hello from the wrong role).
        public static let unexpectedMessage = Code("unexpected-message")
        /// An `unix:/path` or `tcp:HOST:PORT` address that cannot be used.
        public static let invalidAddress = Code("invalid-address")
        /// A socket could not be opened, bound, connected, read or written.
        public static let connection = Code("connection")
        /// The peer did not do what it had to within the time allowed.
        public static let timeout = Code("timeout")
        /// A configuration or command-line option that cannot work.
        public static let invalidOption = Code("invalid-option")
        /// The peer answered with an end message instead of going on; ``IngestError/endReason``
        /// says why.
        public static let refused = Code("refused")
    }

    public var code: Code
    public var message: String
    /// Offset from the first byte of the message (its header), when the error is about a byte.
    public var byteOffset: Int?
    /// The reason the peer gave, when it ended the session (code ``Code/refused``).
    public var endReason: IngestEndReason?

    public init(_ code: Code, _ message: String, byteOffset: Int? = nil) {
        self.code = code
        self.message = message
        self.byteOffset = byteOffset
        self.endReason = nil
    }

    /// An error about the field `field` at `offset` bytes from the start of the message; the
    /// message reads "field at byte N: what is wrong".
    static func field(_ code: Code, _ field: String, at offset: Int, _ problem: String) -> IngestError {
        IngestError(code, "\(field) at byte \(offset): \(problem)", byteOffset: offset)
    }

    public var description: String { "\(code): \(message)" }

    /// The end reason a host sends a capture client whose input failed with this error.
    public var reasonForPeer: IngestEndReason {
        switch code {
        case .versionMismatch: .versionMismatch
        case .unknownType: .unknownMessageType
        case .payloadTooLarge, .dimensionsTooLarge: .tooLarge
        case .unexpectedMessage: .unexpectedMessage
        case .timeout: .timeout
        default: .malformedMessage
        }
    }
}
