import NIOCore
import NIOHTTP1

/// What an accepted connection turned out to be, once its first bytes were read.
enum ConnectionKind: Sendable {
    /// JSON lines over TCP (Docs/signaling.md).
    case lines(NIOAsyncChannel<ByteBuffer, ByteBuffer>)
    /// The same JSON messages, one per WebSocket text frame (`GET /ws` upgraded).
    case webSocket(NIOAsyncChannel<ByteBuffer, ByteBuffer>)
    /// HTTP/1.1 requests: the viewer page, WHEP, `/metrics`, `/healthz`.
    case http(NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>)
}

/// Tells HTTP from the JSON-lines protocol by the first bytes of a connection, then builds the
/// pipeline for it and removes itself (the bytes it read go on to that pipeline).
///
/// A JSON line starts with `{` (or white space); an HTTP/1.1 request with a method token and a
/// space (RFC 9112 §3). Only the methods the server serves count as HTTP (`GET`, `HEAD`,
/// `POST`, `DELETE`, `OPTIONS`, `PATCH`, `PUT`: the last two are answered 405): at most 8 bytes
/// are needed to decide, and anything else is a line, which the line protocol then refuses with
/// its own error.
final class ProtocolSniffer: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    /// Builds the pipeline for the kind decided, after this handler, and gives its async channel.
    typealias Configure = (any Channel, Decision) throws -> EventLoopFuture<ConnectionKind>

    enum Decision: Equatable {
        case http
        case lines
    }

    static let methods = ["GET ", "HEAD ", "POST ", "DELETE ", "OPTIONS ", "PATCH ", "PUT "].map { Array($0.utf8) }
    static let longestMethod = methods.map(\.count).max() ?? 8

    private let configure: Configure
    private let result: EventLoopPromise<ConnectionKind>
    /// A connection that says nothing at all is closed after this (the idle timeout).
    private let timeout: TimeAmount
    private var buffered: ByteBuffer?
    private var decided = false
    private var deadline: Scheduled<Void>?

    init(result: EventLoopPromise<ConnectionKind>, timeout: TimeAmount, configure: @escaping Configure) {
        self.result = result
        self.timeout = timeout
        self.configure = configure
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        deadline = context.eventLoop.scheduleTask(in: timeout) {
            let (sniffer, context) = loopBound.value
            sniffer.silent(context)
        }
    }

    /// Nothing arrived within the idle timeout: a line client that never spoke, which the line
    /// protocol tells `goodbye` `idle-timeout` (an HTTP client would have sent its request).
    private func silent(_ context: ChannelHandlerContext) {
        guard !decided else { return }
        decided = true
        do {
            try configure(context.channel, .lines).cascade(to: result)
        } catch {
            result.fail(error)
            context.close(promise: nil)
            return
        }
        context.fireErrorCaught(IdleTimeoutError())
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
    }

    /// `.http` or `.lines` once `prefix` says which; nil while it could still be either.
    static func decide(_ prefix: some Collection<UInt8>) -> Decision? {
        let bytes = Array(prefix.prefix(longestMethod))
        var possible = false
        for method in methods {
            if bytes.count >= method.count {
                if bytes.starts(with: method) { return .http }
            } else if method.starts(with: bytes) {
                possible = true
            }
        }
        return possible ? nil : .lines
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var incoming = unwrapInboundIn(data)
        guard !decided else {
            context.fireChannelRead(data)
            return
        }
        if buffered == nil {
            buffered = incoming
        } else {
            buffered?.writeBuffer(&incoming)
        }
        guard let bytes = buffered, let decision = Self.decide(bytes.readableBytesView) else { return }
        decided = true
        deadline?.cancel()
        do {
            let kind = try configure(context.channel, decision)
            kind.cascade(to: result)
            // No connection to serve (a malformed first request, answered 400 by NIO): close,
            // lingering so that answer arrives.
            let channel = context.channel
            kind.whenFailure { _ in channel.triggerUserOutboundEvent(LingeringCloseHandler.Start(), promise: nil) }
        } catch {
            result.fail(error)
            context.close(promise: nil)
            return
        }
        buffered = nil
        context.fireChannelRead(wrapInboundOut(bytes))
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !decided {
            decided = true
            result.fail(ChannelError.eof)
        }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if !decided {
            decided = true
            result.fail(error)
            context.close(promise: nil)
            return
        }
        context.fireErrorCaught(error)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // The peer half-closed before saying anything: nothing to serve.
        if case ChannelEvent.inputClosed = event, !decided {
            decided = true
            result.fail(ChannelError.eof)
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }
}
