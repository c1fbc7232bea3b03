/// What a member came to do. Publishers may publish streams; anyone may subscribe.
public enum Role: String, Hashable, Sendable, CaseIterable, Codable {
    case publisher
    case subscriber

    public init(from decoder: any Decoder) throws {
        let value = try decoder.singleValueContainer().decode(String.self)
        guard let role = Role(rawValue: value) else {
            throw SignalingError(
                .invalidField,
                "field \(fieldPath(decoder.codingPath)): \(quoted(value)) is not \"publisher\" or \"subscriber\""
            )
        }
        self = role
    }
}

/// The kind of a published stream; a member publishes at most one stream of each kind.
public enum StreamKind: String, Hashable, Sendable, CaseIterable, Comparable, Codable {
    case screen
    case camera

    public init(from decoder: any Decoder) throws {
        let value = try decoder.singleValueContainer().decode(String.self)
        guard let kind = StreamKind(rawValue: value) else {
            throw SignalingError(
                .invalidField,
                "field \(fieldPath(decoder.codingPath)): \(quoted(value)) is not \"screen\" or \"camera\""
            )
        }
        self = kind
    }

    public static func < (lhs: StreamKind, rhs: StreamKind) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Whether a stream's picture moves, as its publisher says (`stream-state`, Docs/signaling.md).
/// `still`: the publisher stopped encoding an unchanged picture and repeats it about once a
/// second, so a viewer must not take the gaps between pictures for freezes.
public enum StreamState: String, Hashable, Sendable, CaseIterable, Codable {
    case moving
    case still

    public init(from decoder: any Decoder) throws {
        let value = try decoder.singleValueContainer().decode(String.self)
        guard let state = StreamState(rawValue: value) else {
            throw SignalingError(
                .invalidField,
                "field \(fieldPath(decoder.codingPath)): \(quoted(value)) is not \"moving\" or \"still\""
            )
        }
        self = state
    }
}
