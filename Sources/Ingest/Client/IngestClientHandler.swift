import NIOCore

/// Records what the host says on a client connection: its hello, then at most an end message.
/// Anything else from the host (media, a second hello, bad bytes) is a protocol error that closes
/// the connection.
final class IngestClientHandler: ChannelInboundHandler {
    typealias InboundIn = IngestInbound

    private let state: IngestClientState

    init(state: IngestClientState) {
        self.state = state
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .message(.hello(let hello), _, _) where hello.role == .host && state.snapshot.hostHello == nil:
            state.update { $0.hostHello = hello }
        case .message(.control(.end(let reason, let message)), _, _):
            state.update { snapshot in
                if snapshot.end == nil { snapshot.end = IngestSessionEnd(reason: reason, message: message) }
            }
            context.close(promise: nil)
        case .message(let message, _, _):
            fail("the host sent an unexpected \(message.type) message", context)
        case .protocolError(let error):
            fail("the host's input broke the protocol: \(error)", context)
        case .closedMidMessage(let detail):
            fail(detail, context)
        case .helloDeadline, .hostEnd:
            break
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        state.update { snapshot in
            snapshot.closed = true
            if snapshot.end == nil {
                snapshot.end = IngestSessionEnd(
                    reason: .disconnected,
                    message: "the host closed the connection without an end message"
                )
            }
        }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail("connection error: \(error)", context)
    }

    private func fail(_ message: String, _ context: ChannelHandlerContext) {
        state.update { snapshot in
            if snapshot.end == nil { snapshot.end = IngestSessionEnd(reason: .disconnected, message: message) }
        }
        context.close(promise: nil)
    }
}
