import NIOCore

/// Sits after the frame decoder and lets the host's side speak into a session's inbound stream:
/// it fires ``IngestInbound/helloDeadline`` when no message arrived in time, and passes on
/// ``IngestInbound/hostEnd(_:_:)`` requests from other tasks (through ``SessionSignals``).
final class SessionSignalHandler: ChannelInboundHandler {
    typealias InboundIn = IngestInbound
    typealias InboundOut = IngestInbound

    private let helloTimeout: TimeAmount?
    /// Times messages in flight (before the decoder); told of each message the decoder completes.
    private let stall: MessageStallHandler?
    private var context: ChannelHandlerContext?
    private var deadline: Scheduled<Void>?

    init(helloTimeout: TimeAmount?, stall: MessageStallHandler? = nil) {
        self.helloTimeout = helloTimeout
        self.stall = stall
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        stall?.onStall = { [weak self] message in self?.inject(.hostEnd(.timeout, message)) }
        if let helloTimeout {
            let loopBound = NIOLoopBound(self, eventLoop: context.eventLoop)
            deadline = context.eventLoop.scheduleTask(in: helloTimeout) {
                loopBound.value.inject(.helloDeadline)
            }
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        stall?.onStall = nil
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // Anything at all from the peer (even a protocol error) settles the hello deadline.
        deadline?.cancel()
        deadline = nil
        switch unwrapInboundIn(data) {
        case .message(_, let wireLength, _): stall?.messageDecoded(wireLength: wireLength)
        case .protocolError, .closedMidMessage: stall?.stop()
        case .helloDeadline, .hostEnd: break
        }
        context.fireChannelRead(data)
    }

    /// Must run on the channel's event loop.
    func inject(_ item: IngestInbound) {
        deadline = nil
        guard let context else { return }
        context.fireChannelRead(wrapInboundOut(item))
        // NIOAsyncChannel hands reads to its stream at the end of a read burst; an injected item
        // is a burst of its own.
        context.fireChannelReadComplete()
    }
}

/// A handle other tasks use to speak into one session (see ``SessionSignalHandler``).
struct SessionSignals: Sendable {
    private let handler: NIOLoopBound<SessionSignalHandler>

    /// Call on the channel's event loop (in the channel initializer).
    init(_ handler: SessionSignalHandler, eventLoop: any EventLoop) {
        self.handler = NIOLoopBound(handler, eventLoop: eventLoop)
    }

    func inject(_ item: IngestInbound) {
        let handler = self.handler
        handler.eventLoop.execute { handler.value.inject(item) }
    }
}
