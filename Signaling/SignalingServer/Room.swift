import SignalingProtocol

/// Identifies one accepted connection for the lifetime of the server.
typealias ConnectionID = UInt64

/// One room's members, streams and subscriptions. Plain data: ``RoomRegistry`` owns and mutates it.
struct Room {
    var members: [MemberID: RoomMember] = [:]
    var subscriptions: [SubscriptionKey: SubscriptionState] = [:]
    /// Orders joins and publishes, so member and stream lists come out in the order things happened.
    private var sequence: UInt64 = 0

    mutating func nextSequence() -> UInt64 {
        sequence += 1
        return sequence
    }

    /// Members other than `uid`, in join order.
    func members(except uid: MemberID) -> [RoomMember] {
        members.values.filter { $0.uid != uid }.sorted { $0.joinOrder < $1.joinOrder }
    }

    /// Streams of members other than `uid`, in publish order.
    func streams(except uid: MemberID) -> [PublishedStream] {
        members.values.filter { $0.uid != uid }
            .flatMap { $0.streams.values }
            .sorted { $0.order < $1.order }
            .map(\.stream)
    }

    /// Subscriptions matching a predicate, in a stable order (publisher, kind, subscriber).
    func subscriptions(where predicate: (SubscriptionKey) -> Bool) -> [(SubscriptionKey, SubscriptionState)] {
        subscriptions.filter { predicate($0.key) }
            .sorted { $0.key < $1.key }
            .map { ($0.key, $0.value) }
    }
}

struct RoomMember {
    let uid: MemberID
    let role: Role
    let connection: ConnectionID
    let joinOrder: UInt64
    /// The secret a reconnecting client presents to take over this uid; never logged.
    let resume: String
    var streams: [StreamKind: OrderedStream] = [:]

    var asMember: Member { Member(uid: uid, role: role) }
}

struct OrderedStream {
    var order: UInt64
    var stream: PublishedStream
}

struct SubscriptionKey: Hashable, Comparable {
    let publisher: MemberID
    let kind: StreamKind
    let subscriber: MemberID

    static func < (lhs: SubscriptionKey, rhs: SubscriptionKey) -> Bool {
        (lhs.publisher, lhs.kind, lhs.subscriber) < (rhs.publisher, rhs.kind, rhs.subscriber)
    }
}

enum SubscriptionState: Equatable {
    /// The publisher has the request and has not answered; `requestID` is the subscriber's `id`.
    case pending(requestID: RequestID?)
    /// The publisher answered; it is sending to the subscriber.
    case active
}
