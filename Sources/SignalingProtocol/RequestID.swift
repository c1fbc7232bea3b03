/// The `id` a client may put on a request; the server echoes it unchanged on the reply.
///
/// Either a string of at most 64 UTF-8 bytes or an integer, so clients can use whatever
/// correlation scheme they already have without the server interpreting it.
public enum RequestID: Hashable, Sendable, Codable, CustomStringConvertible {
    case string(String)
    case number(Int64)

    public static let maxStringBytes = 64

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let number = try? container.decode(Int64.self) {
            self = .number(number)
            return
        }
        if let string = try? container.decode(String.self), string.utf8.count <= Self.maxStringBytes {
            self = .string(string)
            return
        }
        throw SignalingError(
            .invalidField,
            "field \"id\" must be an integer or a string of at most \(Self.maxStringBytes) bytes"
        )
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        }
    }

    public var description: String {
        switch self {
        case .string(let value): return quoted(value)
        case .number(let value): return String(value)
        }
    }
}
