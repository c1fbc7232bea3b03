import SignalingProtocol

/// Getting back into the room after the connection was lost.
extension SignalingClient {
    func sendJoin(_ intent: Membership) async throws -> ServerMessage.Joined {
        let reply = try await request(
            .join(
                .init(room: intent.room, uid: intent.uid, role: intent.role, token: intent.token, resume: intent.resume)
            )
        )
        guard case .joined(let joined) = reply.message else {
            throw SignalingError(.protocolViolation, "the server answered join with \(reply.message.type)")
        }
        var current = intent
        current.resume = joined.resume
        membership = current
        // Ping well inside the server's idle timeout, whatever the configuration says.
        let third = Duration.milliseconds(Int64(joined.idleTimeout * 1000 / 3))
        pingInterval = max(.milliseconds(50), min(configuration.pingInterval, third))
        return joined
    }

    func connectionEnded(generation: UInt64, error: (any Error)?) {
        guard generation == self.generation, connection != nil else { return }
        let reason = describeLoss(error)
        dropConnection(failing: SignalingError(.disconnected, "the connection to the server was lost"))
        for target in subscriptions.keys {
            subscriptions[target]?.state = .waiting
        }
        guard !isClosed else { return }
        if lastGoodbye?.reason == .replaced {
            return finish(with: SignalingError(.closed, "another connection took over this uid"))
        }
        if reconnectTask != nil {
            // A reconnect loop is already running and will notice the connection is gone.
            return
        }
        emit(.disconnected(reason))
        guard configuration.reconnect.enabled else {
            return finish(with: reason)
        }
        reconnectTask = Task { [weak self] in
            await self?.reconnectLoop()
        }
    }

    private func describeLoss(_ error: (any Error)?) -> SignalingError {
        if let goodbye = lastGoodbye {
            return SignalingError(.disconnected, "the server said goodbye (\(goodbye.reason)): \(goodbye.message)")
        }
        if let error {
            return SignalingError(.disconnected, "the connection to the server failed: \(error)")
        }
        return SignalingError(.disconnected, "the server closed the connection")
    }

    private func reconnectLoop() async {
        var attempt = 0
        while !isClosed {
            attempt += 1
            if let maximum = configuration.reconnect.maximumAttempts, attempt > maximum {
                finish(with: SignalingError(.connectionFailed, "gave up reconnecting after \(maximum) attempts"))
                break
            }
            let delay = configuration.reconnect.delay(forAttempt: attempt)
            emit(.reconnecting(attempt: attempt, delay: delay))
            guard (try? await Task.sleep(for: delay)) != nil, !isClosed else { break }
            do {
                if connection == nil {
                    try await establishConnection()
                }
                if var intent = membership {
                    if let provider = configuration.tokenProvider {
                        intent.token = try await provider(intent.room, intent.uid)
                    }
                    let joined = try await sendJoin(intent)
                    emit(.rejoined(joined))
                    await restore(after: joined)
                } else {
                    emit(.reconnected)
                }
            } catch {
                let failure = Self.signalingError(error)
                if Self.isFinal(failure.code) {
                    finish(with: failure)
                    break
                }
                logger.debug("reconnect attempt failed", metadata: ["attempt": "\(attempt)", "error": "\(failure)"])
                dropConnection(failing: SignalingError(.disconnected, "reconnect attempt \(attempt) failed"))
                continue
            }
            if connection != nil {
                break
            }
        }
        reconnectTask = nil
    }

    /// Errors that another attempt would only repeat: give up and tell the app.
    static func isFinal(_ code: SignalingError.Code) -> Bool {
        [
            .unauthorized, .versionMismatch, .invalidRoom, .invalidUID, .invalidField, .missingField, .badJSON,
            .unknownType, .closed,
        ].contains(code)
    }

    /// Publishes our streams again (and says again which are still), then renews subscriptions whose streams are there.
    private func restore(after joined: ServerMessage.Joined) async {
        for (kind, stream) in publishedStreams.sorted(by: { $0.key < $1.key }) {
            do {
                _ = try await request(.publish(.init(stream: stream)))
                if streamStates[kind] == .still {
                    _ = try await request(.streamState(.init(kind: kind, state: .still)))
                }
            } catch {
                emit(.republishFailed(kind: kind, error: Self.signalingError(error)))
            }
        }
        let available = Set(joined.streams.map { SubscriptionTarget(publisher: $0.uid, kind: $0.kind) })
        for target in subscriptions.keys.sorted() where available.contains(target) {
            renewIfWanted(target)
        }
    }

    /// Subscribes again to a wanted stream that is waiting for its publisher.
    func renewIfWanted(_ target: SubscriptionTarget) {
        guard subscriptions[target]?.state == .waiting else { return }
        subscriptions[target]?.state = .renewing
        Task { [weak self] in
            await self?.renew(target)
        }
    }

    private func renew(_ target: SubscriptionTarget) async {
        guard let wanted = subscriptions[target] else { return }
        do {
            let reply = try await request(
                .subscribe(.init(publisher: target.publisher, kind: target.kind, receive: wanted.receive)),
                timeout: configuration.answerTimeout
            )
            guard case .subscribed(let subscribed) = reply.message else {
                throw SignalingError(.protocolViolation, "the server answered subscribe with \(reply.message.type)")
            }
            if subscriptions[target] != nil {
                subscriptions[target]?.state = .active
            }
            emit(.subscribed(subscribed))
        } catch {
            let failure = Self.signalingError(error)
            if failure.code == .subscribeRejected {
                subscriptions[target] = nil
            } else if subscriptions[target] != nil {
                subscriptions[target]?.state = .waiting
            }
            emit(.subscribeFailed(publisher: target.publisher, kind: target.kind, error: failure))
        }
    }

    static func signalingError(_ error: any Error) -> SignalingError {
        (error as? SignalingError) ?? SignalingError(.disconnected, "\(error)")
    }
}
