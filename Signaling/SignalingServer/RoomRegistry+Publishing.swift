import SignalingProtocol

/// Publishing streams and relaying signals (Docs/signaling.md, "publish", "unpublish", "signal").
extension RoomRegistry {
    /// The joined member behind a connection, or an error reply saying the request needs one.
    func joinedMember(
        _ connection: ConnectionID,
        for request: String,
        id: RequestID?
    ) -> (session: Session, membership: Membership, room: Room, member: RoomMember)? {
        guard let session = sessions[connection] else { return nil }
        guard let membership = session.membership, let room = rooms[membership.room],
            let member = room.members[membership.uid]
        else {
            fail(.notJoined, "\(request) needs a joined room", id: id, to: session.outbox)
            return nil
        }
        return (session, membership, room, member)
    }

    func publish(_ description: StreamDescription, id: RequestID?, connection: ConnectionID) {
        guard let found = joinedMember(connection, for: "publish", id: id) else { return }
        let (session, membership) = (found.session, found.membership)
        var room = found.room
        var member = found.member
        guard member.role == .publisher else {
            return fail(
                .notAllowed,
                "only publishers may publish; \"\(member.uid)\" joined as a subscriber",
                id: id,
                to: session.outbox
            )
        }
        let stream = PublishedStream(uid: member.uid, description: description)
        member.streams[description.kind] = OrderedStream(order: room.nextSequence(), stream: stream)
        room.members[member.uid] = member
        rooms[membership.room] = room
        send(.ack(.init(of: "publish")), id: id, to: session.outbox)
        broadcast(.streamPublished(.init(stream: stream)), in: room, except: member.uid)
        logger.info(
            "publish",
            metadata: [
                "room": "\(membership.room)", "uid": "\(member.uid)", "kind": "\(description.kind.rawValue)",
            ]
        )
    }

    func unpublish(_ kind: StreamKind, id: RequestID?, connection: ConnectionID) {
        guard let found = joinedMember(connection, for: "unpublish", id: id) else { return }
        let (session, membership) = (found.session, found.membership)
        var room = found.room
        var member = found.member
        guard member.streams[kind] != nil else {
            return fail(
                .notPublishing,
                "\"\(member.uid)\" does not publish a \(kind.rawValue) stream",
                id: id,
                to: session.outbox
            )
        }
        member.streams[kind] = nil
        room.members[member.uid] = member
        for (key, state) in room.subscriptions(where: { $0.publisher == member.uid && $0.kind == kind }) {
            room.subscriptions[key] = nil
            endSubscription(
                key,
                state: state,
                reason: .streamUnpublished,
                pendingError: SignalingError(
                    .notPublishing,
                    "\"\(member.uid)\" stopped publishing its \(kind.rawValue) stream before answering"
                ),
                in: room
            )
        }
        rooms[membership.room] = room
        send(.ack(.init(of: "unpublish")), id: id, to: session.outbox)
        broadcast(.streamUnpublished(.init(uid: member.uid, kind: kind)), in: room, except: member.uid)
        logger.info(
            "unpublish",
            metadata: ["room": "\(membership.room)", "uid": "\(member.uid)", "kind": "\(kind.rawValue)"]
        )
    }

    func relay(_ signal: ClientMessage.Signal, id: RequestID?, connection: ConnectionID) {
        guard let (session, membership, room, member) = joinedMember(connection, for: "signal", id: id) else {
            return
        }
        guard signal.to != member.uid else {
            return fail(.notAllowed, "a member cannot signal itself", id: id, to: session.outbox)
        }
        guard room.members[signal.to] != nil else {
            return fail(
                .noSuchMember,
                "no member \"\(signal.to)\" in room \"\(membership.room)\"",
                id: id,
                to: session.outbox
            )
        }
        guard encode(ServerEnvelope(.signal(.init(from: member.uid, payload: signal.payload)))) != nil else {
            return fail(.invalidField, "signal: field \"payload\" cannot be relayed", id: id, to: session.outbox)
        }
        send(.signal(.init(from: member.uid, payload: signal.payload)), toMember: signal.to, in: room)
        send(.ack(.init(of: "signal")), id: id, to: session.outbox)
    }
}
