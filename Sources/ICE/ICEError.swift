/// Why an ICE operation failed: a code a caller can switch on and a message fit to log as it is
/// (it never contains the ICE password).
///
/// A struct with an extensible code rather than an enum, like `DTLSError` and `SRTPError`, so new
/// codes do not break callers' exhaustive switches.
public struct ICEError: Error, Hashable, Sendable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let name: String
        public init(_ name: String) { self.name = name }
        public var description: String { name }

        /// A configuration value that cannot work (an address that is not numeric, no TURN user, ...).
        public static let invalidConfiguration = Code("invalid-configuration")
        /// A name (STUN or TURN server) did not resolve to an IPv4 or IPv6 address.
        public static let unresolvable = Code("unresolvable")
        /// libnice refused to create the agent or its stream, or to gather.
        public static let agent = Code("agent")
        /// libnice or GLib could not be loaded (they are loaded by the first agent): a library or
        /// one of the functions used is missing. The message has the loader's words.
        public static let library = Code("library")
        /// ICE credentials outside RFC 8445's ice-chars and lengths.
        public static let invalidCredentials = Code("invalid-credentials")
        /// An `a=candidate` line that the RFC 8839 parser or libnice cannot read, or one too long.
        public static let invalidCandidate = Code("invalid-candidate")
        /// More remote candidates than `ICEAgent.maximumRemoteCandidates`.
        public static let tooManyCandidates = Code("too-many-candidates")
        /// A datagram longer than `ICEAgent.maximumDatagramLength`, or empty.
        public static let datagramTooLarge = Code("datagram-too-large")
        /// No pair is selected yet, or libnice could not send (consent lost, socket error).
        public static let notConnected = Code("not-connected")
        /// The agent was stopped.
        public static let stopped = Code("stopped")
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "ICEError(\(code)): \(message)" }
}
