/// Why a WHIP request failed: a code a caller can switch on, the HTTP status when there was one, and
/// a message fit to log as it is (it names the URL, status or header, and never the bearer token).
///
/// A struct with an extensible code rather than an enum, like `ICEError` and `DTLSError`, so new
/// codes do not break callers' exhaustive switches.
public struct WHIPError: Error, Hashable, Sendable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let name: String
        public init(_ name: String) { self.name = name }
        public var description: String { name }

        /// A URL that is not an absolute http or https URL, or a Location that does not resolve.
        public static let invalidURL = Code("invalid-url")
        /// A configuration value that cannot work (a bearer token outside RFC 6750's syntax).
        public static let invalidConfiguration = Code("invalid-configuration")
        /// The TCP connection could not be opened, or it broke before the response was complete.
        public static let connection = Code("connection")
        /// No connection within the connect timeout, or no complete response within the response timeout.
        public static let timeout = Code("timeout")
        /// The TLS handshake failed (an untrusted or mismatched certificate), or the trusted
        /// certificates could not be read.
        public static let tls = Code("tls")
        /// A final answer that is not the one the request wants (4xx, 5xx, 301/302/303, ...).
        public static let status = Code("status")
        /// A redirect to a URL already seen in the same chain.
        public static let redirectLoop = Code("redirect-loop")
        /// More redirects than `Configuration.maximumRedirects`.
        public static let tooManyRedirects = Code("too-many-redirects")
        /// A redirect or a Location from https to http, which would send the token in the clear.
        public static let insecureRedirect = Code("insecure-redirect")
        /// A response that does not follow HTTP or RFC 9725 (no Location, not 201, not UTF-8, ...).
        public static let malformedResponse = Code("malformed-response")
        /// Response headers or body over the configured limits.
        public static let responseTooLarge = Code("response-too-large")
        /// A body whose Content-Type is not the one RFC 9725 prescribes.
        public static let unsupportedContentType = Code("unsupported-content-type")
        /// The task making the request was cancelled.
        public static let cancelled = Code("cancelled")
    }

    public var code: Code
    /// The HTTP status of the response the error is about, when there was one.
    public var status: Int?
    public var message: String

    public init(_ code: Code, _ message: String, status: Int? = nil) {
        self.code = code
        self.message = message
        self.status = status
    }

    /// A 4xx answer other than 408 (Request Timeout) and 429 (Too Many Requests): the request itself
    /// is refused (bad token, unknown endpoint, rejected offer), so retrying it cannot help.
    public var isClientError: Bool {
        status.map(WHIPSessionStateMachine.refusesForGood(status:)) ?? false
    }

    public var description: String {
        if let status {
            return "WHIPError(\(code), \(status)): \(message)"
        }
        return "WHIPError(\(code)): \(message)"
    }
}
