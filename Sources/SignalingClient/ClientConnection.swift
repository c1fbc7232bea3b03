import NIOCore
import NIOPosix
import NIOSSL
import SignalingProtocol

/// One TCP (or TLS) connection to the server: a queue of lines to write and a socket to read.
///
/// Requests are queued without waiting, in the order the client actor makes them; a writer task
/// drains the queue. A new connection after a reconnect is a new object with a new generation, so a
/// late line or close from an old connection can never be mistaken for the current one.
final class ClientConnection: Sendable {
    let generation: UInt64
    let channel: NIOAsyncChannel<DecodedLine, ByteBuffer>
    private let outgoing: AsyncStream<ByteBuffer>
    private let queue: AsyncStream<ByteBuffer>.Continuation

    private init(generation: UInt64, channel: NIOAsyncChannel<DecodedLine, ByteBuffer>) {
        self.generation = generation
        self.channel = channel
        (self.outgoing, self.queue) = AsyncStream.makeStream(of: ByteBuffer.self)
    }

    /// Opens the socket, with TLS when configured. Errors name the address.
    static func open(
        _ configuration: SignalingClient.Configuration,
        generation: UInt64
    ) async throws(SignalingError) -> ClientConnection {
        do {
            let sslContext = try configuration.tls.map { try NIOSSLContext(configuration: $0) }
            let hostname = configuration.serverHostname ?? (isIPAddress(configuration.host) ? nil : configuration.host)
            let (channel, handshake) = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connectTimeout(TimeAmount.nanoseconds(nanoseconds(configuration.connectTimeout)))
                .channelOption(.socketOption(.tcp_nodelay), value: 1)
                .connect(host: configuration.host, port: configuration.port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let pipeline = channel.pipeline.syncOperations
                        var handshake: EventLoopFuture<Void>?
                        if let sslContext {
                            let promise = channel.eventLoop.makePromise(of: Void.self)
                            try pipeline.addHandler(NIOSSLClientHandler(context: sslContext, serverHostname: hostname))
                            try pipeline.addHandler(TLSHandshakeWaiter(promise: promise))
                            handshake = promise.futureResult
                        }
                        // A server line too long to take is skipped and logged, not fatal (see
                        // SkippingLineDecoder): the room and the media go on.
                        try pipeline.addHandler(ByteToMessageHandler(SkippingLineDecoder()))
                        let wrapped = try NIOAsyncChannel<DecodedLine, ByteBuffer>(
                            wrappingChannelSynchronously: channel
                        )
                        return (wrapped, handshake)
                    }
                }
            if let handshake {
                do {
                    try await handshake.get()
                } catch {
                    try? await channel.channel.close()
                    throw error
                }
            }
            return ClientConnection(generation: generation, channel: channel)
        } catch {
            throw SignalingError(
                .connectionFailed,
                "cannot connect to \(configuration.host):\(configuration.port): \(error)"
            )
        }
    }

    /// Queues one line for writing.
    func send(_ line: [UInt8]) {
        queue.yield(ByteBuffer(bytes: line))
    }

    /// Closes the socket; `run` then returns.
    func close() {
        queue.finish()
        channel.channel.close(promise: nil)
    }

    /// Reads lines into `received` until the connection ends, writing queued lines meanwhile.
    /// Returns the error that ended it, nil for an orderly close.
    func run(_ received: @escaping @Sendable (DecodedLine) async -> Void) async -> (any Error)? {
        let outgoing = self.outgoing
        let queue = self.queue
        let channel = self.channel.channel
        do {
            try await self.channel.executeThenClose { inbound, outbound in
                try await withThrowingDiscardingTaskGroup { group in
                    group.addTask {
                        defer { channel.close(promise: nil) }
                        for await line in outgoing {
                            try await outbound.write(line)
                        }
                    }
                    defer { queue.finish() }
                    for try await line in inbound {
                        await received(line)
                    }
                }
            }
            return nil
        } catch {
            return error
        }
    }

    static func nanoseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
    }

    /// NIOSSL refuses an IP literal as SNI name, so only names are passed on.
    static func isIPAddress(_ host: String) -> Bool {
        (try? SocketAddress(ipAddress: host, port: 0)) != nil
    }
}
