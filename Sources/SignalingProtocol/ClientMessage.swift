/// A request line a client sends: an optional `id` the reply echoes, and the message itself.
public struct ClientRequest: Hashable, Sendable {
    public var id: RequestID?
    public var message: ClientMessage

    public init(id: RequestID? = nil, _ message: ClientMessage) {
        self.id = id
        self.message = message
    }
}

/// Everything a client can say to the server (Docs/signaling.md, "Client to server").
public enum ClientMessage: Hashable, Sendable {
    case join(Join)
    case leave
    case publish(Publish)
    case unpublish(Unpublish)
    case subscribe(Subscribe)
    case unsubscribe(Unsubscribe)
    case ping
    case signal(Signal)
    case subscribeAnswer(SubscribeAnswer)
    case subscribeReject(SubscribeReject)
    case streamState(StreamStateChange)

    /// The wire name in the `type` field.
    public var type: String {
        switch self {
        case .join: return "join"
        case .leave: return "leave"
        case .publish: return "publish"
        case .unpublish: return "unpublish"
        case .subscribe: return "subscribe"
        case .unsubscribe: return "unsubscribe"
        case .ping: return "ping"
        case .signal: return "signal"
        case .subscribeAnswer: return "subscribe-answer"
        case .subscribeReject: return "subscribe-reject"
        case .streamState: return "stream-state"
        }
    }

    /// Enter a room. `version` is the protocol version the client speaks.
    public struct Join: Hashable, Sendable, Codable {
        public static let maxTokenBytes = 256
        public static let maxResumeBytes = 64

        public var version: Int
        public var room: RoomID
        public var uid: MemberID
        public var role: Role
        /// Required when the server runs with a secret (see ``SignalingToken``).
        public var token: String?
        /// The `resume` secret from an earlier `joined`: lets this connection take over the uid from a
        /// connection the server still thinks is alive.
        public var resume: String?

        public init(
            version: Int = SignalingProtocol.version,
            room: RoomID,
            uid: MemberID,
            role: Role,
            token: String? = nil,
            resume: String? = nil
        ) {
            self.version = version
            self.room = room
            self.uid = uid
            self.role = role
            self.token = token
            self.resume = resume
        }

        enum CodingKeys: String, CodingKey {
            case version, room, uid, role, token, resume
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            // The version is checked first so an old or new client learns about the mismatch
            // rather than about a field it does not know.
            self.version = try container.decodeInteger(forKey: .version)
            self.room = try container.decode(RoomID.self, forKey: .room)
            self.uid = try container.decode(MemberID.self, forKey: .uid)
            self.role = try container.decode(Role.self, forKey: .role)
            self.token = try container.decodeIfPresent(String.self, forKey: .token).map {
                try FieldRules.text($0, maxBytes: Self.maxTokenBytes, allowEmpty: true, at: [CodingKeys.token])
            }
            self.resume = try container.decodeIfPresent(String.self, forKey: .resume).map {
                try FieldRules.text($0, maxBytes: Self.maxResumeBytes, allowEmpty: true, at: [CodingKeys.resume])
            }
        }
    }

    /// Announce a stream (or replace the announcement of the same kind).
    public struct Publish: Hashable, Sendable, Codable {
        public var stream: StreamDescription

        public init(stream: StreamDescription) {
            self.stream = stream
        }
    }

    /// Withdraw the stream of one kind.
    public struct Unpublish: Hashable, Sendable, Codable {
        public var kind: StreamKind

        public init(kind: StreamKind) {
            self.kind = kind
        }
    }

    /// Ask a publisher for one of its streams. Without `kind`, the publisher's only stream.
    public struct Subscribe: Hashable, Sendable, Codable {
        public var publisher: MemberID
        public var kind: StreamKind?
        public var receive: ReceiveDescription

        public init(publisher: MemberID, kind: StreamKind? = nil, receive: ReceiveDescription) {
            self.publisher = publisher
            self.kind = kind
            self.receive = receive
        }
    }

    /// End subscriptions to a publisher: one kind, or every kind when `kind` is absent.
    public struct Unsubscribe: Hashable, Sendable, Codable {
        public var publisher: MemberID
        public var kind: StreamKind?

        public init(publisher: MemberID, kind: StreamKind? = nil) {
            self.publisher = publisher
            self.kind = kind
        }
    }

    /// Relay `payload` to another member of the room, untouched.
    public struct Signal: Hashable, Sendable, Codable {
        public var to: MemberID
        public var payload: JSONValue

        public init(to: MemberID, payload: JSONValue) {
            self.to = to
            self.payload = payload
        }
    }

    /// A publisher's answer to a `subscribe-request`: the SDP the subscriber's player will open.
    public struct SubscribeAnswer: Hashable, Sendable, Codable {
        public var subscriber: MemberID
        public var kind: StreamKind
        public var sdp: String

        public init(subscriber: MemberID, kind: StreamKind, sdp: String) {
            self.subscriber = subscriber
            self.kind = kind
            self.sdp = sdp
        }

        enum CodingKeys: String, CodingKey {
            case subscriber, kind, sdp
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.subscriber = try container.decode(MemberID.self, forKey: .subscriber)
            self.kind = try container.decode(StreamKind.self, forKey: .kind)
            self.sdp = try FieldRules.sdp(try container.decode(String.self, forKey: .sdp), at: [CodingKeys.sdp])
        }
    }

    /// A publisher's refusal of a `subscribe-request`, e.g. no crypto suite in common.
    public struct SubscribeReject: Hashable, Sendable, Codable {
        public static let maxReasonBytes = 512

        public var subscriber: MemberID
        public var kind: StreamKind
        public var reason: String

        public init(subscriber: MemberID, kind: StreamKind, reason: String) {
            self.subscriber = subscriber
            self.kind = kind
            self.reason = reason
        }

        enum CodingKeys: String, CodingKey {
            case subscriber, kind, reason
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.subscriber = try container.decode(MemberID.self, forKey: .subscriber)
            self.kind = try container.decode(StreamKind.self, forKey: .kind)
            self.reason = try FieldRules.text(
                try container.decode(String.self, forKey: .reason),
                maxBytes: Self.maxReasonBytes,
                at: [CodingKeys.reason]
            )
        }
    }

    /// A publisher says its stream's picture stopped moving or moves again; the room is told, and
    /// remembers it for members who join later.
    public struct StreamStateChange: Hashable, Sendable, Codable {
        public var kind: StreamKind
        public var state: StreamState

        public init(kind: StreamKind, state: StreamState) {
            self.kind = kind
            self.state = state
        }
    }
}
