/// A publish failure with a message fit to show as it is; its code says whether the user must
/// fix something before anything starts (`rtc-publish` exits 2) or the publishing failed (1).
public struct PublishError: Error, CustomStringConvertible, Sendable {
    /// What kind of failure; a struct, not an enum, so that codes can be added without breaking
    /// a caller's `switch`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let description: String
        private init(_ description: String) { self.description = description }

        /// Bad arguments or inputs, found before anything starts.
        public static let usage = Code("usage")
        /// Publishing failed: the room, a viewer, the WHIP endpoint, an input that went away.
        public static let failure = Code("failure")
    }

    public let code: Code
    public let description: String

    public init(_ code: Code, _ description: String) {
        self.code = code
        self.description = description
    }

    /// A failure while publishing (`Code.failure`).
    public init(_ description: String) { self.init(.failure, description) }
}
