/// A failure a peer can act on: a stable, machine-readable code plus a message fit to show a user.
///
/// The same type travels on the wire (the `error` message carries `code` and `message`) and is thrown
/// by the client library, so an app sees exactly what the server said. The code set is open: new codes
/// can be added without breaking old peers, which treat an unknown code as a plain failure.
public struct SignalingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// An extensible error code; its raw value is what goes on the wire (`"uid-taken"`).
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String

        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        public var description: String { rawValue }

        /// The line is not a JSON object (malformed JSON, invalid UTF-8, or another JSON value).
        public static let badJSON = Code(rawValue: "bad-json")
        /// The `type` names no message this server knows.
        public static let unknownType = Code(rawValue: "unknown-type")
        /// A required field is absent.
        public static let missingField = Code(rawValue: "missing-field")
        /// A field has the wrong JSON type or a value outside its rules.
        public static let invalidField = Code(rawValue: "invalid-field")
        /// A room name breaks the 1–64 `[A-Za-z0-9_-]` rule.
        public static let invalidRoom = Code(rawValue: "invalid-room")
        /// A uid breaks the 1–64 `[A-Za-z0-9_-]` rule.
        public static let invalidUID = Code(rawValue: "invalid-uid")
        /// `join` carried a protocol version the server does not speak.
        public static let versionMismatch = Code(rawValue: "version-mismatch")
        /// The server needs a token and the join's token is missing, wrong, expired or for another room.
        public static let unauthorized = Code(rawValue: "unauthorized")
        /// Another live connection already holds this uid in this room.
        public static let uidTaken = Code(rawValue: "uid-taken")
        /// The room has reached the server's member limit.
        public static let roomFull = Code(rawValue: "room-full")
        /// The server has reached its room limit and the join would create another room.
        public static let tooManyRooms = Code(rawValue: "too-many-rooms")
        /// The request needs a joined room and this connection has none.
        public static let notJoined = Code(rawValue: "not-joined")
        /// `join` on a connection that is already in a room.
        public static let alreadyJoined = Code(rawValue: "already-joined")
        /// The member's role or identity does not allow this request.
        public static let notAllowed = Code(rawValue: "not-allowed")
        /// The uid named by the request is not in the room.
        public static let noSuchMember = Code(rawValue: "no-such-member")
        /// The publisher does not publish the requested stream.
        public static let notPublishing = Code(rawValue: "not-publishing")
        /// The request refers to a subscription that does not exist (or is no longer pending).
        public static let noSuchSubscription = Code(rawValue: "no-such-subscription")
        /// The publisher answered the subscribe request with a rejection.
        public static let subscribeRejected = Code(rawValue: "subscribe-rejected")
        /// The publisher left while the subscribe request was waiting for its answer.
        public static let publisherGone = Code(rawValue: "publisher-gone")
        /// The connection sent more messages than the server's per-connection rate allows.
        public static let rateLimited = Code(rawValue: "rate-limited")
        /// A line exceeded the 64 KiB limit; the server closes the connection after this error.
        public static let lineTooLong = Code(rawValue: "line-too-long")
        /// What the request would make the server send is longer than a line may be: a relayed
        /// offer, answer or signal, or the room state a newcomer would get after a `publish`.
        /// The request is refused and nothing was sent; the connection stays.
        public static let tooLarge = Code(rawValue: "too-large")
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }

    /// A `join` of another protocol version: the same words wherever it is caught.
    public static func versionMismatch(client version: Int) -> SignalingError {
        SignalingError(
            .versionMismatch,
            "this server speaks protocol version \(SignalingProtocol.version); the client sent version \(version)"
        )
    }
}
