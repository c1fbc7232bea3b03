import NIOCore
import SignalingProtocol

/// Requests, replies, events and liveness on the current connection.
extension SignalingClient {
    func establishConnection() async throws(SignalingError) {
        generation += 1
        let connectionGeneration = generation
        let opened = try await ClientConnection.open(configuration, generation: connectionGeneration)
        guard !isClosed else {
            opened.close()
            throw SignalingError(.closed, "the client was closed")
        }
        connection = opened
        lastHeard = .now
        lastGoodbye = nil
        connectionTask = Task { [weak self] in
            let error = await opened.run { [weak self] line in
                await self?.received(line, generation: connectionGeneration)
            }
            await self?.connectionEnded(generation: connectionGeneration, error: error)
        }
        startPinging()
    }

    /// Sends a request and waits for the reply with its id; an `error` reply is thrown.
    func request(_ message: ClientMessage, timeout: Duration? = nil) async throws -> ServerEnvelope {
        guard !isClosed else { throw SignalingError(.closed, "the client was closed") }
        guard let connection else {
            throw SignalingError(.notConnected, "\(message.type): not connected to the server")
        }
        nextRequestID += 1
        let id = nextRequestID
        let line: [UInt8]
        do {
            line = try SignalingCodec.encodeLine(ClientRequest(id: .number(id), message))
        } catch {
            throw SignalingError(.invalidField, "\(message.type) cannot be encoded: \(error)")
        }
        let limit = timeout ?? configuration.requestTimeout
        let reply = try await withCheckedThrowingContinuation { continuation in
            let timer = Task { [weak self] in
                guard (try? await Task.sleep(for: limit)) != nil else { return }
                await self?.expire(id, type: message.type, after: limit)
            }
            pending[id] = PendingRequest(continuation: continuation, timeout: timer)
            connection.send(line)
        }
        if case .error(let error) = reply.message {
            throw error
        }
        return reply
    }

    private func expire(_ id: Int64, type: String, after limit: Duration) {
        guard let waiting = pending.removeValue(forKey: id) else { return }
        waiting.continuation.resume(throwing: SignalingError(.timedOut, "no reply to \(type) within \(limit)"))
    }

    func failPending(with error: SignalingError) {
        let waiting = pending.values
        pending.removeAll()
        for request in waiting {
            request.timeout.cancel()
            request.continuation.resume(throwing: error)
        }
    }

    func emit(_ event: SignalingEvent) {
        eventSink.yield(event)
    }

    func received(_ decoded: DecodedLine, generation: UInt64) {
        guard generation == self.generation else { return }
        lastHeard = .now
        let line: ByteBuffer
        switch decoded {
        case .line(let whole):
            line = whole
        case .skipped(let bytes):
            logger.error(
                "skipping a server line longer than the line limit",
                metadata: ["bytes": "\(bytes)", "limit": "\(SignalingProtocol.maxLineBytes)"]
            )
            return
        }
        let envelope: ServerEnvelope
        do {
            guard let decoded = try SignalingCodec.decodeServerLine(line.readableBytesView) else { return }
            envelope = decoded
        } catch {
            logger.warning("ignoring a server line that does not parse", metadata: ["error": "\(error)"])
            return
        }
        if case .number(let id)? = envelope.id, let waiting = pending.removeValue(forKey: id) {
            waiting.timeout.cancel()
            waiting.continuation.resume(returning: envelope)
            return
        }
        handleEvent(envelope.message)
    }

    private func handleEvent(_ message: ServerMessage) {
        switch message {
        case .memberJoined(let joined):
            emit(.memberJoined(joined.member))
        case .memberLeft(let left):
            emit(.memberLeft(left))
        case .streamPublished(let published):
            emit(.streamPublished(published.stream))
            renewIfWanted(SubscriptionTarget(publisher: published.stream.uid, kind: published.stream.kind))
        case .streamUnpublished(let unpublished):
            emit(.streamUnpublished(unpublished))
        case .subscribeRequest(let request):
            emit(.subscribeRequest(request))
        case .subscriberLeft(let left):
            emit(.subscriberLeft(left))
        case .unsubscribed(let ended):
            let target = SubscriptionTarget(publisher: ended.publisher, kind: ended.kind)
            if subscriptions[target] != nil {
                subscriptions[target]?.state = .waiting
            }
            emit(.unsubscribed(ended))
        case .signal(let signal):
            emit(.signal(signal))
        case .streamState(let change):
            emit(.streamState(change))
        case .goodbye(let goodbye):
            lastGoodbye = goodbye
            emit(.goodbye(goodbye))
        case .error(let error):
            emit(.serverError(error))
        case .joined, .pong, .ack, .subscribed:
            // Replies whose request already timed out, or id-less pings.
            break
        }
    }

    /// Pings on a timer, and treats a server silent for three intervals as gone (a half-open TCP
    /// connection never reports an error by itself).
    func startPinging() {
        pingTask?.cancel()
        pingTask = Task { [weak self] in
            while !Task.isCancelled {
                guard let interval = await self?.pingInterval else { return }
                guard (try? await Task.sleep(for: interval)) != nil else { return }
                await self?.pingTick()
            }
        }
    }

    private func pingTick() {
        guard let connection else { return }
        if ContinuousClock.now - lastHeard > pingInterval * 3 {
            logger.info("server silent for three ping intervals; reconnecting")
            connection.close()
            return
        }
        if let line = try? SignalingCodec.encodeLine(ClientRequest(.ping)) {
            connection.send(line)
        }
    }

    /// Closes the current connection on purpose (not counted as a loss: no event, no new loop).
    func dropConnection(failing error: SignalingError) {
        pingTask?.cancel()
        pingTask = nil
        connection?.close()
        connection = nil
        failPending(with: error)
    }

    /// Ends the client for good: the last event is `.closed(error)`.
    func finish(with error: SignalingError?) {
        guard !isClosed else { return }
        isClosed = true
        reconnectTask?.cancel()
        dropConnection(failing: error ?? SignalingError(.closed, "the client was closed"))
        emit(.closed(error))
        eventSink.finish()
    }

    func shutDown(with error: SignalingError?) async {
        let task = connectionTask
        finish(with: error)
        await task?.value
    }
}
