import Logging
import NIOCore

/// One accepted connection on the host side.
struct IngestConnection: Sendable {
    let channel: NIOAsyncChannel<IngestInbound, ByteBuffer>
    let signals: SessionSignals
}

/// Serves one connection: claims the capture slot (or answers `busy`), checks the hello, then
/// passes media and control on to the event queue until the session ends. Every way out sends
/// the client an end message with a reason when the host is the one ending, and nothing a client
/// does can affect the listener or a later client.
struct IngestSession: Sendable {
    let state: IngestServerState
    let queue: IngestEventQueue
    let configuration: IngestServerConfiguration
    let logger: Logger

    typealias Inbound = NIOAsyncChannelInboundStream<IngestInbound>.AsyncIterator
    typealias Outbound = NIOAsyncChannelOutboundWriter<ByteBuffer>

    func serve(_ connection: IngestConnection) async {
        let channel = connection.channel.channel
        do {
            try await connection.channel.executeThenClose { inbound, outbound in
                var iterator = inbound.makeAsyncIterator()
                switch state.claim(connection.signals) {
                case .busy:
                    state.count { $0.rejectedConnections += 1 }
                    logger.notice("ingest connection refused: another capture client is streaming")
                    await sendEnd(.busy, "another capture client is streaming to this host", outbound, channel)
                case .shuttingDown:
                    state.count { $0.rejectedConnections += 1 }
                    await sendEnd(.hostShutdown, "the host is shutting down", outbound, channel)
                case .claimed(let id):
                    var sessionLogger = logger
                    sessionLogger[metadataKey: "ingest-connection"] = "\(id)"
                    await run(id, &iterator, outbound, channel, sessionLogger)
                    state.release(id)
                }
                // Half-close, and close for good after the linger time at most, so the client
                // reads an end message instead of losing it to a reset; meanwhile ignore input.
                outbound.finish()
                channel.eventLoop.scheduleTask(in: TimeAmount(configuration.lingerTimeout)) {
                    channel.close(promise: nil)
                }
                await drain(&iterator)
            }
        } catch {
            logger.debug("ingest connection closed with an error", metadata: ["error": "\(error)"])
        }
    }

    /// The handshake, then the session loop.
    private func run(
        _ id: Int,
        _ inbound: inout Inbound,
        _ outbound: Outbound,
        _ channel: any Channel,
        _ log: Logger
    )
        async
    {
        let refusal: IngestSessionEnd
        switch await next(&inbound) {
        case .message(.hello(let hello), _, _) where hello.role == .capture:
            await accept(hello, id, &inbound, outbound, channel, log)
            return
        case .message(.hello, _, _):
            state.count { $0.protocolErrors += 1 }
            refusal = IngestSessionEnd(
                reason: .unexpectedMessage,
                message: "the hello says role host; expected capture"
            )
        case .message(let message, _, _):
            state.count { $0.protocolErrors += 1 }
            refusal = IngestSessionEnd(
                reason: .unexpectedMessage,
                message: "expected a hello first, got a \(message.type) message"
            )
        case .protocolError(let error):
            state.count { $0.protocolErrors += 1 }
            refusal = IngestSessionEnd(reason: error.reasonForPeer, message: error.message)
        case .helloDeadline:
            refusal = IngestSessionEnd(reason: .timeout, message: "no hello within \(configuration.helloTimeout)")
        case .hostEnd(let reason, let message):
            refusal = IngestSessionEnd(reason: reason, message: message)
        case .closedMidMessage, nil:
            log.debug("ingest connection closed before its hello")
            return
        }
        state.count { $0.rejectedConnections += 1 }
        log.warning("ingest connection refused", metadata: ["reason": "\(refusal)"])
        // The slot first: a client that reads the end and connects again must find it free.
        state.release(id)
        await sendEnd(refusal.reason, refusal.message, outbound, channel)
    }

    private func accept(
        _ hello: IngestHello,
        _ id: Int,
        _ inbound: inout Inbound,
        _ outbound: Outbound,
        _ channel: any Channel,
        _ log: Logger
    ) async {
        let reply = IngestHello(role: .host, capabilities: configuration.capabilities, name: configuration.hostName)
        guard await send(.hello(reply), outbound, channel) else { return }
        state.count { $0.sessions += 1 }
        log.info(
            "capture connected",
            metadata: [
                "name": "\(hello.name)", "version": "\(hello.version)",
                "capabilities": "0x\(String(hello.capabilities.rawValue, radix: 16))",
            ]
        )
        await queue.push(.connected(hello))
        switch await stream(&inbound, log) {
        case .endedByCapture(let ending):
            log.info("capture ended the session", metadata: ["reason": "\(ending)"])
            await queue.push(.ended(ending))
        case .endedByHost(let ending):
            // The slot first: a client that reads the end and connects again must find it free.
            state.release(id)
            await sendEnd(ending.reason, ending.message, outbound, channel)
            if ending.reason == .requestedByHost || ending.reason == .hostShutdown {
                log.info("capture session ended by the host", metadata: ["reason": "\(ending)"])
            } else {
                log.warning("capture session ended for bad input", metadata: ["reason": "\(ending)"])
            }
            await queue.push(.disconnected(ending))
        case .lost(let ending):
            log.info("capture disconnected", metadata: ["reason": "\(ending)"])
            await queue.push(.disconnected(ending))
        }
    }

    /// The next inbound item; nil at end of input or when the connection failed.
    func next(_ inbound: inout Inbound) async -> IngestInbound? {
        do {
            return try await inbound.next()
        } catch {
            logger.debug("ingest connection failed", metadata: ["error": "\(error)"])
            return nil
        }
    }

    /// Writes one message; false when the connection is gone.
    private func send(_ message: IngestMessage, _ outbound: Outbound, _ channel: any Channel) async -> Bool {
        var buffer = channel.allocator.buffer(capacity: 128)
        do {
            try IngestSerializer.write(message, into: &buffer)
            try await outbound.write(buffer)
            return true
        } catch {
            logger.debug("ingest write failed", metadata: ["error": "\(error)"])
            return false
        }
    }

    /// Sends an end message and half-closes.
    private func sendEnd(
        _ reason: IngestEndReason,
        _ message: String,
        _ outbound: Outbound,
        _ channel: any Channel
    ) async {
        _ = await send(.end(reason, message), outbound, channel)
        outbound.finish()
    }

    /// Reads and ignores whatever is left until the client closes (or the linger close).
    private func drain(_ inbound: inout Inbound) async {
        while await next(&inbound) != nil {}
    }
}
