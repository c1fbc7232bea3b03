import SignalingProtocol

/// Publishing streams and relaying signals (Docs/signaling.md, "publish", "unpublish",
/// "stream-state", "signal").
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
        // A replacing publish keeps the stream's state: the picture is as still as it was.
        let stream = PublishedStream(
            uid: member.uid,
            description: description,
            state: member.streams[description.kind]?.stream.state
        )
        member.streams[description.kind] = OrderedStream(order: room.nextSequence(), stream: stream)
        room.members[member.uid] = member
        if let refusal = roomStateProblem(room, id: membership.room) {
            return fail(refusal.code, refusal.message, id: id, to: session.outbox)
        }
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

    /// A publisher's stream went still or moves again: remembered for `joined` and
    /// `stream-published`, and told to the other members once per change (a repeated state is
    /// acknowledged and not relayed).
    func setStreamState(_ change: ClientMessage.StreamStateChange, id: RequestID?, connection: ConnectionID) {
        guard let found = joinedMember(connection, for: "stream-state", id: id) else { return }
        let (session, membership) = (found.session, found.membership)
        var room = found.room
        var member = found.member
        guard var ordered = member.streams[change.kind] else {
            return fail(
                .notPublishing,
                "\"\(member.uid)\" does not publish a \(change.kind.rawValue) stream",
                id: id,
                to: session.outbox
            )
        }
        let stored: StreamState? = change.state == .moving ? nil : change.state
        let changed = ordered.stream.state != stored
        ordered.stream.state = stored
        member.streams[change.kind] = ordered
        room.members[member.uid] = member
        rooms[membership.room] = room
        send(.ack(.init(of: "stream-state")), id: id, to: session.outbox)
        guard changed else { return }
        broadcast(
            .streamState(.init(uid: member.uid, kind: change.kind, state: change.state)),
            in: room,
            except: member.uid
        )
        logger.debug(
            "stream-state",
            metadata: [
                "room": "\(membership.room)", "uid": "\(member.uid)", "kind": "\(change.kind.rawValue)",
                "state": "\(change.state.rawValue)",
            ]
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
        let relayed = ServerMessage.signal(.init(from: member.uid, payload: signal.payload))
        if let refusal = fits(relayed, relaying: "signal: the relayed payload") {
            return fail(refusal.code, refusal.message, id: id, to: session.outbox)
        }
        send(relayed, toMember: signal.to, in: room)
        send(.ack(.init(of: "signal")), id: id, to: session.outbox)
    }

    /// Every newcomer gets the whole room in one `joined` line: every member and every stream's
    /// SDP. A publish that would make that line too long for a client (with every free place in
    /// the room taken by a member of the longest name) is refused, so that no member's streams
    /// can ever keep another member out of the room. Every stream counts as still (its longest
    /// form), so no `stream-state` can later make that line too long.
    func roomStateProblem(_ room: Room, id: RoomID) -> SignalingError? {
        guard
            let longest = try? MemberID(
                validating: String(repeating: "m", count: IdentifierRule.maxLength - 4) + "_sub"
            )
        else { return nil }
        let free = max(0, configuration.maxMembersPerRoom - room.members.count)
        let members =
            room.members(except: longest).map(\.asMember)
            + Array(repeating: Member(uid: longest, role: .subscriber), count: free)
        let joined = ServerMessage.Joined(
            room: id,
            uid: longest,
            role: .subscriber,
            members: members,
            streams: room.streams(except: longest).map {
                var still = $0
                still.state = .still
                return still
            },
            idleTimeout: idleTimeoutSeconds,
            resume: Self.makeResumeSecret()
        )
        guard let refusal = fits(.joined(joined), relaying: "publish: the room's state with this stream") else {
            return nil
        }
        return SignalingError(refusal.code, refusal.message + "; publish a shorter SDP")
    }
}
