/// JSON shape of whole lines: `type` and `id` at the top level, the message's own fields beside them
/// (Docs/signaling.md, "Framing"). Payload structs encode into the same JSON object as the header.

enum HeaderKeys: String, CodingKey {
    case type, id, version
}

extension SignalingError: Codable {
    enum CodingKeys: String, CodingKey {
        case code, message
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            Code(rawValue: try container.decode(String.self, forKey: .code)),
            try container.decode(String.self, forKey: .message)
        )
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(code.rawValue, forKey: .code)
        try container.encode(message, forKey: .message)
    }
}

extension ClientRequest: Codable {
    /// Every client message type, in the order the spec lists them.
    public static let knownTypes = [
        "join", "leave", "publish", "unpublish", "subscribe", "unsubscribe", "ping", "signal",
        "subscribe-answer", "subscribe-reject", "stream-state",
    ]

    public init(from decoder: any Decoder) throws {
        let header = try decoder.container(keyedBy: HeaderKeys.self)
        let id = try header.decodeIfPresent(RequestID.self, forKey: .id)
        let type = try header.decode(String.self, forKey: .type)
        let message: ClientMessage
        switch type {
        case "join": message = .join(try .init(from: decoder))
        case "leave": message = .leave
        case "publish": message = .publish(try .init(from: decoder))
        case "unpublish": message = .unpublish(try .init(from: decoder))
        case "subscribe": message = .subscribe(try .init(from: decoder))
        case "unsubscribe": message = .unsubscribe(try .init(from: decoder))
        case "ping": message = .ping
        case "signal": message = .signal(try .init(from: decoder))
        case "subscribe-answer": message = .subscribeAnswer(try .init(from: decoder))
        case "subscribe-reject": message = .subscribeReject(try .init(from: decoder))
        case "stream-state": message = .streamState(try .init(from: decoder))
        default:
            throw SignalingError(
                .unknownType,
                "unknown message type \(quoted(type)); expected one of \(Self.knownTypes.joined(separator: ", "))"
            )
        }
        self.init(id: id, message)
    }

    public func encode(to encoder: any Encoder) throws {
        var header = encoder.container(keyedBy: HeaderKeys.self)
        try header.encode(message.type, forKey: .type)
        try header.encodeIfPresent(id, forKey: .id)
        switch message {
        case .join(let payload): try payload.encode(to: encoder)
        case .leave, .ping: break
        case .publish(let payload): try payload.encode(to: encoder)
        case .unpublish(let payload): try payload.encode(to: encoder)
        case .subscribe(let payload): try payload.encode(to: encoder)
        case .unsubscribe(let payload): try payload.encode(to: encoder)
        case .signal(let payload): try payload.encode(to: encoder)
        case .subscribeAnswer(let payload): try payload.encode(to: encoder)
        case .subscribeReject(let payload): try payload.encode(to: encoder)
        case .streamState(let payload): try payload.encode(to: encoder)
        }
    }
}

extension ServerEnvelope: Codable {
    public init(from decoder: any Decoder) throws {
        let header = try decoder.container(keyedBy: HeaderKeys.self)
        let id = try header.decodeIfPresent(RequestID.self, forKey: .id)
        let type = try header.decode(String.self, forKey: .type)
        let message: ServerMessage
        switch type {
        case "joined": message = .joined(try .init(from: decoder))
        case "pong": message = .pong
        case "ack": message = .ack(try .init(from: decoder))
        case "subscribed": message = .subscribed(try .init(from: decoder))
        case "error": message = .error(try .init(from: decoder))
        case "member-joined": message = .memberJoined(try .init(from: decoder))
        case "member-left": message = .memberLeft(try .init(from: decoder))
        case "stream-published": message = .streamPublished(try .init(from: decoder))
        case "stream-unpublished": message = .streamUnpublished(try .init(from: decoder))
        case "subscribe-request": message = .subscribeRequest(try .init(from: decoder))
        case "unsubscribed": message = .unsubscribed(try .init(from: decoder))
        case "subscriber-left": message = .subscriberLeft(try .init(from: decoder))
        case "signal": message = .signal(try .init(from: decoder))
        case "stream-state": message = .streamState(try .init(from: decoder))
        case "goodbye": message = .goodbye(try .init(from: decoder))
        default:
            throw SignalingError(.unknownType, "unknown message type \(quoted(type))")
        }
        self.init(id: id, message)
    }

    public func encode(to encoder: any Encoder) throws {
        var header = encoder.container(keyedBy: HeaderKeys.self)
        try header.encode(message.type, forKey: .type)
        try header.encodeIfPresent(id, forKey: .id)
        switch message {
        case .joined(let payload): try payload.encode(to: encoder)
        case .pong: break
        case .ack(let payload): try payload.encode(to: encoder)
        case .subscribed(let payload): try payload.encode(to: encoder)
        case .error(let payload): try payload.encode(to: encoder)
        case .memberJoined(let payload): try payload.encode(to: encoder)
        case .memberLeft(let payload): try payload.encode(to: encoder)
        case .streamPublished(let payload): try payload.encode(to: encoder)
        case .streamUnpublished(let payload): try payload.encode(to: encoder)
        case .subscribeRequest(let payload): try payload.encode(to: encoder)
        case .unsubscribed(let payload): try payload.encode(to: encoder)
        case .subscriberLeft(let payload): try payload.encode(to: encoder)
        case .signal(let payload): try payload.encode(to: encoder)
        case .streamState(let payload): try payload.encode(to: encoder)
        case .goodbye(let payload): try payload.encode(to: encoder)
        }
    }
}
