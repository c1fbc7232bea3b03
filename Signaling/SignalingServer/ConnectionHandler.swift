import Logging
import NIOCore
import SignalingProtocol

/// Serves one client connection (JSON lines over TCP, or the same messages over a WebSocket,
/// which ``WebSocketLineAdapter`` makes look like lines): reads lines, decodes and rate-limits them, hands requests to the
/// registry, and writes the connection's queued replies and events. Catches all of its own errors,
/// so nothing one client does can end another client's connection or the server.
struct ConnectionHandler: Sendable {
    let registry: RoomRegistry
    let configuration: SignalingServerConfiguration
    let logger: Logger
    var metrics: ServerMetrics { registry.metrics }

    /// Why the read side stopped, and what to tell the client before closing.
    private struct Ending {
        var reason: LeaveReason
        var goodbye: ServerMessage.Goodbye?
    }

    func handle(_ channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>, transport: ServerMetrics.Transport) async {
        metrics.opened(transport)
        defer { metrics.closed(transport) }
        let outbox = Outbox(channel: channel.channel, limitBytes: configuration.outboxLimitBytes)
        do {
            try await channel.executeThenClose { inbound, outbound in
                let connection: ConnectionID
                switch await registry.register(outbox) {
                case .admitted(let id):
                    connection = id
                case .refused(let goodbye):
                    let line = try SignalingCodec.encodeLine(ServerEnvelope(.goodbye(goodbye)))
                    try await outbound.write(ByteBuffer(bytes: line))
                    try await Self.closeAfterWrites(channel.channel, linger: .milliseconds(200))
                    return
                }
                var connectionLogger = logger
                connectionLogger[metadataKey: "connection"] = "\(connection)"
                connectionLogger.debug(
                    "connected",
                    metadata: ["remote": "\(channel.channel.remoteAddress?.description ?? "unknown")"]
                )
                await withDiscardingTaskGroup { group in
                    group.addTask {
                        await Self.drain(outbox, into: outbound, closing: channel.channel)
                    }
                    let ending = await readLoop(inbound, connection: connection, outbox: outbox)
                    connectionLogger.debug("disconnected", metadata: ["reason": "\(ending.reason)"])
                    await registry.disconnect(connection, reason: ending.reason, goodbye: ending.goodbye)
                }
                // The writer started a lingering close; returning would close at once and could
                // turn the last lines into a reset.
                try await channel.channel.closeFuture.get()
            }
        } catch {
            logger.debug("connection ended with an error", metadata: ["error": "\(error)"])
        }
    }

    /// Writes queued lines in order; once the queue is finished and drained, closes the connection
    /// (lingering, so the last lines arrive).
    private static func drain(
        _ outbox: Outbox,
        into outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>,
        closing channel: any Channel
    ) async {
        do {
            for await line in outbox.lines {
                try await outbound.write(line)
                outbox.written(line)
            }
        } catch {
            // The peer is gone; closing below ends the read side too.
        }
        channel.triggerUserOutboundEvent(LingeringCloseHandler.Start(), promise: nil)
    }

    /// Starts the lingering close and waits until the connection is closed. A refused connection
    /// lingers briefly: a flood of them must not hold the descriptors the limit protects.
    private static func closeAfterWrites(_ channel: any Channel, linger: TimeAmount) async throws {
        channel.triggerUserOutboundEvent(LingeringCloseHandler.Start(timeout: linger), promise: nil)
        try await channel.closeFuture.get()
    }

    private func readLoop(
        _ inbound: NIOAsyncChannelInboundStream<ByteBuffer>,
        connection: ConnectionID,
        outbox: Outbox
    ) async -> Ending {
        var limiter = MessageRateLimiter(
            burst: configuration.messageBurst,
            perSecond: configuration.messagesPerSecond,
            now: .now
        )
        var badInARow = 0
        do {
            for try await line in inbound {
                if line.readableBytesView.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }) {
                    _ = limiter.allow(at: .now)
                    continue
                }
                let decoded = SignalingCodec.decodeRequest(line.readableBytesView)
                // A publisher's answers to the subscribes the server relayed to it are as many as
                // those subscribes, which the subscribers' own limits bound: they take no token.
                // Sixty WHEP viewers at once otherwise cost the publisher 15 of its answers.
                let answersRelayed: Bool
                if case .success(let request) = decoded {
                    answersRelayed = await registry.isAnswerToRelayedSubscribe(request.message, from: connection)
                } else {
                    answersRelayed = false
                }
                guard answersRelayed || limiter.allow(at: .now) else {
                    reply(
                        SignalingError(
                            .rateLimited,
                            "more than \(configuration.messageBurst) messages at once or "
                                + "\(Self.format(configuration.messagesPerSecond)) per second; message dropped"
                        ),
                        id: requestID(of: decoded),
                        to: outbox
                    )
                    continue
                }
                switch decoded {
                case .success(let request):
                    metrics.received(request.message.type)
                    badInARow = 0
                    await registry.handle(request, from: connection)
                case .failure(let failure):
                    metrics.received("invalid")
                    badInARow += 1
                    reply(failure.error, id: failure.id, to: outbox)
                    if badInARow >= configuration.maxConsecutiveBadMessages {
                        return Ending(
                            reason: .dropped,
                            goodbye: .init(
                                reason: .tooManyErrors,
                                message: "closing after \(badInARow) bad messages in a row"
                            )
                        )
                    }
                }
            }
            return Ending(reason: .disconnected, goodbye: nil)
        } catch let error as SignalingError where error.code == .lineTooLong {
            reply(error, id: nil, to: outbox)
            return Ending(reason: .dropped, goodbye: .init(reason: .lineTooLong, message: error.message))
        } catch is IdleTimeoutError {
            return Ending(
                reason: .timeout,
                goodbye: .init(
                    reason: .idleTimeout,
                    message: "nothing received for \(configuration.idleTimeout); clients must ping"
                )
            )
        } catch {
            // Resets, TLS failures and the like: the connection is simply gone.
            return Ending(reason: .disconnected, goodbye: nil)
        }
    }

    private func requestID(of decoded: Result<ClientRequest, SignalingCodec.RequestFailure>) -> RequestID? {
        switch decoded {
        case .success(let request): return request.id
        case .failure(let failure): return failure.id
        }
    }

    /// `20` rather than `20.0`, `0.5` as is.
    static func format(_ rate: Double) -> String {
        rate.rounded() == rate && abs(rate) < 1e15 ? String(Int64(rate)) : String(rate)
    }

    private func reply(_ error: SignalingError, id: RequestID?, to outbox: Outbox) {
        metrics.sent(.error(error))
        guard let line = try? SignalingCodec.encodeLine(ServerEnvelope(id: id, .error(error))) else { return }
        outbox.send(ByteBuffer(bytes: line))
    }
}
