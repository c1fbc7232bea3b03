import Logging
import SignalingProtocol

/// All rooms and connections. One actor, so every event in a room is ordered the same way for
/// every member and a join, a publish and a drop can never interleave half-way.
actor RoomRegistry {
    struct Session {
        let outbox: Outbox
        var membership: Membership?
        /// Set once the server decided to close this connection; later requests are ignored.
        var closing = false
        /// The outbox overflowed: the client stopped reading.
        var overflowed = false
    }

    struct Membership {
        let room: RoomID
        let uid: MemberID
    }

    let configuration: SignalingServerConfiguration
    let logger: Logger
    let metrics: ServerMetrics
    var sessions: [ConnectionID: Session] = [:]
    var rooms: [RoomID: Room] = [:]
    /// Uids of publishers whose connection was lost, held for the grace period: only a `join`
    /// with the member's resume secret takes one back (``RoomRegistry/reserve(_:in:)``).
    var reservations = UIDReservations()
    private var nextConnection: ConnectionID = 0
    private var shuttingDown = false
    /// Connections refused since the limit was last reached: logged once when it is reached and
    /// once when a connection is admitted again, not once per refusal.
    private var refusedAtLimit = 0
    private var drainWaiters: [CheckedContinuation<Void, Never>] = []

    init(configuration: SignalingServerConfiguration, logger: Logger, metrics: ServerMetrics = ServerMetrics()) {
        self.configuration = configuration
        self.logger = logger
        self.metrics = metrics
    }

    /// Rooms, members, published streams and subscriptions now (`/metrics`).
    func census() -> ServerMetrics.Census {
        var census = ServerMetrics.Census(rooms: rooms.count)
        for room in rooms.values {
            census.members += room.members.count
            census.streams += room.members.values.reduce(0) { $0 + $1.streams.count }
            census.subscriptions += room.subscriptions.count
        }
        return census
    }

    var idleTimeoutSeconds: Double {
        let parts = configuration.idleTimeout.components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }

    // MARK: Connections

    /// What ``register(_:)`` decided about a new connection.
    enum Admission {
        case admitted(ConnectionID)
        /// Refused with this goodbye; the connection is closed once it is written.
        case refused(ServerMessage.Goodbye)
    }

    /// Admits a new connection, unless shutdown began or the server holds its most connections.
    func register(_ outbox: Outbox) -> Admission {
        guard !shuttingDown else {
            return .refused(.init(reason: .serverShutdown, message: "the server is shutting down"))
        }
        guard sessions.count < configuration.maxConnections else {
            refusedAtLimit += 1
            metrics.rejected(.tooManyConnections)
            if refusedAtLimit == 1 {
                logger.warning(
                    "connection limit reached; refusing new connections",
                    metadata: ["limit": "\(configuration.maxConnections)"]
                )
            }
            return .refused(
                .init(
                    reason: .tooManyConnections,
                    message: "the server holds its most connections (\(configuration.maxConnections)); try again later"
                )
            )
        }
        if refusedAtLimit > 0 {
            logger.notice("accepting connections again", metadata: ["refused": "\(refusedAtLimit)"])
            refusedAtLimit = 0
        }
        nextConnection += 1
        sessions[nextConnection] = Session(outbox: outbox)
        return .admitted(nextConnection)
    }

    /// The connection ended: leave its room, tell it `goodbye` if there is something to say, and
    /// let its writer drain and close.
    func disconnect(_ connection: ConnectionID, reason: LeaveReason, goodbye: ServerMessage.Goodbye?) {
        guard let session = sessions.removeValue(forKey: connection) else { return }
        if let goodbye, !session.closing {
            send(.goodbye(goodbye), to: session.outbox)
        }
        if session.membership != nil {
            removeMember(of: connection, session: session, reason: session.overflowed ? .dropped : reason)
        }
        session.outbox.finish()
        if sessions.isEmpty {
            for waiter in drainWaiters { waiter.resume() }
            drainWaiters.removeAll()
        }
    }

    /// Tells every connection the server is going away; their writers send it and close.
    func shutdown() {
        shuttingDown = true
        for id in sessions.keys.sorted() {
            guard var session = sessions[id], !session.closing else { continue }
            send(.goodbye(.init(reason: .serverShutdown, message: "the server is shutting down")), to: session.outbox)
            session.outbox.finish()
            session.closing = true
            sessions[id] = session
        }
    }

    /// Returns once every connection has ended.
    func waitUntilAllClosed() async {
        if sessions.isEmpty { return }
        await withCheckedContinuation { drainWaiters.append($0) }
    }

    /// Closes every connection without waiting for its queue (after the shutdown grace period).
    func forceCloseAll() {
        for session in sessions.values { session.outbox.forceClose() }
    }

    var connectionCount: Int { sessions.count }

    // MARK: Requests

    func handle(_ request: ClientRequest, from connection: ConnectionID) {
        guard let session = sessions[connection], !session.closing else { return }
        let id = request.id
        switch request.message {
        case .ping:
            send(.pong, id: id, to: session.outbox)
        case .join(let join):
            self.join(join, id: id, connection: connection)
        case .leave:
            leave(id: id, connection: connection)
        case .publish(let publish):
            self.publish(publish.stream, id: id, connection: connection)
        case .unpublish(let unpublish):
            self.unpublish(unpublish.kind, id: id, connection: connection)
        case .subscribe(let subscribe):
            self.subscribe(subscribe, id: id, connection: connection)
        case .unsubscribe(let unsubscribe):
            self.unsubscribe(unsubscribe, id: id, connection: connection)
        case .signal(let signal):
            self.relay(signal, id: id, connection: connection)
        case .subscribeAnswer(let answer):
            self.answer(answer, id: id, connection: connection)
        case .subscribeReject(let reject):
            self.reject(reject, id: id, connection: connection)
        case .streamState(let change):
            self.setStreamState(change, id: id, connection: connection)
        }
    }
}
