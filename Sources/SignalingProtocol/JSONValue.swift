/// Any JSON value: the opaque `payload` of a `signal`, relayed between peers without interpretation.
///
/// Integers that fit in 64 bits stay integers so relaying never turns `7` into `7.0`.
public enum JSONValue: Hashable, Sendable, Codable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// Tries each JSON type in turn. A type mismatch at this level means "not this type, try the
    /// next"; any other failure is a real problem with the value (a number no double holds, like
    /// `1e400`, or one nested inside) and is reported as that (`invalid-field`), not as "must be
    /// an object".
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
            return
        }
        if let value = try? container.decode(Bool.self) {
            self = .bool(value)
            return
        }
        if let value = try? container.decode(Int64.self) {
            self = .integer(value)
            return
        }
        func attempt<T: Decodable>(_ type: T.Type) throws -> T? {
            do {
                return try container.decode(type)
            } catch DecodingError.typeMismatch(_, let context)
                where context.codingPath.count == decoder.codingPath.count
            {
                return nil
            }
        }
        do {
            if let value = try attempt(Double.self) {
                self = .number(value)
                return
            }
        } catch let error as DecodingError {
            throw error
        } catch {
            // Foundation's "not representable" error, which its decoder would turn into a
            // top-level "not valid JSON".
            throw SignalingError(
                .invalidField,
                "field \(fieldPath(decoder.codingPath)) holds a number outside the range of a 64-bit double"
            )
        }
        if let value = try attempt(String.self) {
            self = .string(value)
        } else if let value = try attempt([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}
