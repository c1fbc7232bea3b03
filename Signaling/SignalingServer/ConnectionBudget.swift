import Logging
import NIOCore
import SignalingProtocol
import Synchronization

/// The server's most open sockets, counted when a connection is accepted, whatever it turns out
/// to speak (JSON lines, WebSocket, HTTP). One past the limit is told `goodbye`
/// `too-many-connections` at once, as the line protocol has always done (Docs/signaling.md),
/// and closed; the limit reached and left are logged once each, not once per refusal.
final class ConnectionBudget: Sendable {
    private let limit: Int
    private let logger: Logger
    private let metrics: ServerMetrics
    private let state = Mutex((open: 0, refused: 0))

    init(limit: Int, logger: Logger, metrics: ServerMetrics) {
        self.limit = limit
        self.logger = logger
        self.metrics = metrics
    }

    /// Takes a place for a new connection; false when none is free (then refuse it).
    func admit() -> Bool {
        enum Outcome { case admitted, admittedAgain(refused: Int), refused(first: Bool) }
        let outcome = state.withLock { state -> Outcome in
            guard state.open < limit else {
                state.refused += 1
                return .refused(first: state.refused == 1)
            }
            state.open += 1
            defer { state.refused = 0 }
            return state.refused > 0 ? .admittedAgain(refused: state.refused) : .admitted
        }
        switch outcome {
        case .admitted:
            return true
        case .admittedAgain(let refused):
            logger.notice("accepting connections again", metadata: ["refused": "\(refused)"])
            return true
        case .refused(let first):
            metrics.rejected(.tooManyConnections)
            if first {
                logger.warning("connection limit reached; refusing new connections", metadata: ["limit": "\(limit)"])
            }
            return false
        }
    }

    func release() {
        state.withLock { $0.open = max(0, $0.open - 1) }
    }

    /// The goodbye a refused connection gets.
    var refusal: ServerMessage.Goodbye {
        .init(reason: .tooManyConnections, message: "the server holds its most connections (\(limit)); try again later")
    }
}

/// Writes one line as soon as the connection is up, then closes it lingering (so the line
/// arrives even if the client is still sending): a refused connection's `goodbye`.
final class RefusingHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let line: ByteBuffer
    private var sent = false

    init(line: ByteBuffer) {
        self.line = line
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { refuse(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        refuse(context)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}

    private func refuse(_ context: ChannelHandlerContext) {
        guard !sent else { return }
        sent = true
        context.writeAndFlush(wrapOutboundOut(line), promise: nil)
        context.channel.triggerUserOutboundEvent(LingeringCloseHandler.Start(timeout: .milliseconds(200)), promise: nil)
    }
}
