import NIOCore
import NIOHTTP1

/// Writes one request when told the connection won (`Start`) and collects its response within
/// limits; the outcome (a response or a `WHIPError`) completes `promise`, whose completion closes
/// the connection.
///
/// Happy Eyeballs may open more than one connection to a name with IPv4 and IPv6 addresses; only
/// the one `connect` returns gets `Start`, so the others neither send the request nor fail it.
final class HTTPExchangeHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    /// The user event that arms the handler on the connection `connect` chose.
    struct Start: Sendable {}

    private let request: HTTPRequest
    private let promise: EventLoopPromise<HTTPResponse>
    private let maximumBodyBytes: Int
    /// A TLS failure seen before `Start`, shared by the request's connections: under load the
    /// handshake can fail and close the connection before `connect` reports it, and the request
    /// must then fail as `.tls`, not as a connection that closed.
    private let handshakeFailure: NIOLoopBoundBox<(any Error)?>
    private var head: HTTPResponseHead?
    private var body: [UInt8] = []
    private var armed = false
    private var finished = false

    init(
        request: HTTPRequest,
        promise: EventLoopPromise<HTTPResponse>,
        maximumBodyBytes: Int,
        handshakeFailure: NIOLoopBoundBox<(any Error)?>
    ) {
        self.request = request
        self.promise = promise
        self.maximumBodyBytes = maximumBodyBytes
        self.handshakeFailure = handshakeFailure
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard event is Start else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        armed = true
        if let error = handshakeFailure.value {
            finished = true
            promise.fail(HTTPTransport.whipError(error, sending: request.summary))
            return
        }
        var headers = request.headers
        headers.replaceOrAdd(name: "Content-Length", value: String(request.body.count))
        let head = HTTPRequestHead(
            version: .http1_1,
            method: request.method,
            uri: request.url.pathAndQuery,
            headers: headers
        )
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        if !request.body.isEmpty {
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: request.body)))), promise: nil)
        }
        let promise = self.promise
        let summary = request.summary
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenFailure { error in
            promise.fail(HTTPTransport.whipError(error, sending: summary))
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard armed && !finished else { return }
        switch unwrapInboundIn(data) {
        case .head(let head):
            // NIO drops informational (1xx) responses: this is the final head.
            self.head = head
            if let length = head.headers.first(name: "content-length").flatMap({ Int($0) }), length > maximumBodyBytes {
                tooLarge()
            }
        case .body(let buffer):
            guard body.count + buffer.readableBytes <= maximumBodyBytes else {
                tooLarge()
                return
            }
            body.append(contentsOf: buffer.readableBytesView)
        case .end:
            finished = true
            guard let head else {
                promise.fail(WHIPError(.malformedResponse, "the response to \(request.summary) has no head"))
                return
            }
            promise.succeed(HTTPResponse(status: Int(head.status.code), headers: head.headers, body: body))
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if armed {
            finished = true
            promise.fail(HTTPTransport.whipError(error, receiving: request.summary))
        } else if HTTPTransport.isTLS(error), handshakeFailure.value == nil {
            handshakeFailure.value = error
        }
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        context.fireChannelInactive()
        guard armed else { return }
        if let error = handshakeFailure.value {
            promise.fail(HTTPTransport.whipError(error, sending: request.summary))
            return
        }
        promise.fail(
            WHIPError(
                .connection,
                "the connection to \(request.url.authority) closed before the response to \(request.summary) was complete"
            )
        )
    }

    /// RFC 9725 bodies are SDP: a bigger one is refused, not buffered.
    private func tooLarge() {
        finished = true
        let status = head.map { " (\($0.status.code))" } ?? ""
        promise.fail(
            WHIPError(
                .responseTooLarge,
                "the response\(status) to \(request.summary) has a body over \(maximumBodyBytes) bytes",
                status: head.map { Int($0.status.code) }
            )
        )
    }
}
