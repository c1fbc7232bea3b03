import NIOCore

/// Closes a connection so that what the server wrote last (an error, a `goodbye`) arrives.
///
/// Closing a TCP socket with unread input makes the kernel send a reset, and a reset lets the
/// peer's kernel throw away data it had received but not yet handed to the application: a client
/// still sending an over-long line would never read its `line-too-long` error. So the server
/// closes as HTTP servers do (RFC 9112 §9.6): it half-closes its output (the peer reads
/// everything, then end of file), reads and discards whatever the peer still sends, and closes
/// fully when the peer closes too or after ``timeout``, whichever is first.
///
/// Sits right after TLS (if any) and before the line decoder, so lingering input never reaches
/// the decoder. Started by the outbound user event ``LingeringCloseHandler/Start``.
final class LingeringCloseHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// Sent with `triggerUserOutboundEvent` once the last line is written; `timeout` is how long
    /// a peer that keeps sending is read and ignored before the connection is closed anyway.
    struct Start: Sendable {
        var timeout = TimeAmount.seconds(2)
    }

    private var lingering = false
    private var inputClosed = false
    private var deadline: Scheduled<Void>?

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard lingering else {
            context.fireChannelRead(data)
            return
        }
        // Discarded; ask for more so the peer's bytes keep draining until it closes.
        context.read()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case ChannelEvent.inputClosed = event {
            inputClosed = true
            if lingering {
                closeNow(context)
                return
            }
        }
        context.fireUserInboundEventTriggered(event)
    }

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        guard let start = event as? Start else {
            context.triggerUserOutboundEvent(event, promise: promise)
            return
        }
        promise?.succeed()
        guard !lingering, context.channel.isActive else { return }
        lingering = true
        if inputClosed {
            closeNow(context)
            return
        }
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        deadline = context.eventLoop.scheduleTask(in: start.timeout) {
            loopBound.value.close(promise: nil)
        }
        let halfClosed = context.eventLoop.makePromise(of: Void.self)
        halfClosed.futureResult.whenFailure { _ in
            // Output half-closure not supported here (some TLS states): close outright.
            loopBound.value.close(promise: nil)
        }
        context.close(mode: .output, promise: halfClosed)
        context.read()
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        context.fireChannelInactive()
    }

    private func closeNow(_ context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        context.close(promise: nil)
    }
}
