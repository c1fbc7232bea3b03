import Logging
import NIOCore
import NIOHTTP1
import SignalingProtocol
import Synchronization

/// WHEP sessions (the WebRTC-HTTP egress protocol, draft-ietf-wish-whep): each one is an
/// ordinary room member without a connection of its own. A `POST` joins the room as a subscriber
/// and subscribes to the publisher with the body as its WebRTC offer, exactly as a TCP or
/// WebSocket viewer would; the publisher's answer is the `201`'s body. The session then lives
/// until the `DELETE` on its Location, the publisher ending the viewer (consent lost, DTLS
/// closed: its `webrtc-ended` signal), the stream ending, or the server shutting down; each of
/// those makes it leave the room, so the publisher drops the viewer.
final class WHEPSessions: Sendable {
    struct Created: Sendable {
        var id: String
        var uid: MemberID
        var answer: String
    }

    /// Why a `POST` got no session: the HTTP status and a message naming what was wrong.
    struct Failure: Error, Sendable {
        var status: HTTPResponseStatus
        var message: String
    }

    private struct Entry {
        var room: RoomID
        var publisher: MemberID
        /// The client's IP address, for the per-address limit.
        var client: String
        var task: Task<Void, Never>
    }

    private let registry: RoomRegistry
    private let configuration: SignalingServerConfiguration
    private let logger: Logger
    private let sessions = Mutex<[String: Entry]>([:])

    init(registry: RoomRegistry, configuration: SignalingServerConfiguration, logger: Logger) {
        self.registry = registry
        self.configuration = configuration
        self.logger = logger
    }

    var count: Int { sessions.withLock { $0.count } }

    /// Joins `room` as `uid` (default `whep_<random>`), subscribes to `publisher` with `offer`
    /// and returns the answer, or throws with the status the failure deserves.
    func create(
        room: RoomID,
        publisher: MemberID,
        uid requested: MemberID?,
        token: String?,
        offer: String,
        client: String
    ) async throws(Failure) -> Created {
        let id = Self.randomID()
        let uid: MemberID
        do throws(SignalingError) {
            if let requested { uid = requested } else { uid = try MemberID(validating: "whep_" + id.prefix(16)) }
        } catch {
            throw Failure(status: .internalServerError, message: "cannot name the session: \(error.message)")
        }
        let outbox = Outbox(channel: nil, limitBytes: configuration.outboxLimitBytes)
        let (answers, answer) = AsyncStream.makeStream(of: Result<String, Failure>.self)
        if let refusal = sessions.withLock({ admission(for: client, in: $0) }) { throw refusal }
        guard case .admitted(let connection) = await registry.register(outbox) else {
            throw Failure(status: .serviceUnavailable, message: "the server holds its most connections")
        }
        let registry = self.registry
        let logger = self.logger
        let metrics = registry.metrics
        // The task is made and listed under one lock: it removes itself when it ends, so it must
        // be listed before it can end (a refused join ends it at once), and the limits are
        // checked in the same step as the listing.
        let listed = sessions.withLock { sessions -> Result<Task<Void, Never>, Failure> in
            if let refusal = admission(for: client, in: sessions) { return .failure(refusal) }
            let task = Task {
                metrics.opened(.whep)
                defer { metrics.closed(.whep) }
                let ending = await Self.run(
                    connection: connection,
                    outbox: outbox,
                    join: ClientMessage.Join(room: room, uid: uid, role: .subscriber, token: token),
                    publisher: publisher,
                    offer: offer,
                    registry: registry,
                    answer: answer
                )
                answer.finish()
                logger.info(
                    "WHEP session ended",
                    metadata: ["room": "\(room)", "uid": "\(uid)", "publisher": "\(publisher)", "reason": "\(ending)"]
                )
                await registry.disconnect(connection, reason: .left, goodbye: nil)
                self.sessions.withLock { _ = $0.removeValue(forKey: id) }
            }
            sessions[id] = Entry(room: room, publisher: publisher, client: client, task: task)
            return .success(task)
        }
        let task: Task<Void, Never>
        switch listed {
        case .success(let listedTask):
            task = listedTask
        case .failure(let refusal):
            await registry.disconnect(connection, reason: .left, goodbye: nil)
            throw refusal
        }
        let timeout = configuration.whepAnswerTimeout
        let result = await withTaskGroup(of: Result<String, Failure>.self) { group in
            group.addTask {
                for await result in answers { return result }
                return .failure(Failure(status: .serviceUnavailable, message: "the session ended before an answer"))
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return .failure(Failure(status: .gatewayTimeout, message: "the publisher did not answer in \(timeout)"))
            }
            let first = await group.next() ?? .failure(Failure(status: .internalServerError, message: "no result"))
            group.cancelAll()
            return first
        }
        switch result {
        case .success(let sdp):
            logger.info("WHEP session", metadata: ["room": "\(room)", "uid": "\(uid)", "publisher": "\(publisher)"])
            return Created(id: id, uid: uid, answer: sdp)
        case .failure(let failure):
            task.cancel()
            throw failure
        }
    }

    /// Why a new session from `client` cannot be had now, or nil: the server's limit, and the
    /// limit per client address (dead offers from one address cannot fill a room).
    private func admission(for client: String, in sessions: [String: Entry]) -> Failure? {
        guard sessions.count < configuration.maxWHEPSessions else {
            return Failure(
                status: .serviceUnavailable,
                message: "the server holds its most WHEP sessions (\(configuration.maxWHEPSessions))"
            )
        }
        let perAddress = configuration.maxWHEPSessionsPerAddress
        guard sessions.values.lazy.filter({ $0.client == client }).count < perAddress else {
            return Failure(
                status: .tooManyRequests,
                message: "\(client) holds its most WHEP sessions (\(perAddress)); DELETE one first"
            )
        }
        return nil
    }

    /// Ends the session `id` of `publisher` in `room` (the `DELETE`); false if there is none.
    func delete(id: String, room: RoomID, publisher: MemberID) -> Bool {
        let entry = sessions.withLock { sessions -> Entry? in
            guard let entry = sessions[id], entry.room == room, entry.publisher == publisher else { return nil }
            return sessions.removeValue(forKey: id)
        }
        entry?.task.cancel()
        return entry != nil
    }

    /// Every session, at shutdown.
    func endAll() {
        let all = sessions.withLock { sessions in
            defer { sessions.removeAll() }
            return Array(sessions.values)
        }
        for entry in all { entry.task.cancel() }
    }

    // MARK: One session

    /// The member's life: join, subscribe, hand the answer over, then follow the room until the
    /// session must end. Returns why it ended.
    private static func run(
        connection: ConnectionID,
        outbox: Outbox,
        join: ClientMessage.Join,
        publisher: MemberID,
        offer: String,
        registry: RoomRegistry,
        answer: AsyncStream<Result<String, Failure>>.Continuation
    ) async -> String {
        var lines = outbox.lines.makeAsyncIterator()
        await registry.handle(ClientRequest(id: .number(1), .join(join)), from: connection)
        guard let joined = await reply(to: 1, from: &lines) else { return "cancelled while joining" }
        if case .error(let error) = joined {
            answer.yield(.failure(failure(error)))
            return "join refused: \(error)"
        }
        let subscribe = ClientMessage.Subscribe(publisher: publisher, receive: ReceiveDescription(offer: offer))
        await registry.handle(ClientRequest(id: .number(2), .subscribe(subscribe)), from: connection)
        guard let subscribed = await reply(to: 2, from: &lines) else { return "cancelled while subscribing" }
        switch subscribed {
        case .subscribed(let reply):
            answer.yield(.success(reply.sdp))
        case .error(let error):
            answer.yield(.failure(failure(error)))
            return "subscribe refused: \(error)"
        default:
            answer.yield(.failure(Failure(status: .badGateway, message: "unexpected reply \(subscribed.type)")))
            return "unexpected reply \(subscribed.type)"
        }
        while let line = await lines.next() {
            guard let envelope = try? SignalingCodec.decodeServerLine(line.readableBytesView) else { continue }
            switch envelope.message {
            case .signal(let signal) where signal.from == publisher:
                if case .object(let payload) = signal.payload, payload["event"] == .string("webrtc-ended") {
                    return "the publisher ended the viewer: \(payload["reason"].map { "\($0)" } ?? "")"
                }
            case .unsubscribed(let unsubscribed) where unsubscribed.publisher == publisher:
                return "unsubscribed: \(unsubscribed.reason)"
            case .goodbye(let goodbye):
                return "goodbye: \(goodbye.reason)"
            default:
                continue
            }
        }
        return "deleted"
    }

    /// Reads lines until the reply to request `id`; nil if the stream ended (cancelled) first.
    private static func reply(
        to id: Int64,
        from lines: inout AsyncStream<ByteBuffer>.Iterator
    ) async -> ServerMessage? {
        while let line = await lines.next() {
            guard let envelope = try? SignalingCodec.decodeServerLine(line.readableBytesView),
                envelope.id == .number(id)
            else { continue }
            return envelope.message
        }
        return nil
    }

    /// The HTTP status a refusal from the room deserves.
    static func failure(_ error: SignalingError) -> Failure {
        let status: HTTPResponseStatus =
            switch error.code {
            case .unauthorized: .unauthorized
            case .noSuchMember, .notPublishing, .publisherGone: .notFound
            case .uidTaken: .conflict
            case .roomFull, .tooManyRooms: .serviceUnavailable
            case .rateLimited: .tooManyRequests
            case .tooLarge: .payloadTooLarge
            default: .badRequest
            }
        return Failure(status: status, message: "\(error.code.rawValue): \(error.message)")
    }

    /// 128 random bits from the system CSPRNG, in hex: a Location nobody can guess.
    static func randomID() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<16).map { _ in
            let byte = UInt8.random(in: 0...255, using: &generator)
            return String(byte, radix: 16).leftPadded(to: 2)
        }.joined()
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
