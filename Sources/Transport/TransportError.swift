#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A socket-level failure, with the system's own words for it.
public struct TransportError: Error, Hashable, Sendable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let name: String
        public init(_ name: String) { self.name = name }
        public var description: String { name }
        public static let invalidAddress = Code("invalid-address")
        public static let socket = Code("socket")
        public static let bind = Code("bind")
        public static let send = Code("send")
        public static let receive = Code("receive")
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// An error carrying `errno`'s text.
    static func system(_ code: Code, _ what: String) -> TransportError {
        TransportError(code, "\(what): \(String(cString: strerror(errno)))")
    }

    public var description: String { "\(code): \(message)" }
}
