import Logging
import NIOCore
import NIOPosix

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The host side of the ingest socket (Docs/ingest.md): listens for the capture process, checks
/// every message, and hands the host an ordered, bounded stream of ``IngestEvent``s.
///
/// One capture client at a time: a connection that arrives while another holds the slot gets an
/// end message with reason `busy` and is closed; the first keeps streaming. A live broadcast is
/// never taken over by whoever connects next, and a capture process that dies closes its socket,
/// which frees the slot for its successor.
///
/// ```swift
/// let server = try await IngestServer.bind(IngestAddress(parsing: "unix:/tmp/ingest.sock"), logger: logger)
/// async let serving: Void = server.run()
/// for await event in server.events { … }
/// ```
public final class IngestServer: Sendable {
    /// The address as bound: a TCP port of 0 is replaced by the one the kernel chose.
    public let address: IngestAddress
    public let configuration: IngestServerConfiguration
    private let listener: NIOAsyncChannel<IngestConnection, Never>
    private let state: IngestServerState
    private let queue: IngestEventQueue
    private let logger: Logger

    private init(
        address: IngestAddress,
        configuration: IngestServerConfiguration,
        listener: NIOAsyncChannel<IngestConnection, Never>,
        logger: Logger
    ) {
        self.address = address
        self.configuration = configuration
        self.listener = listener
        self.state = IngestServerState()
        self.queue = IngestEventQueue(
            limits: .init(
                video: configuration.videoQueueLimit,
                audio: configuration.audioQueueLimit,
                other: configuration.otherQueueLimit
            )
        )
        self.logger = logger
    }

    /// Opens the listening socket. A stale Unix-domain socket file at the path is replaced (any
    /// other kind of file is an error); the new one is made accessible to its owner only.
    public static func bind(
        _ address: IngestAddress,
        configuration: IngestServerConfiguration = IngestServerConfiguration(),
        logger: Logger
    ) async throws(IngestError) -> IngestServer {
        try configuration.validate()
        try address.requireLoopback(unless: configuration.allowNonLoopbackTCP)
        let parser = IngestParser(limits: configuration.limits)
        let helloTimeout = TimeAmount(configuration.helloTimeout)
        let messageTimeout = TimeAmount(configuration.messageTimeout)
        // A safety net behind the decoder's own checks: nothing buffers past one largest message.
        let maximumBuffer = IngestProtocol.headerSize + parser.limits.maxVideoPayload + 65_536
        var bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 8)
        if case .tcp = address {
            bootstrap =
                bootstrap
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
        }
        let initializer: @Sendable (any Channel) -> EventLoopFuture<IngestConnection> = { channel in
            channel.eventLoop.makeCompletedFuture {
                let stall = MessageStallHandler(timeout: messageTimeout)
                let signals = SessionSignalHandler(helloTimeout: helloTimeout, stall: stall)
                let pipeline = channel.pipeline.syncOperations
                try pipeline.addHandler(stall)
                try pipeline.addHandler(
                    ByteToMessageHandler(IngestFrameDecoder(parser: parser), maximumBufferSize: maximumBuffer)
                )
                try pipeline.addHandler(signals)
                let wrapped = try NIOAsyncChannel<IngestInbound, ByteBuffer>(
                    wrappingChannelSynchronously: channel,
                    configuration: .init(
                        backPressureStrategy: .init(lowWatermark: 1, highWatermark: 3),
                        isOutboundHalfClosureEnabled: true
                    )
                )
                return IngestConnection(
                    channel: wrapped,
                    signals: SessionSignals(signals, eventLoop: channel.eventLoop)
                )
            }
        }
        let listener: NIOAsyncChannel<IngestConnection, Never>
        var bound = address
        do {
            switch address {
            case .unix(let path):
                listener = try await bootstrap.bind(
                    unixDomainSocketPath: path,
                    cleanupExistingSocketFile: true,
                    childChannelInitializer: initializer
                )
                _ = chmod(path, 0o600)
            case .tcp(let host, _):
                listener = try await bootstrap.bind(
                    to: try address.socketAddress(),
                    childChannelInitializer: initializer
                )
                if let port = listener.channel.localAddress?.port {
                    bound = .tcp(host: host, port: port)
                }
            }
        } catch let error as IngestError {
            throw error
        } catch is UnixDomainSocketPathWrongType {
            throw IngestError(
                .connection,
                "cannot listen on \(address): the path exists and is not a socket (remove it or choose another)"
            )
        } catch let error as IOError {
            throw IngestError(.connection, "cannot listen on \(address): \(error.description)")
        } catch {
            throw IngestError(.connection, "cannot listen on \(address): \(error)")
        }
        return IngestServer(address: bound, configuration: configuration, listener: listener, logger: logger)
    }

    /// Events for the host, in arrival order. One consumer: iterate from a single task.
    public var events: IngestEvents { IngestEvents(queue: queue) }

    /// Counters since the server started.
    public var statistics: IngestStatistics {
        var statistics = state.statistics
        queue.addCounters(to: &statistics)
        return statistics
    }

    /// True while a capture client holds the slot (from its connection until its session ends).
    public var hasActiveSession: Bool { state.hasActiveConnection }

    /// Accepts connections until ``shutdown()``; then ends the active session with
    /// `host-shutdown`, waits for it, removes a Unix-domain socket file, and finishes ``events``.
    /// Serves once: a second call returns at once.
    public func run() async {
        guard state.startRunning() else {
            logger.warning("ingest server is already running")
            return
        }
        let session = IngestSession(state: state, queue: queue, configuration: configuration, logger: logger)
        logger.info("ingest listening", metadata: ["address": "\(address)"])
        await withDiscardingTaskGroup { group in
            do {
                try await listener.executeThenClose { connections in
                    for try await connection in connections {
                        group.addTask { await session.serve(connection) }
                    }
                }
            } catch {
                logger.debug("ingest listener closed", metadata: ["error": "\(error)"])
            }
            state.beginShutdown()
            queue.close()
        }
        if case .unix(let path) = address {
            _ = unlink(path)
        }
        queue.finish()
        logger.info("ingest stopped")
    }

    /// Ends the current capture session: the client gets an end message with `reason`, the host
    /// a `.disconnected` event. False when no client is connected.
    @discardableResult
    public func endSession(
        reason: IngestEndReason = .requestedByHost,
        message: String = "the host ended the broadcast"
    ) -> Bool {
        state.endActive(reason, message)
    }

    /// Stops listening; ``run()`` then ends the active session and returns.
    public func shutdown() {
        state.beginShutdown()
        listener.channel.close(promise: nil)
    }
}
