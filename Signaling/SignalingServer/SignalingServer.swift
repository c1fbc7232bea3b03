import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket
import ServiceLifecycle
import SignalingProtocol
import Synchronization
import UnixSignals

/// The rtc-signal room server (Docs/signaling.md is the protocol it speaks).
///
/// One port, several protocols, told apart by a connection's first bytes (``ProtocolSniffer``):
/// JSON lines over TCP; HTTP/1.1 (the viewer page, WHEP, `/metrics`, `/healthz`); and, upgraded
/// from HTTP at `GET /ws`, the same JSON messages over a WebSocket. With TLS all of them run
/// inside it (https, wss).
///
/// ``bind(configuration:logger:)`` opens the listening socket, so a caller (or a test using port 0)
/// knows the port before serving; ``run()`` serves until graceful shutdown, which tells every client
/// `goodbye` with `server-shutdown` and closes.
public final class SignalingServer: Service, Sendable {
    public let configuration: SignalingServerConfiguration
    /// The port actually bound (the kernel's choice when the configuration asked for 0).
    public let port: Int
    private let listener: NIOAsyncChannel<EventLoopFuture<ConnectionKind>, Never>
    private let registry: RoomRegistry
    private let whep: WHEPSessions
    private let logger: Logger
    /// Open HTTP connections, closed at shutdown (keep-alive ones would wait for the idle timeout).
    private let httpChannels = Mutex<[ObjectIdentifier: any Channel]>([:])

    private init(
        configuration: SignalingServerConfiguration,
        port: Int,
        listener: NIOAsyncChannel<EventLoopFuture<ConnectionKind>, Never>,
        registry: RoomRegistry,
        logger: Logger
    ) {
        self.configuration = configuration
        self.port = port
        self.listener = listener
        self.registry = registry
        self.whep = WHEPSessions(registry: registry, configuration: configuration, logger: logger)
        self.logger = logger
    }

    /// Opens the listening socket; errors name the address. The connection limit is lowered to
    /// what the file descriptor limit allows (``FileDescriptorBudget``).
    public static func bind(
        configuration requested: SignalingServerConfiguration,
        logger: Logger
    ) async throws -> SignalingServer {
        try validate(requested)
        var configuration = requested
        let descriptors = FileDescriptorBudget.raiseLimit()
        configuration.maxConnections = FileDescriptorBudget.connections(
            configured: requested.maxConnections,
            descriptors: descriptors
        )
        if configuration.maxConnections < requested.maxConnections {
            logger.notice(
                "connection limit lowered to fit the file descriptor limit",
                metadata: [
                    "maxConnections": "\(configuration.maxConnections)", "requested": "\(requested.maxConnections)",
                    "fileDescriptors": "\(descriptors)",
                ]
            )
        }
        let sslContext = try configuration.tls.map { try NIOSSLContext(configuration: $0) }
        let idleTimeout = TimeAmount(configuration.idleTimeout)
        let listener: NIOAsyncChannel<EventLoopFuture<ConnectionKind>, Never>
        let limits = configuration
        let metrics = ServerMetrics()
        let budget = ConnectionBudget(limit: configuration.maxConnections, logger: logger, metrics: metrics)
        let refusal = ByteBuffer(bytes: try SignalingCodec.encodeLine(ServerEnvelope(.goodbye(budget.refusal))))
        do {
            listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .serverChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(AcceptErrorHandler(logger: logger))
                    }
                }
                .serverChannelOption(.backlog, value: 1024)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
                // A client may send its requests and half-close (`nc -N`); it still gets its replies.
                .childChannelOption(.allowRemoteHalfClosure, value: true)
                .bind(host: configuration.host, port: configuration.port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let pipeline = channel.pipeline.syncOperations
                        if let sslContext {
                            try pipeline.addHandler(NIOSSLServerHandler(context: sslContext))
                        }
                        try pipeline.addHandler(LingeringCloseHandler())
                        let kind = channel.eventLoop.makePromise(of: ConnectionKind.self)
                        guard budget.admit() else {
                            try pipeline.addHandler(RefusingHandler(line: refusal))
                            kind.fail(ChannelError.inputClosed)
                            return kind.futureResult
                        }
                        channel.closeFuture.whenComplete { _ in budget.release() }
                        try pipeline.addHandler(
                            ProtocolSniffer(result: kind, timeout: idleTimeout) { channel, decision in
                                try Self.configure(channel, as: decision, limits: limits, metrics: metrics)
                            }
                        )
                        return kind.futureResult
                    }
                }
        } catch {
            throw ServerSetupError(
                .bind,
                "cannot listen on \(configuration.host):\(configuration.port): \(error)"
            )
        }
        guard let port = listener.channel.localAddress?.port else {
            listener.channel.close(promise: nil)
            throw ServerSetupError(.bind, "the listening socket on \(configuration.host) has no port")
        }
        return SignalingServer(
            configuration: configuration,
            port: port,
            listener: listener,
            registry: RoomRegistry(configuration: configuration, logger: logger, metrics: metrics),
            logger: logger
        )
    }

    /// Binds, logs where it listens, and serves until SIGINT or SIGTERM; what `rtc-signal` runs.
    public static func serve(configuration: SignalingServerConfiguration, logger: Logger) async throws {
        let server = try await bind(configuration: configuration, logger: logger)
        logger.info(
            "listening",
            metadata: [
                "host": "\(configuration.host)", "port": "\(server.port)",
                "tls": "\(configuration.tls != nil)", "tokens": "\(configuration.secret != nil)",
            ]
        )
        let group = ServiceGroup(
            configuration: .init(
                services: [.init(service: server)],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger
            )
        )
        try await group.run()
        logger.info("stopped")
    }

    /// Serves connections until ``triggerShutdown()`` or graceful shutdown, then says goodbye to
    /// every client and returns once they are closed (or the grace period ran out).
    public func run() async throws {
        await withGracefulShutdownHandler {
            await serve()
        } onGracefulShutdown: {
            self.triggerShutdown()
        }
    }

    /// Stops accepting connections; ``run()`` then tells every client goodbye and returns.
    public func triggerShutdown() {
        listener.channel.close(promise: nil)
    }

    /// How many client connections are open right now.
    public var connectionCount: Int {
        get async { await registry.connectionCount }
    }

    private func serve() async {
        let handler = ConnectionHandler(
            registry: registry,
            configuration: configuration,
            logger: logger
        )
        let http = HTTPConnectionHandler(
            registry: registry,
            whep: whep,
            metrics: registry.metrics,
            configuration: configuration,
            logger: logger
        )
        await withDiscardingTaskGroup { group in
            do {
                try await listener.executeThenClose { inbound in
                    for try await connection in inbound {
                        group.addTask {
                            // Fails when the connection closed or idled before it said anything.
                            guard let kind = try? await connection.get() else { return }
                            switch kind {
                            case .lines(let channel):
                                await handler.handle(channel, transport: .tcp)
                            case .webSocket(let channel):
                                await handler.handle(channel, transport: .webSocket)
                            case .http(let channel):
                                let key = ObjectIdentifier(channel.channel)
                                self.httpChannels.withLock { $0[key] = channel.channel }
                                await http.handle(channel)
                                self.httpChannels.withLock { _ = $0.removeValue(forKey: key) }
                            }
                        }
                    }
                }
            } catch {
                logger.debug("listener closed", metadata: ["error": "\(error)"])
            }
            let open = await registry.connectionCount
            logger.info("shutting down", metadata: ["connections": "\(open)"])
            whep.endAll()
            for channel in httpChannels.withLock({ Array($0.values) }) { channel.close(promise: nil) }
            await registry.shutdown()
            let registry = self.registry
            let grace = configuration.shutdownGracePeriod
            await withTaskGroup(of: Void.self) { waiting in
                waiting.addTask { await registry.waitUntilAllClosed() }
                waiting.addTask {
                    guard (try? await Task.sleep(for: grace)) != nil else { return }
                    await registry.forceCloseAll()
                }
                await waiting.next()
                waiting.cancelAll()
            }
        }
    }

    /// The pipeline after the sniffer: lines, or HTTP with the WebSocket upgrade at `/ws`.
    /// Activity, for the idle timeout, is a whole line, HTTP request part or WebSocket message.
    private static func configure(
        _ channel: any Channel,
        as decision: ProtocolSniffer.Decision,
        limits: SignalingServerConfiguration,
        metrics: ServerMetrics
    ) throws -> EventLoopFuture<ConnectionKind> {
        let idleTimeout = TimeAmount(limits.idleTimeout)
        let pipeline = channel.pipeline.syncOperations
        switch decision {
        case .lines:
            try pipeline.addHandler(ByteToMessageHandler(BoundedLineDecoder()))
            try pipeline.addHandler(IdleStateHandler(readTimeout: idleTimeout))
            try pipeline.addHandler(IdleTimeoutHandler())
            let lines = try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
            return channel.eventLoop.makeSucceededFuture(.lines(lines))
        case .http:
            let webSocket = NIOTypedWebSocketServerUpgrader<ConnectionKind>(
                // A frame's payload; a message may come in several (the adapter's limit holds).
                maxFrameSize: SignalingProtocol.maxLineBytes,
                shouldUpgrade: { channel, head in
                    let path = head.uri.split(separator: "?", maxSplits: 1).first ?? ""
                    return channel.eventLoop.makeSucceededFuture(path == "/ws" ? HTTPHeaders() : nil)
                },
                upgradePipelineHandler: { channel, _ in
                    channel.eventLoop.makeCompletedFuture {
                        let pipeline = channel.pipeline.syncOperations
                        // WebSocket messages have the line protocol's limits and idle timeout.
                        for context in [
                            try pipeline.context(handlerType: HTTPRequestDeadline.Arrival.self),
                            try pipeline.context(handlerType: HTTPRequestDeadline.Completion.self),
                        ] {
                            pipeline.removeHandler(context: context, promise: nil)
                        }
                        try pipeline.addHandler(WebSocketLineAdapter(maxMessageBytes: SignalingProtocol.maxLineBytes))
                        try pipeline.addHandler(IdleStateHandler(readTimeout: idleTimeout))
                        try pipeline.addHandler(IdleTimeoutHandler())
                        return .webSocket(try NIOAsyncChannel(wrappingChannelSynchronously: channel))
                    }
                }
            )
            var configuration = NIOUpgradableHTTPServerPipelineConfiguration<ConnectionKind>(
                upgradeConfiguration: .init(
                    upgraders: [webSocket],
                    notUpgradingCompletionHandler: { channel in
                        channel.eventLoop.makeCompletedFuture {
                            let pipeline = channel.pipeline.syncOperations
                            try pipeline.addHandler(IdleStateHandler(readTimeout: idleTimeout))
                            try pipeline.addHandler(IdleTimeoutHandler())
                            return .http(try NIOAsyncChannel(wrappingChannelSynchronously: channel))
                        }
                    }
                )
            )
            configuration.decoderConfiguration.maxHeaderListSize = limits.maxHTTPHeaderBytes
            configuration.decoderConfiguration.maxHeaderFieldCount = 64
            let deadline = HTTPRequestDeadline(timeout: TimeAmount(limits.httpRequestTimeout)) {
                metrics.request(route: "request-timeout", status: HTTPResponseStatus.requestTimeout.code)
            }
            try pipeline.addHandler(HTTPRequestDeadline.Arrival(deadline))
            let kind = try pipeline.configureUpgradableHTTPServerPipeline(configuration: configuration)
            let decoder = try pipeline.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
            let completion = HTTPRequestDeadline.Completion(deadline)
            try pipeline.addHandler(completion, position: .after(decoder))
            try pipeline.addHandler(HTTPUpgradeGate(), position: .after(completion))
            try pipeline.addHandler(HTTPParseErrorCloser())
            return kind
        }
    }

    private static func validate(_ configuration: SignalingServerConfiguration) throws {
        func require(_ condition: Bool, _ message: String) throws {
            guard condition else { throw ServerSetupError(.configuration, message) }
        }
        try require((0...65_535).contains(configuration.port), "port \(configuration.port) is not 0–65535")
        try require(configuration.maxRooms >= 1, "max rooms must be at least 1")
        try require(configuration.maxMembersPerRoom >= 1, "max members must be at least 1")
        try require(configuration.maxConnections >= 1, "max connections must be at least 1")
        try require(configuration.idleTimeout > .zero, "idle timeout must be positive")
        try require(configuration.httpRequestTimeout > .zero, "the HTTP request timeout must be positive")
        try require(configuration.publisherGracePeriod >= .zero, "the publisher grace period must not be negative")
        try require(configuration.maxWHEPSessionsPerAddress >= 1, "WHEP sessions per address must be at least 1")
        try require(configuration.messageBurst >= 1, "message burst must be at least 1")
        try require(configuration.messagesPerSecond > 0, "message rate must be positive")
        try require(configuration.maxConsecutiveBadMessages >= 1, "bad message limit must be at least 1")
        try require(
            configuration.outboxLimitBytes >= SignalingProtocol.maxLineBytes + 1,
            "the outbox limit must hold at least one line"
        )
        try require(configuration.secret.map { !$0.isEmpty } ?? true, "the secret must not be empty")
    }
}

extension TimeAmount {
    /// A Swift `Duration` as NIO's nanosecond `TimeAmount`.
    init(_ duration: Duration) {
        let parts = duration.components
        self = .nanoseconds(parts.seconds * 1_000_000_000 + parts.attoseconds / 1_000_000_000)
    }
}

/// Closes an HTTP connection whose request could not be parsed, after NIO's error handler has
/// answered it `400` (lingering, so that answer arrives); nothing would close it otherwise
/// while the first request decides between HTTP and the WebSocket upgrade.
private final class HTTPParseErrorCloser: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if error is HTTPParserError {
            context.channel.triggerUserOutboundEvent(LingeringCloseHandler.Start(), promise: nil)
        }
        context.fireErrorCaught(error)
    }
}
