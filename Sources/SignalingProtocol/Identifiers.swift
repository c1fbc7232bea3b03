/// The naming rule shared by rooms and uids: 1–64 characters of `[A-Za-z0-9_-]`.
///
/// The set is small on purpose: names show up in logs, file names and SDP session names, and a
/// restricted alphabet keeps every one of those safe without escaping.
public enum IdentifierRule {
    public static let maxLength = 64

    public static func isValid(_ value: String) -> Bool {
        let bytes = value.utf8
        guard (1...maxLength).contains(bytes.count) else { return false }
        return bytes.allSatisfy(isAllowed)
    }

    static func isAllowed(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"):
            return true
        default:
            return false
        }
    }
}

/// A room name, valid by construction.
public struct RoomID: Hashable, Sendable, Comparable, CustomStringConvertible, Codable {
    public let rawValue: String

    /// Checks `value` against ``IdentifierRule``; the error names the value.
    public init(validating value: String) throws(SignalingError) {
        guard IdentifierRule.isValid(value) else {
            throw SignalingError(.invalidRoom, "room \(quoted(value)) must be 1–64 characters of A-Z a-z 0-9 _ -")
        }
        self.rawValue = value
    }

    public init(from decoder: any Decoder) throws {
        let value = try decoder.singleValueContainer().decode(String.self)
        guard IdentifierRule.isValid(value) else {
            throw SignalingError(
                .invalidRoom,
                "field \(fieldPath(decoder.codingPath)): \(quoted(value)) is not 1–64 characters of A-Z a-z 0-9 _ -"
            )
        }
        self.rawValue = value
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    public var description: String { rawValue }

    public static func < (lhs: RoomID, rhs: RoomID) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// A member's uid within a room, valid by construction.
public struct MemberID: Hashable, Sendable, Comparable, CustomStringConvertible, Codable {
    public let rawValue: String

    /// The suffix that marks a screen-share companion (anyRTC convention: `alice_sub` shares alice's screen).
    public static let companionSuffix = "_sub"

    /// Checks `value` against ``IdentifierRule``; the error names the value.
    public init(validating value: String) throws(SignalingError) {
        guard IdentifierRule.isValid(value) else {
            throw SignalingError(.invalidUID, "uid \(quoted(value)) must be 1–64 characters of A-Z a-z 0-9 _ -")
        }
        self.rawValue = value
    }

    public init(from decoder: any Decoder) throws {
        let value = try decoder.singleValueContainer().decode(String.self)
        guard IdentifierRule.isValid(value) else {
            throw SignalingError(
                .invalidUID,
                "field \(fieldPath(decoder.codingPath)): \(quoted(value)) is not 1–64 characters of A-Z a-z 0-9 _ -"
            )
        }
        self.rawValue = value
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    /// The uid this one is the screen-share companion of: `alice` for `alice_sub`, nil otherwise.
    ///
    /// A bare `_sub` has no owner: the part before the suffix must itself be a non-empty uid.
    public var owner: MemberID? {
        guard rawValue.hasSuffix(Self.companionSuffix) else { return nil }
        let prefix = String(rawValue.dropLast(Self.companionSuffix.count))
        return try? MemberID(validating: prefix)
    }

    public var description: String { rawValue }

    public static func < (lhs: MemberID, rhs: MemberID) -> Bool { lhs.rawValue < rhs.rawValue }
}
