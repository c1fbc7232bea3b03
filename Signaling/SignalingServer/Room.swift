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

/// Uids held for a publisher whose connection was lost (Docs/signaling.md, "Reconnecting").
///
/// Without the hold, a dropped publisher's uid was free at once: anyone could join as
/// `alice_sub` and publish in her place before her client was back. Held, the uid answers only
/// to the resume secret the publisher's client already has; it is freed when that client
/// rejoins, or when the grace period ends. Bounded: at most `limit` holds, the oldest dropped
/// first.
struct UIDReservations {
    struct Key: Hashable {
        let room: RoomID
        let uid: MemberID
    }

    struct Hold {
        let resume: String
        let until: ContinuousClock.Instant
    }

    private(set) var holds: [Key: Hold] = [:]

    /// Holds `uid` in `room` until `until`, for `resume`.
    mutating func hold(_ uid: MemberID, in room: RoomID, resume: String, until: ContinuousClock.Instant, limit: Int) {
        let now = ContinuousClock.now
        holds = holds.filter { $0.value.until > now }
        while holds.count >= max(1, limit), let oldest = holds.min(by: { $0.value.until < $1.value.until }) {
            holds[oldest.key] = nil
        }
        holds[Key(room: room, uid: uid)] = Hold(resume: resume, until: until)
    }

    /// The live hold on `uid` in `room`, if any (an expired one is dropped).
    mutating func hold(of uid: MemberID, in room: RoomID, at now: ContinuousClock.Instant) -> Hold? {
        let key = Key(room: room, uid: uid)
        guard let hold = holds[key] else { return nil }
        guard hold.until > now else {
            holds[key] = nil
            return nil
        }
        return hold
    }

    mutating func release(_ uid: MemberID, in room: RoomID) {
        holds[Key(room: room, uid: uid)] = nil
    }

    var count: Int { holds.count }
}
