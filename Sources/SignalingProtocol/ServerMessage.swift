/// A line the server sends: the message, plus the `id` of the request it answers, if any.
public struct ServerEnvelope: Hashable, Sendable {
    public var id: RequestID?
    public var message: ServerMessage

    public init(id: RequestID? = nil, _ message: ServerMessage) {
        self.id = id
        self.message = message
    }
}

/// Everything the server can say to a client (Docs/signaling.md, "Server to client").
public enum ServerMessage: Hashable, Sendable {
    // Replies.
    case joined(Joined)
    case pong
    case ack(Ack)
    case subscribed(Subscribed)
    case error(SignalingError)
    // Events.
    case memberJoined(MemberJoined)
    case memberLeft(MemberLeft)
    case streamPublished(StreamPublished)
    case streamUnpublished(StreamUnpublished)
    case subscribeRequest(SubscribeRequest)
    case unsubscribed(Unsubscribed)
    case subscriberLeft(SubscriberLeft)
    case signal(Signal)
    case streamState(StreamStateChanged)
    case goodbye(Goodbye)

    /// The wire name in the `type` field.
    public var type: String {
        switch self {
        case .joined: return "joined"
        case .pong: return "pong"
        case .ack: return "ack"
        case .subscribed: return "subscribed"
        case .error: return "error"
        case .memberJoined: return "member-joined"
        case .memberLeft: return "member-left"
        case .streamPublished: return "stream-published"
        case .streamUnpublished: return "stream-unpublished"
        case .subscribeRequest: return "subscribe-request"
        case .unsubscribed: return "unsubscribed"
        case .subscriberLeft: return "subscriber-left"
        case .signal: return "signal"
        case .streamState: return "stream-state"
        case .goodbye: return "goodbye"
        }
    }

    /// The reply to `join`: who is in the room and what they publish.
    public struct Joined: Hashable, Sendable, Codable {
        public var version: Int
        public var room: RoomID
        public var uid: MemberID
        public var role: Role
        public var owner: MemberID?
        /// The other members, in the order they joined.
        public var members: [Member]
        /// The other members' streams, in the order they were published.
        public var streams: [PublishedStream]
        /// Seconds of silence after which the server drops this connection; ping well within it.
        public var idleTimeout: Double
        /// A secret that lets a reconnecting client take over this uid (``ClientMessage/Join/resume``).
        public var resume: String

        public init(
            version: Int = SignalingProtocol.version,
            room: RoomID,
            uid: MemberID,
            role: Role,
            members: [Member],
            streams: [PublishedStream],
            idleTimeout: Double,
            resume: String
        ) {
            self.version = version
            self.room = room
            self.uid = uid
            self.role = role
            self.owner = uid.owner
            self.members = members
            self.streams = streams
            self.idleTimeout = idleTimeout
            self.resume = resume
        }
    }

    /// The success reply to a request that returns nothing else; `of` names the request's type.
    public struct Ack: Hashable, Sendable, Codable {
        public var of: String

        public init(of: String) {
            self.of = of
        }
    }

    /// The reply to `subscribe`, once the publisher answered: the SDP to open.
    public struct Subscribed: Hashable, Sendable, Codable {
        public var publisher: MemberID
        public var kind: StreamKind
        public var sdp: String

        public init(publisher: MemberID, kind: StreamKind, sdp: String) {
            self.publisher = publisher
            self.kind = kind
            self.sdp = sdp
        }
    }

    public struct MemberJoined: Hashable, Sendable, Codable {
        public var member: Member

        public init(member: Member) {
            self.member = member
        }
    }

    public struct MemberLeft: Hashable, Sendable, Codable {
        public var uid: MemberID
        public var reason: LeaveReason

        public init(uid: MemberID, reason: LeaveReason) {
            self.uid = uid
            self.reason = reason
        }
    }

    public struct StreamPublished: Hashable, Sendable, Codable {
        public var stream: PublishedStream

        public init(stream: PublishedStream) {
            self.stream = stream
        }
    }

    public struct StreamUnpublished: Hashable, Sendable, Codable {
        public var uid: MemberID
        public var kind: StreamKind

        public init(uid: MemberID, kind: StreamKind) {
            self.uid = uid
            self.kind = kind
        }
    }

    /// Sent to a publisher: a subscriber wants `kind`, delivered as `receive` says.
    /// The publisher replies with `subscribe-answer` or `subscribe-reject`.
    public struct SubscribeRequest: Hashable, Sendable, Codable {
        public var subscriber: MemberID
        public var kind: StreamKind
        public var receive: ReceiveDescription

        public init(subscriber: MemberID, kind: StreamKind, receive: ReceiveDescription) {
            self.subscriber = subscriber
            self.kind = kind
            self.receive = receive
        }
    }

    /// Sent to a subscriber whose active subscription ended without it asking.
    public struct Unsubscribed: Hashable, Sendable, Codable {
        public var publisher: MemberID
        public var kind: StreamKind
        public var reason: EndReason

        public init(publisher: MemberID, kind: StreamKind, reason: EndReason) {
            self.publisher = publisher
            self.kind = kind
            self.reason = reason
        }
    }

    /// Sent to a publisher: stop sending `kind` to `subscriber`.
    public struct SubscriberLeft: Hashable, Sendable, Codable {
        public var subscriber: MemberID
        public var kind: StreamKind
        public var reason: EndReason

        public init(subscriber: MemberID, kind: StreamKind, reason: EndReason) {
            self.subscriber = subscriber
            self.kind = kind
            self.reason = reason
        }
    }

    /// A relayed `signal`: `from` is filled in by the server, so it cannot be forged.
    public struct Signal: Hashable, Sendable, Codable {
        public var from: MemberID
        public var payload: JSONValue

        public init(from: MemberID, payload: JSONValue) {
            self.from = from
            self.payload = payload
        }
    }

    /// A publisher's `stream-state`, relayed to the other members: `uid`'s `kind` stream is still
    /// or moves again.
    public struct StreamStateChanged: Hashable, Sendable, Codable {
        public var uid: MemberID
        public var kind: StreamKind
        public var state: StreamState

        public init(uid: MemberID, kind: StreamKind, state: StreamState) {
            self.uid = uid
            self.kind = kind
            self.state = state
        }
    }

    /// The last line before the server closes the connection, saying why.
    public struct Goodbye: Hashable, Sendable, Codable {
        public var reason: GoodbyeReason
        public var message: String

        public init(reason: GoodbyeReason, message: String) {
            self.reason = reason
            self.message = message
        }
    }
}
