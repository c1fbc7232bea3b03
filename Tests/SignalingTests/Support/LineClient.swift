import NIOCore
import NIOPosix
import NIOSSL
import SignalingProtocol
import Synchronization
import Testing

/// A raw test client: writes whatever bytes a test wants and reads the server's lines one by one,
/// so tests see exactly what went over the socket (no client library in between).
final class LineClient: Sendable {
    let channel: any Channel
    let inbox: LineInbox

    private init(channel: any Channel, inbox: LineInbox) {
        self.channel = channel
        self.inbox = inbox
    }

    /// `reading: false` connects a client that never reads, with a tiny receive buffer: a stalled peer.
    static func connect(
        port: Int,
        tls: TLSConfiguration? = nil,
        serverHostname: String? = nil,
        reading: Bool = true
    ) async throws -> LineClient {
        let inbox = LineInbox()
        let sslContext = try tls.map { try NIOSSLContext(configuration: $0) }
        var bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        if !reading {
            bootstrap = bootstrap.channelOption(.autoRead, value: false)
                .channelOption(.socketOption(.so_rcvbuf), value: 4_096)
        }
        let channel =
            try await bootstrap
            .connectTimeout(.seconds(10))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    if let sslContext {
                        try pipeline.addHandler(
                            NIOSSLClientHandler(context: sslContext, serverHostname: serverHostname)
                        )
                    }
                    // Larger than the protocol limit: the test client must not be what cuts lines.
                    try pipeline.addHandler(ByteToMessageHandler(BoundedLineDecoder(maxLineBytes: 1 << 20)))
                    try pipeline.addHandler(CollectingHandler(inbox: inbox))
                }
            }
            .connect(host: "127.0.0.1", port: port)
            .get()
        return LineClient(channel: channel, inbox: inbox)
    }

    /// Sends `text` plus a newline.
    func send(_ text: String) async throws {
        try await sendBytes(Array(text.utf8) + [UInt8(ascii: "\n")])
    }

    func sendBytes(_ bytes: [UInt8]) async throws {
        try await channel.writeAndFlush(ByteBuffer(bytes: bytes)).get()
    }

    func send(_ request: ClientRequest) async throws {
        try await sendBytes(try SignalingCodec.encodeLine(request))
    }

    /// The next line, decoded; fails the test (throws) on timeout or close.
    func next(
        timeout: Duration = .seconds(10),
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws
        -> ServerEnvelope
    {
        let line = try await nextLine(timeout: timeout, sourceLocation: sourceLocation)
        let decoded = try SignalingCodec.decodeServerLine(Array(line.utf8))
        return try #require(decoded, "unknown server message: \(line)", sourceLocation: sourceLocation)
    }

    func nextLine(
        timeout: Duration = .seconds(10),
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws
        -> String
    {
        switch await inbox.next(timeout: timeout) {
        case .line(let line):
            return line
        case .closed:
            throw TestFailure("connection closed while waiting for a line")
        case .timedOut:
            throw TestFailure("no line within \(timeout)")
        }
    }

    /// Collects every message up to and including the pong answering a ping with `barrier` as id.
    /// Because the server handles one connection's lines in order, everything the server queued
    /// for this client before that point has arrived.
    func drainUntilBarrier(_ barrier: String = "barrier") async throws -> [ServerEnvelope] {
        try await send(ClientRequest(id: .string(barrier), .ping))
        var seen: [ServerEnvelope] = []
        while true {
            let envelope = try await next()
            if envelope == ServerEnvelope(id: .string(barrier), .pong) { return seen }
            seen.append(envelope)
        }
    }

    /// Waits for the server to close the connection; returns the lines that came before.
    func linesUntilClosed(timeout: Duration = .seconds(10)) async throws -> [String] {
        var lines: [String] = []
        while true {
            switch await inbox.next(timeout: timeout) {
            case .line(let line): lines.append(line)
            case .closed: return lines
            case .timedOut: throw TestFailure("connection still open after \(timeout); got \(lines)")
            }
        }
    }

    func close() async {
        try? await channel.close()
    }
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Lines received by a ``LineClient``.
typealias LineInbox = Mailbox<String>

/// A queue filled by one side (a channel handler, an event stream) and read with a timeout.
final class Mailbox<Element: Sendable>: Sendable {
    enum Next: Sendable {
        case line(Element)
        case closed
        case timedOut
    }

    private struct State {
        var items: [Element] = []
        var closed = false
        var waiter: (id: Int, continuation: CheckedContinuation<Next, Never>)?
        var nextWaiterID = 0
    }

    private let state = Mutex(State())

    func deliver(_ item: Element) {
        let waiter = state.withLock { state -> CheckedContinuation<Next, Never>? in
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter.continuation
            }
            state.items.append(item)
            return nil
        }
        waiter?.resume(returning: .line(item))
    }

    func close() {
        let waiter = state.withLock { state -> CheckedContinuation<Next, Never>? in
            state.closed = true
            defer { state.waiter = nil }
            return state.waiter?.continuation
        }
        waiter?.resume(returning: .closed)
    }

    func next(timeout: Duration) async -> Next {
        await withCheckedContinuation { continuation in
            let outcome = state.withLock { state -> (Next?, Int) in
                if !state.items.isEmpty { return (.line(state.items.removeFirst()), 0) }
                if state.closed { return (.closed, 0) }
                state.nextWaiterID += 1
                state.waiter = (state.nextWaiterID, continuation)
                return (nil, state.nextWaiterID)
            }
            if let immediate = outcome.0 {
                continuation.resume(returning: immediate)
                return
            }
            let waiterID = outcome.1
            Task {
                try? await Task.sleep(for: timeout)
                self.expire(waiterID)
            }
        }
    }

    private func expire(_ id: Int) {
        let waiter = state.withLock { state -> CheckedContinuation<Next, Never>? in
            guard let waiter = state.waiter, waiter.id == id else { return nil }
            state.waiter = nil
            return waiter.continuation
        }
        waiter?.resume(returning: .timedOut)
    }
}

/// Hands each decoded line to the inbox, and the end of the connection too.
private final class CollectingHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer

    let inbox: LineInbox

    init(inbox: LineInbox) {
        self.inbox = inbox
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        inbox.deliver(String(decoding: buffer.readableBytesView, as: UTF8.self))
    }

    func channelInactive(context: ChannelHandlerContext) {
        inbox.close()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
