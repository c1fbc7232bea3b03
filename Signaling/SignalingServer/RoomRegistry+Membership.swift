import SignalingAuth
import SignalingProtocol

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Joining and leaving rooms (Docs/signaling.md, "Rules" and "Streams and subscriptions").
extension RoomRegistry {
    func join(_ join: ClientMessage.Join, id: RequestID?, connection: ConnectionID) {
        guard var session = sessions[connection] else { return }
        if let membership = session.membership {
            return fail(
                .alreadyJoined,
                "this connection is already in room \"\(membership.room)\" as \"\(membership.uid)\"; send leave first",
                id: id,
                to: session.outbox
            )
        }
        guard join.version == SignalingProtocol.version else {
            let error = SignalingError.versionMismatch(client: join.version)
            return fail(error.code, error.message, id: id, to: session.outbox)
        }
        if let secret = configuration.secret {
            guard let token = join.token, !token.isEmpty else {
                return fail(
                    .unauthorized,
                    "this server needs a token to join; make one with `rtc-signal token`",
                    id: id,
                    to: session.outbox
                )
            }
            do {
                try SignalingToken.verify(
                    token,
                    room: join.room,
                    uid: join.uid,
                    secret: secret,
                    now: Int64(Date().timeIntervalSince1970)
                )
            } catch {
                return fail(error.code, error.message, id: id, to: session.outbox)
            }
        }
        if rooms[join.room] == nil, rooms.count >= configuration.maxRooms {
            return fail(
                .tooManyRooms,
                "the server already has its limit of \(configuration.maxRooms) rooms",
                id: id,
                to: session.outbox
            )
        }
        if rooms[join.room]?.members[join.uid] == nil,
            let hold = reservations.hold(of: join.uid, in: join.room, at: .now)
        {
            guard let resume = join.resume, constantTimeEqual(resume, hold.resume) else {
                let seconds = max(1, Int((hold.until - .now).components.seconds))
                return fail(
                    .uidTaken,
                    "uid \"\(join.uid)\" in room \"\(join.room)\" is held for its publisher, whose connection was lost, "
                        + "for \(seconds) s more; only a join with its resume secret takes it back",
                    id: id,
                    to: session.outbox
                )
            }
        }
        if let existing = rooms[join.room]?.members[join.uid] {
            guard let resume = join.resume, constantTimeEqual(resume, existing.resume) else {
                return fail(
                    .uidTaken,
                    "uid \"\(join.uid)\" is already in room \"\(join.room)\" on another live connection",
                    id: id,
                    to: session.outbox
                )
            }
            replace(existing.connection)
        }
        var room = rooms[join.room] ?? Room()
        guard room.members.count < configuration.maxMembersPerRoom else {
            return fail(
                .roomFull,
                "room \"\(join.room)\" is full (\(configuration.maxMembersPerRoom) members)",
                id: id,
                to: session.outbox
            )
        }
        let member = RoomMember(
            uid: join.uid,
            role: join.role,
            connection: connection,
            joinOrder: room.nextSequence(),
            resume: Self.makeResumeSecret()
        )
        room.members[join.uid] = member
        reservations.release(join.uid, in: join.room)
        let joined = ServerMessage.Joined(
            room: join.room,
            uid: join.uid,
            role: join.role,
            members: room.members(except: join.uid).map(\.asMember),
            streams: room.streams(except: join.uid),
            idleTimeout: idleTimeoutSeconds,
            resume: member.resume
        )
        rooms[join.room] = room
        session.membership = Membership(room: join.room, uid: join.uid)
        sessions[connection] = session
        send(.joined(joined), id: id, to: session.outbox)
        broadcast(.memberJoined(.init(member: member.asMember)), in: join.room, except: join.uid)
        logger.info(
            "join",
            metadata: ["room": "\(join.room)", "uid": "\(join.uid)", "role": "\(join.role.rawValue)"]
        )
    }

    /// A reconnecting client proved it owns the uid: end the old connection as if it dropped.
    func replace(_ old: ConnectionID) {
        guard var session = sessions[old] else { return }
        send(
            .goodbye(.init(reason: .replaced, message: "a new connection took over this uid")),
            to: session.outbox
        )
        removeMember(of: old, session: session, reason: .replaced)
        session.membership = nil
        session.closing = true
        session.outbox.finish()
        sessions[old] = session
    }

    func leave(id: RequestID?, connection: ConnectionID) {
        guard var session = sessions[connection] else { return }
        guard session.membership != nil else {
            return fail(.notJoined, "leave needs a joined room", id: id, to: session.outbox)
        }
        removeMember(of: connection, session: session, reason: .left)
        session.membership = nil
        sessions[connection] = session
        send(.ack(.init(of: "leave")), id: id, to: session.outbox)
    }

    /// Removes the connection's member and tells everyone affected, in this order: its publishers
    /// (`subscriber-left`), its subscribers (`unsubscribed`, or `publisher-gone` for unanswered
    /// requests), then the room (`stream-unpublished` per stream, then `member-left`).
    func removeMember(of connection: ConnectionID, session: Session, reason: LeaveReason) {
        guard let membership = session.membership, var room = rooms[membership.room],
            let member = room.members[membership.uid], member.connection == connection
        else { return }
        let uid = membership.uid
        for (key, _) in room.subscriptions(where: { $0.subscriber == uid }) {
            room.subscriptions[key] = nil
            notifySubscriberLeft(key, reason: .subscriberLeft, in: room)
        }
        for (key, state) in room.subscriptions(where: { $0.publisher == uid }) {
            room.subscriptions[key] = nil
            endSubscription(
                key,
                state: state,
                reason: .publisherLeft,
                pendingError: SignalingError(
                    .publisherGone,
                    "\"\(uid)\" left the room before answering the subscribe to its \(key.kind.rawValue) stream"
                ),
                in: room
            )
        }
        room.members[uid] = nil
        if member.role == .publisher, [.disconnected, .timeout, .dropped].contains(reason),
            configuration.publisherGracePeriod > .zero
        {
            reservations.hold(
                uid,
                in: membership.room,
                resume: member.resume,
                until: .now + configuration.publisherGracePeriod,
                limit: configuration.maxConnections
            )
        }
        for stream in member.streams.values.sorted(by: { $0.order < $1.order }) {
            broadcast(.streamUnpublished(.init(uid: uid, kind: stream.stream.kind)), in: room)
        }
        broadcast(.memberLeft(.init(uid: uid, reason: reason)), in: room)
        rooms[membership.room] = room.members.isEmpty ? nil : room
        logger.info("leave", metadata: ["room": "\(membership.room)", "uid": "\(uid)", "reason": "\(reason)"])
    }

    static func makeResumeSecret() -> String {
        var generator = SystemRandomNumberGenerator()
        var text = ""
        for _ in 0..<2 {
            let word = generator.next() as UInt64
            let hex = String(word, radix: 16)
            text += String(repeating: "0", count: 16 - hex.count) + hex
        }
        return text
    }

    /// Compares secrets without an early exit, so timing does not reveal a matching prefix.
    func constantTimeEqual(_ lhs: String, _ rhs: String) -> Bool {
        let a = Array(lhs.utf8)
        let b = Array(rhs.utf8)
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}
