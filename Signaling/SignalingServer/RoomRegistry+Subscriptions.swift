import SignalingProtocol

/// Subscribe requests, answers and their ends (Docs/signaling.md, "Streams and subscriptions").
extension RoomRegistry {
    func subscribe(_ request: ClientMessage.Subscribe, id: RequestID?, connection: ConnectionID) {
        guard let found = joinedMember(connection, for: "subscribe", id: id) else { return }
        let (session, membership) = (found.session, found.membership)
        var room = found.room
        let member = found.member
        guard request.publisher != member.uid else {
            return fail(.notAllowed, "a member cannot subscribe to itself", id: id, to: session.outbox)
        }
        guard let publisher = room.members[request.publisher] else {
            return fail(
                .noSuchMember,
                "no member \"\(request.publisher)\" in room \"\(membership.room)\"",
                id: id,
                to: session.outbox
            )
        }
        let kind: StreamKind
        if let requested = request.kind {
            guard publisher.streams[requested] != nil else {
                return fail(
                    .notPublishing,
                    "\"\(publisher.uid)\" does not publish a \(requested.rawValue) stream",
                    id: id,
                    to: session.outbox
                )
            }
            kind = requested
        } else {
            let kinds = publisher.streams.keys.sorted()
            guard let only = kinds.first else {
                return fail(.notPublishing, "\"\(publisher.uid)\" publishes no stream", id: id, to: session.outbox)
            }
            guard kinds.count == 1 else {
                return fail(
                    .invalidField,
                    "subscribe: field \"kind\" is required: \"\(publisher.uid)\" publishes "
                        + kinds.map(\.rawValue).joined(separator: " and "),
                    id: id,
                    to: session.outbox
                )
            }
            kind = only
        }
        let key = SubscriptionKey(publisher: publisher.uid, kind: kind, subscriber: member.uid)
        if case .pending = room.subscriptions[key] {
            return fail(
                .notAllowed,
                "a subscribe to \"\(publisher.uid)\"'s \(kind.rawValue) stream is already waiting for an answer",
                id: id,
                to: session.outbox
            )
        }
        let relayed = ServerMessage.subscribeRequest(
            .init(subscriber: member.uid, kind: kind, receive: request.receive)
        )
        if let refusal = fits(relayed, relaying: "subscribe: the relayed subscribe-request") {
            return fail(refusal.code, refusal.message, id: id, to: session.outbox)
        }
        room.subscriptions[key] = .pending(requestID: id)
        rooms[membership.room] = room
        send(relayed, toMember: publisher.uid, in: room)
        logger.info(
            "subscribe",
            metadata: [
                "room": "\(membership.room)", "uid": "\(member.uid)", "publisher": "\(publisher.uid)",
                "kind": "\(kind.rawValue)",
            ]
        )
    }

    func unsubscribe(_ request: ClientMessage.Unsubscribe, id: RequestID?, connection: ConnectionID) {
        guard let found = joinedMember(connection, for: "unsubscribe", id: id) else { return }
        let (session, membership) = (found.session, found.membership)
        var room = found.room
        let member = found.member
        let matches = room.subscriptions(where: {
            $0.subscriber == member.uid && $0.publisher == request.publisher
                && (request.kind == nil || $0.kind == request.kind)
        })
        guard !matches.isEmpty else {
            let what =
                request.kind.map { "\"\(request.publisher)\"'s \($0.rawValue) stream" } ?? "\"\(request.publisher)\""
            return fail(.noSuchSubscription, "no subscription to \(what)", id: id, to: session.outbox)
        }
        for (key, state) in matches {
            room.subscriptions[key] = nil
            notifySubscriberLeft(key, reason: .unsubscribed, in: room)
            if case .pending(let requestID) = state {
                send(
                    .error(
                        SignalingError(
                            .noSuchSubscription,
                            "the subscribe to \"\(key.publisher)\"'s \(key.kind.rawValue) stream was cancelled by unsubscribe"
                        )
                    ),
                    id: requestID,
                    to: session.outbox
                )
            }
        }
        rooms[membership.room] = room
        send(.ack(.init(of: "unsubscribe")), id: id, to: session.outbox)
    }

    func answer(_ answer: ClientMessage.SubscribeAnswer, id: RequestID?, connection: ConnectionID) {
        guard let found = joinedMember(connection, for: "subscribe-answer", id: id) else { return }
        let (session, membership) = (found.session, found.membership)
        var room = found.room
        let member = found.member
        let key = SubscriptionKey(publisher: member.uid, kind: answer.kind, subscriber: answer.subscriber)
        guard case .pending(let requestID) = room.subscriptions[key] else {
            return fail(
                .noSuchSubscription,
                "no subscribe from \"\(answer.subscriber)\" to your \(answer.kind.rawValue) stream is waiting for an answer",
                id: id,
                to: session.outbox
            )
        }
        let relayed = ServerMessage.subscribed(.init(publisher: member.uid, kind: answer.kind, sdp: answer.sdp))
        if let refusal = fits(relayed, relaying: "subscribe-answer: the relayed answer") {
            // The subscriber waits for this answer: it learns the subscribe failed, and the
            // publisher that its viewer is gone, as after a reject.
            room.subscriptions[key] = nil
            rooms[membership.room] = room
            send(
                .error(SignalingError(.subscribeRejected, "\"\(member.uid)\"'s answer was too long to relay")),
                id: requestID,
                toMember: answer.subscriber,
                in: room
            )
            return fail(refusal.code, refusal.message, id: id, to: session.outbox)
        }
        room.subscriptions[key] = .active
        rooms[membership.room] = room
        send(relayed, id: requestID, toMember: answer.subscriber, in: room)
        send(.ack(.init(of: "subscribe-answer")), id: id, to: session.outbox)
    }

    func reject(_ reject: ClientMessage.SubscribeReject, id: RequestID?, connection: ConnectionID) {
        guard let found = joinedMember(connection, for: "subscribe-reject", id: id) else { return }
        let (session, membership) = (found.session, found.membership)
        var room = found.room
        let member = found.member
        let key = SubscriptionKey(publisher: member.uid, kind: reject.kind, subscriber: reject.subscriber)
        guard case .pending(let requestID) = room.subscriptions[key] else {
            return fail(
                .noSuchSubscription,
                "no subscribe from \"\(reject.subscriber)\" to your \(reject.kind.rawValue) stream is waiting for an answer",
                id: id,
                to: session.outbox
            )
        }
        room.subscriptions[key] = nil
        rooms[membership.room] = room
        send(
            .error(SignalingError(.subscribeRejected, "\"\(member.uid)\" rejected the subscribe: \(reject.reason)")),
            id: requestID,
            toMember: reject.subscriber,
            in: room
        )
        send(.ack(.init(of: "subscribe-reject")), id: id, to: session.outbox)
    }

    /// Whether `message` answers (or rejects) a subscribe this server relayed to the member on
    /// `connection` and that still waits: such answers are not rate-limited.
    func isAnswerToRelayedSubscribe(_ message: ClientMessage, from connection: ConnectionID) -> Bool {
        let subscriber: MemberID
        let kind: StreamKind
        switch message {
        case .subscribeAnswer(let answer): (subscriber, kind) = (answer.subscriber, answer.kind)
        case .subscribeReject(let reject): (subscriber, kind) = (reject.subscriber, reject.kind)
        default: return false
        }
        guard let membership = sessions[connection]?.membership, let room = rooms[membership.room] else { return false }
        let key = SubscriptionKey(publisher: membership.uid, kind: kind, subscriber: subscriber)
        if case .pending = room.subscriptions[key] { return true }
        return false
    }

    /// Tells a publisher to stop sending to a subscriber.
    func notifySubscriberLeft(_ key: SubscriptionKey, reason: EndReason, in room: Room) {
        send(
            .subscriberLeft(.init(subscriber: key.subscriber, kind: key.kind, reason: reason)),
            toMember: key.publisher,
            in: room
        )
    }

    /// Tells a subscriber its subscription ended on the publisher's side: `unsubscribed` when it was
    /// active, or an error reply to its still-unanswered `subscribe`.
    func endSubscription(
        _ key: SubscriptionKey,
        state: SubscriptionState,
        reason: EndReason,
        pendingError: SignalingError,
        in room: Room
    ) {
        switch state {
        case .active:
            send(
                .unsubscribed(.init(publisher: key.publisher, kind: key.kind, reason: reason)),
                toMember: key.subscriber,
                in: room
            )
        case .pending(let requestID):
            send(.error(pendingError), id: requestID, toMember: key.subscriber, in: room)
        }
    }
}
