/// The open sets of reasons the server gives in events; unknown values decode as themselves, so a
/// newer server can add reasons without breaking older clients.

/// Why a member left a room (`member-left`). Open set: unknown values decode as themselves.
public struct LeaveReason: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    /// The member sent `leave`.
    public static let left = LeaveReason(rawValue: "left")
    /// The member's connection closed without `leave`.
    public static let disconnected = LeaveReason(rawValue: "disconnected")
    /// The member was silent for longer than the idle timeout.
    public static let timeout = LeaveReason(rawValue: "timeout")
    /// A new connection took over the uid with the `resume` secret.
    public static let replaced = LeaveReason(rawValue: "replaced")
    /// The server closed the member's connection for misbehaving (line too long, garbage, too slow).
    public static let dropped = LeaveReason(rawValue: "dropped")

    public init(from decoder: any Decoder) throws {
        self.rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

/// Why a subscription ended (`unsubscribed`, `subscriber-left`). Open set.
public struct EndReason: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    /// The subscriber sent `unsubscribe`.
    public static let unsubscribed = EndReason(rawValue: "unsubscribed")
    /// The subscriber left the room or its connection went away.
    public static let subscriberLeft = EndReason(rawValue: "subscriber-left")
    /// The publisher withdrew the stream with `unpublish`.
    public static let streamUnpublished = EndReason(rawValue: "stream-unpublished")
    /// The publisher left the room or its connection went away.
    public static let publisherLeft = EndReason(rawValue: "publisher-left")

    public init(from decoder: any Decoder) throws {
        self.rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

/// Why the server is closing the connection (`goodbye`). Open set.
public struct GoodbyeReason: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    /// The server is shutting down; reconnect later.
    public static let serverShutdown = GoodbyeReason(rawValue: "server-shutdown")
    /// Nothing arrived for longer than the idle timeout.
    public static let idleTimeout = GoodbyeReason(rawValue: "idle-timeout")
    /// A line exceeded the 64 KiB limit.
    public static let lineTooLong = GoodbyeReason(rawValue: "line-too-long")
    /// Too many bad messages in a row.
    public static let tooManyErrors = GoodbyeReason(rawValue: "too-many-errors")
    /// Another connection took over this uid with the `resume` secret; do not reconnect.
    public static let replaced = GoodbyeReason(rawValue: "replaced")
    /// The server holds its most connections (`--max-connections`, or what its file descriptor
    /// limit allows); the connection was refused. Reconnect later.
    public static let tooManyConnections = GoodbyeReason(rawValue: "too-many-connections")

    public init(from decoder: any Decoder) throws {
        self.rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
