import NIOCore
import NIOHTTP1

/// A time limit on each HTTP request's arrival, from its first byte to its last (slowloris).
///
/// NIO's HTTP decoder says nothing until a request's head is complete, and the idle timeout
/// counts every part as activity, so a client that sent `GET ` and then one byte a minute held
/// its connection for ever: fifty such connections locked everyone out of a server with
/// `--max-connections 50`. Two handlers share this state: ``Arrival`` before the decoder sees the
/// raw bytes and starts the clock when a request's first byte arrives; ``Completion`` right
/// after the decoder sees the request's end and stops it. A request that has not ended in time
/// is answered `408` and the connection is closed (lingering, so the answer arrives).
///
/// Once a request has arrived, its answer may take as long as it takes (a WHEP offer waits for
/// the publisher); between requests the connection's idle timeout applies.
final class HTTPRequestDeadline {
    private let timeout: TimeAmount
    private let onExpiry: @Sendable () -> Void
    private var timer: Scheduled<Void>?
    private var receiving = false

    init(timeout: TimeAmount, onExpiry: @escaping @Sendable () -> Void) {
        self.timeout = timeout
        self.onExpiry = onExpiry
    }

    /// Bytes arrived: a request has begun unless one is already arriving.
    fileprivate func bytesArrived(_ context: ChannelHandlerContext) {
        guard !receiving else { return }
        receiving = true
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(in: timeout) {
            let (deadline, context) = loopBound.value
            deadline.expire(context)
        }
    }

    fileprivate func requestEnded() {
        receiving = false
        timer?.cancel()
        timer = nil
    }

    fileprivate func cancel() {
        timer?.cancel()
        timer = nil
    }

    private func expire(_ context: ChannelHandlerContext) {
        timer = nil
        guard receiving, context.channel.isActive else { return }
        onExpiry()
        let seconds = Double(timeout.nanoseconds) / 1e9
        let body = "the request did not arrive within \(Self.format(seconds)) s\n"
        let head =
            "HTTP/1.1 408 Request Timeout\r\nContent-Type: text/plain; charset=utf-8\r\n"
            + "Content-Length: \(body.utf8.count)\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n"
        context.writeAndFlush(NIOAny(ByteBuffer(string: head + body)), promise: nil)
        context.channel.triggerUserOutboundEvent(LingeringCloseHandler.Start(timeout: .seconds(1)), promise: nil)
    }

    private static func format(_ seconds: Double) -> String {
        seconds.rounded() == seconds ? String(Int(seconds)) : String(seconds)
    }

    /// Before the HTTP decoder: starts the clock at a request's first byte.
    final class Arrival: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = ByteBuffer
        typealias InboundOut = ByteBuffer

        let deadline: HTTPRequestDeadline

        init(_ deadline: HTTPRequestDeadline) {
            self.deadline = deadline
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            deadline.bytesArrived(context)
            context.fireChannelRead(data)
        }

        func handlerRemoved(context: ChannelHandlerContext) {
            deadline.cancel()
        }
    }

    /// Right after the HTTP decoder: a request's end stops the clock.
    final class Completion: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias InboundOut = HTTPServerRequestPart

        let deadline: HTTPRequestDeadline

        init(_ deadline: HTTPRequestDeadline) {
            self.deadline = deadline
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            if case .end = unwrapInboundIn(data) { deadline.requestEnded() }
            context.fireChannelRead(data)
        }
    }
}

/// Lets only a WebSocket handshake NIO will accept reach its upgrade handler.
///
/// NIO's upgrade handler buffers nothing of a request that asks for an upgrade: when no
/// upgrader takes it (`Upgrade: h2c` from `curl --http2`, a WebSocket handshake without a key,
/// or one on another path) the request is dropped, and the connection hung unanswered until the
/// idle timeout. This handler, right after the decoder, looks at the connection's first request
/// (the only one the upgrade handler sees) and takes the `Upgrade` header off any request that is
/// not a WebSocket handshake to `/ws` with one `Sec-WebSocket-Key` and `Sec-WebSocket-Version:
/// 13`, renaming it ``refusedHeader`` so the router can say why. Such a request is then served
/// as plain HTTP/1.1, as RFC 9110 §7.8 allows a server that does not upgrade.
final class HTTPUpgradeGate: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    /// Where a refused `Upgrade` header's value goes.
    static let refusedHeader = "X-Refused-Upgrade"

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(var head) = unwrapInboundIn(data) else {
            context.fireChannelRead(data)
            return
        }
        let requested = head.headers[canonicalForm: "upgrade"].map { $0.lowercased() }
        if !requested.isEmpty, !Self.isWebSocketHandshake(head, requested: requested) {
            let value = head.headers["upgrade"].joined(separator: ", ")
            head.headers.remove(name: "upgrade")
            head.headers.replaceOrAdd(name: Self.refusedHeader, value: value)
        }
        context.fireChannelRead(wrapInboundOut(.head(head)))
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    /// What NIO's WebSocket upgrader and the server's `shouldUpgrade` accept.
    static func isWebSocketHandshake(_ head: HTTPRequestHead, requested: [String]) -> Bool {
        let path = head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return requested.contains("websocket") && path == "/ws"
            && head.headers[canonicalForm: "sec-websocket-key"].count == 1
            && head.headers[canonicalForm: "sec-websocket-version"] == ["13"]
    }
}
