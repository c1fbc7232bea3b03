import Logging
import NIOCore
import SignalingProtocol

/// An rtc-signal client: joins a room, publishes or subscribes, and keeps doing so across dropped
/// connections and server restarts.
///
/// Requests are `async` and return once the server replied (or throw its ``SignalingError``).
/// Everything else the server says arrives on ``events``, which has a single consumer and buffers
/// without limit, so the app must keep reading it.
///
/// When the connection drops the client reconnects with backoff (``Configuration/reconnect``),
/// joins again with its `resume` secret, publishes its streams again and renews its subscriptions,
/// reporting each step as an event.
public actor SignalingClient {
    public nonisolated let events: AsyncStream<SignalingEvent>
    let eventSink: AsyncStream<SignalingEvent>.Continuation
    let configuration: Configuration
    let logger: Logger

    // The live connection and its background work.
    var connection: ClientConnection?
    var connectionTask: Task<Void, Never>?
    var pingTask: Task<Void, Never>?
    var reconnectTask: Task<Void, Never>?
    var generation: UInt64 = 0
    var lastHeard = ContinuousClock.now
    var pingInterval: Duration
    var lastGoodbye: ServerMessage.Goodbye?
    var isClosed = false

    // Requests waiting for their reply, by numeric id.
    var pending: [Int64: PendingRequest] = [:]
    var nextRequestID: Int64 = 0

    // What to restore after a reconnect.
    var membership: Membership?
    var publishedStreams: [StreamKind: StreamDescription] = [:]
    /// The last `stream-state` said per published stream; a still one is said again after a rejoin.
    var streamStates: [StreamKind: StreamState] = [:]
    var subscriptions: [SubscriptionTarget: WantedSubscription] = [:]

    struct Membership {
        var room: RoomID
        var uid: MemberID
        var role: Role
        var token: String?
        var resume: String?
    }

    struct PendingRequest {
        let continuation: CheckedContinuation<ServerEnvelope, any Error>
        let timeout: Task<Void, Never>
    }

    struct SubscriptionTarget: Hashable, Comparable {
        let publisher: MemberID
        let kind: StreamKind

        static func < (lhs: SubscriptionTarget, rhs: SubscriptionTarget) -> Bool {
            (lhs.publisher, lhs.kind) < (rhs.publisher, rhs.kind)
        }
    }

    /// A subscription the app asked for and has not cancelled, and where it stands on the server.
    struct WantedSubscription {
        enum State {
            case active
            case renewing
            /// The stream is gone for now; subscribe again when it is published.
            case waiting
        }

        var receive: ReceiveDescription
        var state: State
    }

    public init(configuration: Configuration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        self.pingInterval = configuration.pingInterval
        (self.events, self.eventSink) = AsyncStream.makeStream(of: SignalingEvent.self)
    }

    /// A client dropped without `close()` still lets go of its socket and background work.
    deinit {
        reconnectTask?.cancel()
        pingTask?.cancel()
        connection?.close()
        eventSink.finish()
    }

    // MARK: Connection

    /// Opens the connection. Fails at once if the server cannot be reached; reconnecting only
    /// starts after a connection that worked was lost.
    public func connect() async throws {
        guard !isClosed else { throw SignalingError(.closed, "the client was closed") }
        guard connection == nil else { return }
        try await establishConnection()
    }

    /// Leaves (if in a room), closes the connection and stops reconnecting. The event stream ends
    /// with `.closed(nil)`.
    public func close() async {
        guard !isClosed else { return }
        if membership != nil, connection != nil {
            _ = try? await request(.leave)
        }
        await shutDown(with: nil)
    }

    // MARK: Room

    /// Joins `room` as `uid`. The server replies with the members and streams already there.
    @discardableResult
    public func join(
        room: RoomID,
        uid: MemberID,
        role: Role,
        token: String? = nil
    ) async throws
        -> ServerMessage.Joined
    {
        let joined = try await sendJoin(Membership(room: room, uid: uid, role: role, token: token, resume: nil))
        return joined
    }

    /// Leaves the room; the connection stays open for another `join`.
    public func leave() async throws {
        _ = try await request(.leave)
        membership = nil
        publishedStreams.removeAll()
        streamStates.removeAll()
        subscriptions.removeAll()
    }

    // MARK: Publisher side

    /// Publishes (or re-announces) a stream; it is published again after every reconnect.
    public func publish(_ stream: StreamDescription) async throws {
        _ = try await request(.publish(.init(stream: stream)))
        publishedStreams[stream.kind] = stream
    }

    public func unpublish(_ kind: StreamKind) async throws {
        _ = try await request(.unpublish(.init(kind: kind)))
        publishedStreams[kind] = nil
        streamStates[kind] = nil
    }

    /// Tells the room that a published stream's picture went still or moves again. Remembered
    /// first, so a state said while the connection is down reaches the room after the rejoin
    /// (where the server starts every stream as moving) even though this call fails.
    public func setStreamState(_ kind: StreamKind, _ state: StreamState) async throws {
        streamStates[kind] = state
        _ = try await request(.streamState(.init(kind: kind, state: state)))
    }

    /// Answers a `subscribe-request` with the SDP the subscriber's player will open.
    public func answer(_ request: ServerMessage.SubscribeRequest, sdp: String) async throws {
        _ = try await self.request(
            .subscribeAnswer(.init(subscriber: request.subscriber, kind: request.kind, sdp: sdp))
        )
    }

    /// Refuses a `subscribe-request`; the subscriber's `subscribe` fails with `subscribe-rejected`.
    public func reject(_ request: ServerMessage.SubscribeRequest, reason: String) async throws {
        _ = try await self.request(
            .subscribeReject(.init(subscriber: request.subscriber, kind: request.kind, reason: reason))
        )
    }

    // MARK: Subscriber side

    /// Asks `publisher` for a stream and waits for its answer: the SDP to open.
    ///
    /// Without `kind`, the publisher's only stream. The subscription is kept across reconnects and
    /// re-publishes; renewed answers arrive as ``SignalingEvent/subscribed(_:)``.
    public func subscribe(
        to publisher: MemberID,
        kind: StreamKind? = nil,
        receive: ReceiveDescription
    ) async throws -> ServerMessage.Subscribed {
        let reply = try await request(
            .subscribe(.init(publisher: publisher, kind: kind, receive: receive)),
            timeout: configuration.answerTimeout
        )
        guard case .subscribed(let subscribed) = reply.message else {
            throw SignalingError(.protocolViolation, "the server answered subscribe with \(reply.message.type)")
        }
        subscriptions[SubscriptionTarget(publisher: subscribed.publisher, kind: subscribed.kind)] =
            WantedSubscription(receive: receive, state: .active)
        return subscribed
    }

    /// Ends subscriptions to `publisher`: one kind, or all of them when `kind` is nil.
    public func unsubscribe(from publisher: MemberID, kind: StreamKind? = nil) async throws {
        for target in subscriptions.keys where target.publisher == publisher && (kind == nil || target.kind == kind) {
            subscriptions[target] = nil
        }
        _ = try await request(.unsubscribe(.init(publisher: publisher, kind: kind)))
    }

    // MARK: Anything else

    /// Relays `payload` to another member, who gets it as ``SignalingEvent/signal(_:)``.
    public func signal(to member: MemberID, payload: JSONValue) async throws {
        _ = try await request(.signal(.init(to: member, payload: payload)))
    }

    /// A round trip to the server; returns how long it took.
    @discardableResult
    public func ping() async throws -> Duration {
        let start = ContinuousClock.now
        _ = try await request(.ping)
        return ContinuousClock.now - start
    }
}
