import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import Synchronization
import WHIP

/// A request as the server received it.
struct ReceivedRequest: Sendable {
    var method: HTTPMethod
    var uri: String
    var headers: HTTPHeaders
    var body: [UInt8]
}

/// What the server does with a request to a path.
enum ScriptedReply: Sendable {
    /// A response with these headers and body; Content-Length is added unless `chunked`.
    case respond(Int, [(String, String)] = [], body: String = "", chunked: Bool = false)
    /// Holds the connection open and says nothing.
    case never
}

/// An HTTP/1.1 server on 127.0.0.1 (a free port) that answers each path as scripted and records
/// every request; TLS when given a context.
final class ScriptedHTTPServer: Sendable {
    let port: Int
    let scheme: String
    private let channel: any Channel
    private let state = Mutex<(routes: [String: ScriptedReply], requests: [ReceivedRequest])>(([:], []))

    private init(port: Int, scheme: String, channel: any Channel) {
        self.port = port
        self.scheme = scheme
        self.channel = channel
    }

    static func start(tls: NIOSSLContext? = nil) async throws -> ScriptedHTTPServer {
        let box = Mutex<ScriptedHTTPServer?>(nil)
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    if let tls {
                        try pipeline.addHandler(NIOSSLServerHandler(context: tls))
                    }
                    try pipeline.configureHTTPServerPipeline(withErrorHandling: true)
                    if let server = box.withLock({ $0 }) {
                        try pipeline.addHandler(ScriptedHandler(server: server))
                    }
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        guard let port = channel.localAddress?.port else {
            try await channel.close()
            throw ChannelError.unknownLocalAddress
        }
        let server = ScriptedHTTPServer(port: port, scheme: tls == nil ? "http" : "https", channel: channel)
        box.withLock { $0 = server }
        return server
    }

    /// Scripts the reply to every request for `path` (the request target, query included).
    func route(_ path: String, _ reply: ScriptedReply) {
        state.withLock { $0.routes[path] = reply }
    }

    func url(_ path: String) throws -> WHIPURL {
        try WHIPURL(parsing: "\(scheme)://127.0.0.1:\(port)\(path)")
    }

    var requests: [ReceivedRequest] { state.withLock { $0.requests } }

    func stop() async {
        try? await channel.close()
    }

    fileprivate func received(_ request: ReceivedRequest) -> ScriptedReply {
        state.withLock { state in
            state.requests.append(request)
            return state.routes[request.uri] ?? .respond(404, [("Content-Type", "text/plain")], body: "no route")
        }
    }
}

/// Reads one request, records it, writes the scripted reply and closes.
private final class ScriptedHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let server: ScriptedHTTPServer
    private var request: ReceivedRequest?

    init(server: ScriptedHTTPServer) {
        self.server = server
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            request = ReceivedRequest(method: head.method, uri: head.uri, headers: head.headers, body: [])
        case .body(let buffer):
            request?.body.append(contentsOf: buffer.readableBytesView)
        case .end:
            guard let request else { return }
            self.request = nil
            reply(server.received(request), context: context)
        }
    }

    private func reply(_ reply: ScriptedReply, context: ChannelHandlerContext) {
        guard case .respond(let status, let fields, let body, let chunked) = reply else { return }
        var headers = HTTPHeaders(fields)
        headers.add(name: "Connection", value: "close")
        if !chunked {
            headers.add(name: "Content-Length", value: String(body.utf8.count))
        }
        let head = HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: status), headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        if !body.isEmpty {
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: body)))), promise: nil)
        }
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
            channel.close(promise: nil)
        }
    }
}
