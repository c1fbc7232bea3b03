/// An error from the CongestionControl module: a code a caller can switch on, and a message that
/// names the value that was wrong, fit to show a user as it is.
///
/// Shaped like `RTPError` (a struct with an extensible code rather than an enum, as SwiftNIO's
/// errors are), so that new codes do not break callers' exhaustive switches. A type of its own,
/// though this module reads RTP's feedback: its errors are about rates and times, not bytes.
public struct CongestionControlError: Error, Hashable, Sendable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let name: String
        public init(_ name: String) { self.name = name }
        public var description: String { name }

        /// A configuration value (bound, gain, window, time) is out of its range.
        public static let invalidConfiguration = Code("invalid-configuration")
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }

    static func invalid(_ message: String) -> CongestionControlError {
        CongestionControlError(.invalidConfiguration, message)
    }
}
