import NIOCore

/// Raised into the connection's inbound stream when no line arrived within the idle timeout.
struct IdleTimeoutError: Error {}

/// Turns `IdleStateHandler`'s read-idle event into ``IdleTimeoutError``.
///
/// `NIOAsyncChannel` does not pass user events to the async side, but it does surface errors: the
/// inbound stream throws, and the connection loop says goodbye with `idle-timeout`. The handler sits
/// after the line decoder, so only complete lines count as activity.
final class IdleTimeoutHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let idle = event as? IdleStateHandler.IdleStateEvent, idle == .read {
            context.fireErrorCaught(IdleTimeoutError())
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }
}
