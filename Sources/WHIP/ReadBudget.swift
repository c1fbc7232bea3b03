import NIOCore

/// Caps the bytes read on one connection, before the HTTP decoder sees them.
///
/// The decoder bounds header fields and the exchange handler the body, but neither bounds the
/// status line, chunk framing or a stream of informational responses: this does, so a hostile
/// server cannot make the client buffer without end.
final class ReadBudget: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    struct Exceeded: Error {
        let limit: Int
    }

    private var remaining: Int
    private let limit: Int

    init(limit: Int) {
        self.limit = limit
        self.remaining = limit
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard remaining >= 0 else { return }
        remaining -= unwrapInboundIn(data).readableBytes
        guard remaining >= 0 else {
            context.fireErrorCaught(Exceeded(limit: limit))
            context.close(promise: nil)
            return
        }
        context.fireChannelRead(data)
    }
}
