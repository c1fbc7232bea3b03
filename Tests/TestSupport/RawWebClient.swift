import Foundation

/// HTTP/1.1 and WebSocket (RFC 6455) spoken byte by byte over a ``RawTCPClient``: the tests see
/// exactly what the server puts on the wire (status lines, headers, frame bytes, close codes).
/// Blocking, like the socket under it: from async tests, call it through `offPool`.
public final class RawWebClient: @unchecked Sendable {
    public let socket: RawTCPClient
    /// Bytes read past the last response or frame.
    private var pending: [UInt8] = []

    public init(port: Int) throws {
        socket = try RawTCPClient(port: port)
    }

    public struct Response: Sendable, CustomStringConvertible {
        public var status: Int
        public var headers: [(name: String, value: String)]
        public var body: [UInt8]

        public func header(_ name: String) -> String? {
            headers.first { $0.name.lowercased() == name.lowercased() }?.value
        }

        public var text: String { String(decoding: body, as: UTF8.self) }
        public var description: String { "\(status) \(headers.map { "\($0.name): \($0.value)" }) \(text.prefix(300))" }
    }

    /// One request; the response once its headers and `Content-Length` bytes are in.
    public func request(
        _ method: String,
        _ target: String,
        headers: [(String, String)] = [],
        body: [UInt8] = [],
        seconds: Double = 10
    ) throws -> Response {
        var text = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        if !body.isEmpty || method == "POST" { text += "Content-Length: \(body.count)\r\n" }
        text += "\r\n"
        try socket.send(Array(text.utf8) + body)
        return try readResponse(seconds: seconds, headOnly: method == "HEAD")
    }

    /// Reads one response (for a request sent by hand).
    public func readResponse(seconds: Double = 10, headOnly: Bool = false) throws -> Response {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            if let end = pending.indexOfSequence([13, 10, 13, 10]) {
                let head = String(decoding: pending[..<end], as: UTF8.self).components(separatedBy: "\r\n")
                let statusLine = head.first?.split(separator: " ") ?? []
                guard statusLine.count >= 2, let status = Int(statusLine[1]) else {
                    throw InteropFailure("not an HTTP status line: \(head.first ?? "")")
                }
                let headers = head.dropFirst().compactMap { line -> (String, String)? in
                    guard let colon = line.firstIndex(of: ":") else { return nil }
                    return (
                        String(line[..<colon]),
                        String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
                    )
                }
                let length =
                    headOnly ? 0 : Int(headers.first { $0.0.lowercased() == "content-length" }?.1 ?? "0") ?? 0
                let bodyStart = end + 4
                if pending.count >= bodyStart + length {
                    let body = Array(pending[bodyStart..<bodyStart + length])
                    pending.removeFirst(bodyStart + length)
                    return Response(status: status, headers: headers.map { (name: $0.0, value: $0.1) }, body: body)
                }
            }
            guard Date() < deadline else { throw InteropFailure("no whole HTTP response in \(seconds) s: \(pending)") }
            let (bytes, end) = socket.receive(waitingMilliseconds: 100)
            pending += bytes
            if end != nil, bytes.isEmpty {
                let partial = String(decoding: pending, as: UTF8.self)
                throw InteropFailure("the server closed before a whole response: \(partial)")
            }
        }
    }

    // MARK: WebSocket

    /// RFC 6455 §1.3's example key: the server must answer `s3pPLMBiTxaQ9kYGzzhZRbK+xOo=`.
    public static let sampleKey = "dGhlIHNhbXBsZSBub25jZQ=="

    /// The opening handshake on `path`; the server's response (101 when upgraded).
    public func upgrade(_ path: String = "/ws", key: String = RawWebClient.sampleKey) throws -> Response {
        try request(
            "GET",
            path,
            headers: [
                ("Upgrade", "websocket"), ("Connection", "Upgrade"), ("Sec-WebSocket-Key", key),
                ("Sec-WebSocket-Version", "13"),
            ]
        )
    }

    public struct Frame: Equatable, Sendable {
        public var fin: Bool
        public var opcode: UInt8
        public var payload: [UInt8]

        public init(fin: Bool, opcode: UInt8, payload: [UInt8]) {
            self.fin = fin
            self.opcode = opcode
            self.payload = payload
        }

        public var text: String { String(decoding: payload, as: UTF8.self) }
        /// A close frame's status code (RFC 6455 §5.5.1), nil for others or without one.
        public var closeCode: UInt16? {
            opcode == 8 && payload.count >= 2 ? UInt16(payload[0]) << 8 | UInt16(payload[1]) : nil
        }
    }

    /// One frame as a client sends it: masked (§5.3) unless `masked` is false, which the server
    /// must refuse.
    public static func frame(opcode: UInt8, _ payload: [UInt8], fin: Bool = true, masked: Bool = true) -> [UInt8] {
        var bytes: [UInt8] = [(fin ? 0x80 : 0) | opcode]
        let maskBit: UInt8 = masked ? 0x80 : 0
        switch payload.count {
        case ..<126: bytes.append(maskBit | UInt8(payload.count))
        case ..<65_536: bytes += [maskBit | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        default:
            let length = (0..<8).reversed().map { UInt8(truncatingIfNeeded: payload.count >> ($0 * 8)) }
            bytes += [maskBit | 127] + length
        }
        guard masked else { return bytes + payload }
        let mask: [UInt8] = (0..<4).map { _ in UInt8.random(in: 0...255) }
        return bytes + mask + payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
    }

    public func send(opcode: UInt8, _ payload: [UInt8], fin: Bool = true, masked: Bool = true) throws {
        try socket.send(Self.frame(opcode: opcode, payload, fin: fin, masked: masked))
    }

    public func sendText(_ text: String) throws { try send(opcode: 1, Array(text.utf8)) }

    /// The next frame from the server (unmasked, §5.1); nil when the connection ended first.
    public func readFrame(seconds: Double = 10) throws -> Frame? {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            if pending.count >= 2 {
                let masked = pending[1] & 0x80 != 0
                var length = Int(pending[1] & 0x7F)
                var offset = 2
                if length == 126, pending.count >= 4 {
                    length = Int(pending[2]) << 8 | Int(pending[3])
                    offset = 4
                } else if length == 127, pending.count >= 10 {
                    length = pending[2..<10].reduce(0) { $0 << 8 | Int($1) }
                    offset = 10
                }
                if masked { throw InteropFailure("a server frame is masked (RFC 6455 §5.1 forbids it)") }
                if length < 126 || offset > 2, pending.count >= offset + length {
                    let frame = Frame(
                        fin: pending[0] & 0x80 != 0,
                        opcode: pending[0] & 0x0F,
                        payload: Array(pending[offset..<offset + length])
                    )
                    pending.removeFirst(offset + length)
                    return frame
                }
            }
            guard Date() < deadline else { throw InteropFailure("no whole frame in \(seconds) s") }
            let (bytes, end) = socket.receive(waitingMilliseconds: 100)
            pending += bytes
            if end != nil, bytes.isEmpty { return nil }
        }
    }

    /// The next text frame's JSON object, skipping nothing: the test names what it expects.
    public func readJSON(seconds: Double = 10) throws -> [String: Any] {
        guard let frame = try readFrame(seconds: seconds) else { throw InteropFailure("the connection ended") }
        guard frame.opcode == 1,
            let object = try JSONSerialization.jsonObject(with: Data(frame.payload)) as? [String: Any]
        else { throw InteropFailure("not a JSON text frame: \(frame)") }
        return object
    }
}

extension Array where Element == UInt8 {
    fileprivate func indexOfSequence(_ needle: [UInt8]) -> Int? {
        guard count >= needle.count else { return nil }
        for start in 0...(count - needle.count) where self[start..<start + needle.count].elementsEqual(needle) {
            return start
        }
        return nil
    }
}
