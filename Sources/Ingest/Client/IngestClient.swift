import NIOCore
import NIOPosix

/// The capture side of the ingest socket: connects, says hello, and sends media and control.
/// What the reference capture process (`rtc-capture-sim`) and tests use; a real capture
/// extension implements the same few steps in its own language.
///
/// Each ``send(_:)`` returns once the message is written to the socket, so a client that sends
/// faster than the host reads is slowed down rather than buffering without bound.
public final class IngestClient: Sendable {
    /// The host's hello.
    public let hostHello: IngestHello
    private let channel: any Channel
    private let state: IngestClientState

    private init(hostHello: IngestHello, channel: any Channel, state: IngestClientState) {
        self.hostHello = hostHello
        self.channel = channel
        self.state = state
    }

    /// Connects and exchanges hellos. Throws `.refused` (with ``IngestError/endReason``) when
    /// the host answers with an end message instead of its hello (busy, version mismatch, …),
    /// `.connection` when the socket cannot be opened, `.timeout` when the host does not answer.
    public static func connect(
        to address: IngestAddress,
        hello: IngestHello,
        timeout: Duration = .seconds(5),
        allowNonLoopbackTCP: Bool = false
    ) async throws(IngestError) -> IngestClient {
        try address.requireLoopback(unless: allowNonLoopbackTCP)
        let state = IngestClientState()
        let channel = try await open(address, state: state, timeout: timeout)
        do {
            try await write(.hello(hello), to: channel, state: state)
        } catch {
            // A host that refuses at once (busy) may close before our hello is written; its end
            // message is still the answer, and it may be a moment behind the failed write.
            let end = await state.wait(until: .now + .seconds(1)) { $0.end }
            channel.close(promise: nil)
            guard let end, end.reason != .disconnected else { throw error }
            throw refusal(end, address: address)
        }
        let answer = await state.wait(until: .now + timeout) { snapshot -> HelloAnswer? in
            if let hostHello = snapshot.hostHello { return .accepted(hostHello) }
            if let end = snapshot.end { return .refused(end) }
            return nil
        }
        switch answer {
        case .accepted(let hostHello):
            return IngestClient(hostHello: hostHello, channel: channel, state: state)
        case .refused(let end):
            channel.close(promise: nil)
            throw refusal(end, address: address)
        case nil:
            channel.close(promise: nil)
            throw IngestError(.timeout, "\(address) did not answer the hello within \(timeout)")
        }
    }

    private static func refusal(_ end: IngestSessionEnd, address: IngestAddress) -> IngestError {
        var error = IngestError(.refused, "\(address) refused the session: \(end)")
        error.endReason = end.reason
        return error
    }

    /// The host's first message: its hello, or an end message instead.
    private enum HelloAnswer: Sendable {
        case accepted(IngestHello)
        case refused(IngestSessionEnd)
    }

    private static func open(
        _ address: IngestAddress,
        state: IngestClientState,
        timeout: Duration
    ) async throws(IngestError) -> any Channel {
        let socketAddress = try address.socketAddress()
        // Host messages are small (hello, end); the limits only bound what a broken host can make
        // this side buffer.
        let parser = IngestParser()
        let bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(TimeAmount(timeout))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    try pipeline.addHandler(
                        ByteToMessageHandler(IngestFrameDecoder(parser: parser), maximumBufferSize: 1 << 16)
                    )
                    try pipeline.addHandler(IngestClientHandler(state: state))
                }
            }
        do {
            return try await bootstrap.connect(to: socketAddress).get()
        } catch {
            throw IngestError(.connection, "cannot connect to \(address): \(error)")
        }
    }

    /// Sends one message; returns once it is written to the socket.
    public func send(_ message: IngestMessage) async throws(IngestError) {
        try await write(message)
    }

    /// Sends bytes as they are, for testing how a host reacts to broken input.
    public func sendRaw(_ bytes: [UInt8]) async throws(IngestError) {
        var buffer = channel.allocator.buffer(capacity: bytes.count)
        buffer.writeBytes(bytes)
        try await write(buffer)
    }

    private func write(_ message: IngestMessage) async throws(IngestError) {
        try await Self.write(message, to: channel, state: state)
    }

    private func write(_ buffer: ByteBuffer) async throws(IngestError) {
        try await Self.write(buffer, to: channel, state: state)
    }

    private static func write(
        _ message: IngestMessage,
        to channel: any Channel,
        state: IngestClientState
    ) async throws(IngestError) {
        var buffer = channel.allocator.buffer(capacity: 0)
        try IngestSerializer.write(message, into: &buffer)
        try await write(buffer, to: channel, state: state)
    }

    private static func write(
        _ buffer: ByteBuffer,
        to channel: any Channel,
        state: IngestClientState
    ) async throws(IngestError) {
        do {
            try await channel.writeAndFlush(buffer).get()
        } catch {
            let detail = state.snapshot.end.map { "the session has ended (\($0))" } ?? "\(error)"
            throw IngestError(.connection, "cannot send to the host: \(detail)")
        }
    }

    /// The host's end message once it came, or how the connection ended without one.
    public var hostEnd: IngestSessionEnd? { state.snapshot.end }

    /// Waits up to `timeout` for the session to end from the host's side (its end message or
    /// the connection closing).
    public func waitForEnd(timeout: Duration) async -> IngestSessionEnd? {
        await state.wait(until: .now + timeout) { $0.end }
    }

    /// Ends the session properly: an end message with `reason`, then the connection closes.
    public func finish(reason: IngestEndReason = .captureFinished, message: String = "") async {
        try? await write(.end(reason, message))
        await close()
    }

    /// Closes the connection at once, without an end message (what a crashing capture does).
    public func close() async {
        try? await channel.close()
    }
}
