import NIOCore
import SignalingProtocol

/// Encoding server messages and handing them to connections' outboxes.
extension RoomRegistry {
    func send(_ message: ServerMessage, id: RequestID? = nil, to outbox: Outbox) {
        metrics.sent(message)
        guard let line = encode(ServerEnvelope(id: id, message)) else { return }
        deliver(line, to: outbox)
    }

    func send(_ message: ServerMessage, id: RequestID? = nil, toMember uid: MemberID, in room: Room) {
        guard let member = room.members[uid], let session = sessions[member.connection] else { return }
        send(message, id: id, to: session.outbox)
    }

    func fail(_ code: SignalingError.Code, _ message: String, id: RequestID?, to outbox: Outbox) {
        send(.error(SignalingError(code, message)), id: id, to: outbox)
    }

    /// Sends one message to every member of the room but `excluded`; encoded once for all.
    func broadcast(_ message: ServerMessage, in roomID: RoomID, except excluded: MemberID? = nil) {
        guard let room = rooms[roomID] else { return }
        broadcast(message, in: room, except: excluded)
    }

    func broadcast(_ message: ServerMessage, in room: Room, except excluded: MemberID? = nil) {
        guard let line = encode(ServerEnvelope(message)) else { return }
        for member in room.members.values where member.uid != excluded {
            guard let session = sessions[member.connection] else { continue }
            metrics.sent(message)
            deliver(line, to: session.outbox)
        }
    }

    private func deliver(_ line: ByteBuffer, to outbox: Outbox) {
        guard outbox.send(line) == .overflowed else { return }
        for (id, session) in sessions where session.outbox === outbox {
            sessions[id]?.overflowed = true
            logger.warning("client too slow, closing", metadata: ["connection": "\(id)"])
        }
    }

    /// The line for `envelope`, or nil (logged) when it cannot be one: the codec refuses a line
    /// longer than clients read, so a message that would be one is never sent. Requests whose
    /// relay could be that long are refused before anything changes (``fits(_:)``).
    func encode(_ envelope: ServerEnvelope) -> ByteBuffer? {
        do {
            return ByteBuffer(bytes: try SignalingCodec.encodeLine(envelope))
        } catch {
            logger.error(
                "cannot encode a server message; not sent",
                metadata: ["type": "\(envelope.message.type)", "error": "\(error)"]
            )
            return nil
        }
    }

    /// Whether `message` makes a line a client can read; the refusal to send when not.
    func fits(_ message: ServerMessage, relaying what: String) -> SignalingError? {
        do {
            _ = try SignalingCodec.encodeLine(ServerEnvelope(id: .number(Int64.max), message))
            return nil
        } catch {
            return SignalingError(
                .tooLarge,
                "\(what) would be longer than the \(SignalingProtocol.maxLineBytes)-byte line every member reads; "
                    + "nothing was sent"
            )
        }
    }
}
