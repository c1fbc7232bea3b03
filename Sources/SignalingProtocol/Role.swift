/// What a member came to do. Publishers may publish streams; anyone may subscribe.
public enum Role: String, Hashable, Sendable, CaseIterable, Codable, StrictlyDecoded {
    case publisher
    case subscriber

}

/// The kind of a published stream; a member publishes at most one stream of each kind.
public enum StreamKind: String, Hashable, Sendable, CaseIterable, Comparable, Codable, StrictlyDecoded {
    case screen
    case camera

    public static func < (lhs: StreamKind, rhs: StreamKind) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Whether a stream's picture moves, as its publisher says (`stream-state`, Docs/signaling.md).
/// `still`: the publisher stopped encoding an unchanged picture and repeats it about once a
/// second, so a viewer must not take the gaps between pictures for freezes.
public enum StreamState: String, Hashable, Sendable, CaseIterable, Codable, StrictlyDecoded {
    case moving
    case still

}

/// A string enum a field holds: anything else is `invalid-field`, naming the field and the
/// values it may take (`"publisher" or "subscriber"`).
public protocol StrictlyDecoded: RawRepresentable, CaseIterable, Decodable where RawValue == String {}

extension StrictlyDecoded {
    public init(from decoder: any Decoder) throws {
        let value = try decoder.singleValueContainer().decode(String.self)
        guard let decoded = Self(rawValue: value) else {
            let names = Self.allCases.map { "\"\($0.rawValue)\"" }
            let allowed =
                names.dropLast().joined(separator: ", ") + (names.count > 1 ? " or " : "") + (names.last ?? "")
            throw SignalingError(
                .invalidField,
                "field \(fieldPath(decoder.codingPath)): \(quoted(value)) is not \(allowed)"
            )
        }
        self = decoded
    }
}
