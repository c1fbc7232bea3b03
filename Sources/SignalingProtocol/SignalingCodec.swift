#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Turns lines into messages and back, and turns every decoding failure into a ``SignalingError``
/// whose code says which rule broke and whose message names the field.
public enum SignalingCodec {
    /// A line that could not become a request, with the request's `id` if that much could be read,
    /// so the error reply can still echo it.
    public struct RequestFailure: Error, Hashable, Sendable {
        public var id: RequestID?
        public var error: SignalingError

        public init(id: RequestID?, error: SignalingError) {
            self.id = id
            self.error = error
        }
    }

    /// Decodes one client line (without its `\n`).
    public static func decodeRequest(_ line: some Sequence<UInt8>) -> Result<ClientRequest, RequestFailure> {
        let bytes = Array(line)
        // The JSON parser checks UTF-8 only in the strings it decodes; check the whole line first so
        // invalid UTF-8 anywhere is reported as what it is.
        guard String(validating: bytes, as: UTF8.self) != nil else {
            return .failure(RequestFailure(id: nil, error: SignalingError(.badJSON, "line is not valid UTF-8")))
        }
        let data = Data(bytes)
        let decoder = JSONDecoder()
        let header: RequestHeader
        do {
            header = try decoder.decode(RequestHeader.self, from: data)
        } catch {
            return .failure(RequestFailure(id: nil, error: notAnObject(error)))
        }
        if let idError = header.idError {
            return .failure(RequestFailure(id: nil, error: idError))
        }
        if let typeError = header.typeError {
            return .failure(RequestFailure(id: header.id, error: typeError))
        }
        guard let type = header.type else {
            return .failure(
                RequestFailure(id: header.id, error: SignalingError(.missingField, "missing field \"type\""))
            )
        }
        if type == "join", let version = header.version, version != SignalingProtocol.version {
            return .failure(RequestFailure(id: header.id, error: .versionMismatch(client: version)))
        }
        do {
            return .success(try decoder.decode(ClientRequest.self, from: data))
        } catch let error as SignalingError {
            let message = error.code == .unknownType ? error.message : "\(type): \(error.message)"
            return .failure(RequestFailure(id: header.id, error: SignalingError(error.code, message)))
        } catch let error as DecodingError {
            return .failure(RequestFailure(id: header.id, error: describe(error, in: type)))
        } catch {
            return .failure(RequestFailure(id: header.id, error: SignalingError(.badJSON, "\(type): \(error)")))
        }
    }

    /// Decodes one server line. Returns nil for a message type this client does not know, which a
    /// newer server may send; the client skips it.
    public static func decodeServerLine(_ line: some Sequence<UInt8>) throws(SignalingError) -> ServerEnvelope? {
        do {
            return try JSONDecoder().decode(ServerEnvelope.self, from: Data(line))
        } catch let error as SignalingError {
            if error.code == .unknownType { return nil }
            throw error
        } catch let error as DecodingError {
            throw describe(error, in: "server message")
        } catch {
            throw SignalingError(.badJSON, "server message: \(error)")
        }
    }

    /// One encoded line, `\n` included. Throws `line-too-long` for a message longer than
    /// ``SignalingProtocol/maxLineBytes``: no end writes a line the other end cannot read.
    public static func encodeLine(_ envelope: ServerEnvelope) throws -> [UInt8] {
        try encode(envelope, type: envelope.message.type)
    }

    /// One encoded line, `\n` included (the same limit).
    public static func encodeLine(_ request: ClientRequest) throws -> [UInt8] {
        try encode(request, type: request.message.type)
    }

    private static func encode(_ value: some Encodable, type: String) throws -> [UInt8] {
        let encoder = JSONEncoder()
        // Sorted keys make lines reproducible, which keeps logs, tests and the spec's examples stable.
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var bytes = [UInt8](try encoder.encode(value))
        guard bytes.count <= SignalingProtocol.maxLineBytes else {
            throw SignalingError(
                .lineTooLong,
                "\(type) would be a \(bytes.count)-byte line, longer than the \(SignalingProtocol.maxLineBytes)-byte limit"
            )
        }
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }

    private static func notAnObject(_ error: any Error) -> SignalingError {
        if case DecodingError.typeMismatch(_, let context) = error, context.codingPath.isEmpty {
            return SignalingError(.badJSON, "a message must be a JSON object")
        }
        if case DecodingError.dataCorrupted(let context) = error {
            return SignalingError(.badJSON, notValidJSON(context))
        }
        return SignalingError(.badJSON, "line is not valid JSON")
    }

    /// Maps Foundation's decoding errors onto protocol error codes, naming the field.
    static func describe(_ error: DecodingError, in type: String) -> SignalingError {
        switch error {
        case .keyNotFound(let key, let context):
            return SignalingError(.missingField, "\(type): missing field \(fieldPath(context.codingPath + [key]))")
        case .typeMismatch(let expected, let context):
            return SignalingError(
                .invalidField,
                "\(type): field \(fieldPath(context.codingPath)) must be \(jsonTypeName(expected))"
            )
        case .valueNotFound(let expected, let context):
            return SignalingError(
                .invalidField,
                "\(type): field \(fieldPath(context.codingPath)) must be \(jsonTypeName(expected)), not null"
            )
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty {
                return SignalingError(.badJSON, notValidJSON(context))
            }
            return SignalingError(
                .invalidField,
                "\(type): field \(fieldPath(context.codingPath)) is invalid: \(context.debugDescription)"
            )
        @unknown default:
            return SignalingError(.invalidField, "\(type): \(error)")
        }
    }

    /// Foundation's parser gives no position for syntax errors, only a generic sentence; say it once.
    private static func notValidJSON(_ context: DecodingError.Context) -> String {
        context.underlyingError.map { "line is not valid JSON: \($0)" } ?? "line is not valid JSON"
    }

    static func jsonTypeName(_ type: Any.Type) -> String {
        if type == String.self { return "a string" }
        if type == Bool.self { return "true or false" }
        if type == Double.self || type == Float.self { return "a number" }
        if type == Int.self || type == Int64.self || type == UInt64.self || type == Int32.self {
            return "an integer"
        }
        let name = String(describing: type)
        if name.hasPrefix("Array") || name.hasPrefix("[") && !name.contains(":") { return "an array" }
        if name.hasPrefix("Dictionary") || name.hasPrefix("[") { return "an object" }
        return "a value of another type"
    }
}

/// The part of a request read before anything else, so even a broken request's `id` is echoed.
struct RequestHeader: Decodable {
    var id: RequestID?
    var idError: SignalingError?
    var type: String?
    var typeError: SignalingError?
    /// A `join`'s version when it is an integer: read before any other field, so a client of
    /// another version always learns that first, whatever else it sends or omits.
    var version: Int?

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: HeaderKeys.self)
        do {
            id = try container.decodeIfPresent(RequestID.self, forKey: .id)
        } catch let error as SignalingError {
            idError = error
        } catch {
            idError = SignalingError(.invalidField, "field \"id\" must be an integer or a string")
        }
        do {
            type = try container.decodeIfPresent(String.self, forKey: .type)
        } catch {
            typeError = SignalingError(.invalidField, "field \"type\" must be a string")
        }
        version = try? container.decodeIfPresent(Int.self, forKey: .version)
    }
}
