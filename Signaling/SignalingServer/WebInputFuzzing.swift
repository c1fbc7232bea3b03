import Logging
import NIOCore
import NIOHTTP1

/// The server's web input as the libFuzzer target `FuzzSignalingWeb` (Fuzz/) reaches it. The
/// sniffer, the WebSocket adapter, the lingering close and the HTTP handler are internal; this is
/// their one door, outside the public API (`@_spi(Fuzzing) import SignalingServer`). The server
/// itself uses nothing here.
@_spi(Fuzzing) public enum WebInputFuzzing {
    /// What ``ProtocolSniffer`` decides a connection speaks.
    public enum Decision: Equatable, Sendable {
        case http
        case lines
    }

    /// The pipeline builder of a sniffer added by ``addProtocolSniffer(to:timeout:decided:)``
    /// builds nothing and fails with this, as a malformed first request does.
    public struct NotConfigured: Error {}

    /// ``ProtocolSniffer/decide(_:)``: `.http` or `.lines` once `prefix` says which, nil while it
    /// could still be either.
    public static func decide(_ prefix: some Collection<UInt8>) -> Decision? {
        ProtocolSniffer.decide(prefix).map(Decision.init)
    }

    /// Adds a ``ProtocolSniffer`` to `channel`'s pipeline (on its event loop). When the sniffer
    /// decides, it calls `decided`; if that throws, the sniffer treats it as a pipeline it could
    /// not build (it fails its result and closes the connection); if it returns, the pipeline
    /// builder adds nothing and fails with ``NotConfigured``, so the bytes the sniffer passes on
    /// reach the end of the pipeline. The future is the sniffer's result.
    public static func addProtocolSniffer(
        to channel: any Channel,
        timeout: TimeAmount,
        decided: @escaping (Decision) throws -> Void
    ) throws -> EventLoopFuture<Void> {
        let result = channel.eventLoop.makePromise(of: ConnectionKind.self)
        let sniffer = ProtocolSniffer(result: result, timeout: timeout) { channel, decision in
            try decided(Decision(decision))
            return channel.eventLoop.makeFailedFuture(NotConfigured())
        }
        try channel.pipeline.syncOperations.addHandler(sniffer)
        return result.futureResult.map { _ in () }
    }

    /// Whether `error` is the one a connection that stayed silent is closed with.
    public static func isIdleTimeout(_ error: any Error) -> Bool {
        error is IdleTimeoutError
    }

    /// Adds a ``LingeringCloseHandler``, which the server puts first (after TLS) in every pipeline.
    public static func addLingeringCloseHandler(to channel: any Channel) throws {
        try channel.pipeline.syncOperations.addHandler(LingeringCloseHandler())
    }

    /// Ends the connection as ``ConnectionHandler`` does (after `goodbye`, a refusal, shutdown):
    /// the outbound user event ``LingeringCloseHandler/Start``.
    public static func startLingeringClose(of channel: any Channel) {
        channel.triggerUserOutboundEvent(LingeringCloseHandler.Start(), promise: nil)
    }

    /// Adds the ``WebSocketLineAdapter`` the server puts after NIO's WebSocket frame codec.
    public static func addWebSocketLineAdapter(to channel: any Channel, maxMessageBytes: Int) throws {
        try channel.pipeline.syncOperations.addHandler(WebSocketLineAdapter(maxMessageBytes: maxMessageBytes))
    }

    /// ``HTTPConnectionHandler/query(of:)``.
    public static func query(of uri: String) -> [String: String] {
        HTTPConnectionHandler.query(of: uri)
    }

    /// The HTTP side of a server without sockets: an ``HTTPConnectionHandler`` with a room
    /// registry, WHEP sessions and metrics of its own, logging nothing.
    public final class HTTPServing: Sendable {
        private let handler: HTTPConnectionHandler
        private let registry: RoomRegistry
        private let whep: WHEPSessions

        public init(configuration: SignalingServerConfiguration) {
            let logger = Logger(label: "fuzz") { _ in SwiftLogNoOpLogHandler() }
            let registry = RoomRegistry(configuration: configuration, logger: logger)
            let whep = WHEPSessions(registry: registry, configuration: configuration, logger: logger)
            self.registry = registry
            self.whep = whep
            self.handler = HTTPConnectionHandler(
                registry: registry,
                whep: whep,
                metrics: registry.metrics,
                configuration: configuration,
                logger: logger
            )
        }

        /// Serves one connection's requests until its inbound stream ends or a response says
        /// `Connection: close` (``HTTPConnectionHandler/handle(_:)``), then closes it.
        public func handle(_ channel: NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>) async {
            await handler.handle(channel)
        }

        /// WHEP sessions still open; each ends soon after its `POST` was refused.
        public var whepSessions: Int { whep.count }

        /// The registry's connections (each WHEP session has one while it lives).
        public var connections: Int {
            get async { await registry.connectionCount }
        }

        /// Ends every WHEP session, as shutdown does (``WHEPSessions/endAll()``).
        public func endAllWHEPSessions() {
            whep.endAll()
        }
    }
}

extension WebInputFuzzing.Decision {
    fileprivate init(_ decision: ProtocolSniffer.Decision) {
        switch decision {
        case .http: self = .http
        case .lines: self = .lines
        }
    }
}
