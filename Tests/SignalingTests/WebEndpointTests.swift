import Foundation
import SignalingProtocol
import SignalingServer
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// rtc-signal's one port also speaks HTTP/1.1 and WebSocket: what goes over the wire for the
/// page, the script, the clock, health, CORS, WHEP's refusals and every limit; WebSocket frames
/// as RFC 6455 says, and a WebSocket viewer meeting a TCP publisher in one room.
@Suite("Web endpoints")
struct WebEndpointTests {
    @Test("the page, its script, the clock and health, each with its type; unknown paths 404")
    func staticRoutes() async throws {
        try await withServer { server in
            let responses = try await offPool { () -> [RawWebClient.Response] in
                let client = try RawWebClient(port: server.port)
                return try [
                    "/healthz", "/rooms/123456", "/viewer.js", "/clock", "/nothing", "/rooms/bad%20room",
                ].map { try client.request("GET", $0) }
            }
            #expect(responses[0].status == 200 && responses[0].text == "ok\n", "\(responses[0])")
            #expect(responses[1].status == 200, "\(responses[1])")
            #expect(responses[1].header("content-type") == "text/html; charset=utf-8", "\(responses[1])")
            #expect(responses[1].header("content-security-policy")?.contains("default-src 'self'") ?? false)
            #expect(responses[1].text.contains("/viewer.js"), "\(responses[1])")
            #expect(responses[2].status == 200, "\(responses[2])")
            #expect(responses[2].header("content-type")?.hasPrefix("text/javascript") ?? false, "\(responses[2])")
            // The clock is CLOCK_MONOTONIC, the publisher's capture clock: ours, read around it.
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            let ours = Double(now.tv_sec) * 1000 + Double(now.tv_nsec) / 1e6
            let clock = try JSONSerialization.jsonObject(with: Data(responses[3].body)) as? [String: Double]
            let theirs = try #require(clock?["monotonicMs"], "\(responses[3])")
            #expect(abs(ours - theirs) < 5_000, "server \(theirs) ms, test \(ours) ms")
            #expect(responses[4].status == 404 && responses[4].text.contains("/nothing"), "\(responses[4])")
            #expect(responses[5].status == 404, "\(responses[5])")
            for response in responses {
                #expect(response.header("access-control-allow-origin") == "*", "\(response)")
                #expect(response.header("x-content-type-options") == "nosniff", "\(response)")
            }
        }
    }

    @Test("CORS preflight, wrong methods, WHEP refusals by name, an oversized body and a flood")
    func refusals() async throws {
        try await withServer({
            $0.messageBurst = 8
            $0.messagesPerSecond = 0.01
        }) { server in
            let (answers, flood, tooLarge) = try await offPool {
                () -> ([RawWebClient.Response], [Int], RawWebClient.Response) in
                let client = try RawWebClient(port: server.port)
                let sdp: [(String, String)] = [("Content-Type", "application/sdp")]
                let answers = try [
                    client.request("OPTIONS", "/rooms/r1/whep/alice_sub"),
                    client.request("DELETE", "/rooms/r1"),
                    client.request("POST", "/rooms/r1/whep/alice_sub", headers: [("Content-Type", "text/plain")]),
                    client.request("POST", "/rooms/r1/whep/alice_sub", headers: sdp, body: Array("v=0\r\n".utf8)),
                    client.request("POST", "/rooms/r1/whep/bad%20uid", headers: sdp, body: Array("v=0\r\n".utf8)),
                    client.request("POST", "/healthz"),
                    client.request("GET", "http://127.0.0.1/healthz"),
                    client.request(
                        "POST",
                        "/rooms/r1/whep/alice_sub",
                        headers: sdp + [("Authorization", "Basic YTpi")],
                        body: Array("v=0\r\n".utf8)
                    ),
                ]
                // The ninth request in a burst of eight is refused with 429 (a connection of its own).
                let flooder = try RawWebClient(port: server.port)
                let flood = try (0..<10).map { _ in try flooder.request("GET", "/healthz").status }
                let large = try RawWebClient(port: server.port)
                let body = [UInt8](repeating: UInt8(ascii: "a"), count: 70_000)
                let tooLarge = try large.request("POST", "/rooms/r1/whep/alice_sub", headers: sdp, body: body)
                return (answers, flood, tooLarge)
            }
            #expect(answers[0].status == 204, "\(answers[0])")
            #expect(answers[0].header("access-control-allow-headers")?.contains("Authorization") ?? false)
            #expect(answers[0].header("accept-post") == "application/sdp", "\(answers[0])")
            #expect(answers[1].status == 405 && answers[1].header("allow") == "GET, HEAD, OPTIONS", "\(answers[1])")
            #expect(answers[2].status == 415, "\(answers[2])")
            #expect(answers[3].status == 404 && answers[3].text.contains("no-such-member"), "\(answers[3])")
            #expect(answers[4].status == 400 && answers[4].text.contains("bad%20uid"), "\(answers[4])")
            #expect(answers[5].status == 405 && answers[5].header("allow") == "GET, HEAD, OPTIONS", "\(answers[5])")
            // The absolute form of a target (RFC 9112 §3.2.2) is served as its path.
            #expect(answers[6].status == 200 && answers[6].text == "ok\n", "\(answers[6])")
            #expect(answers[7].status == 401 && answers[7].header("www-authenticate") == "Bearer", "\(answers[7])")
            #expect(flood.prefix(8).allSatisfy { $0 == 200 } && flood.suffix(2).allSatisfy { $0 == 429 }, "\(flood)")
            #expect(tooLarge.status == 413 && tooLarge.header("connection") == "close", "\(tooLarge)")
            // The server goes on: a new client is served.
            let health = try await offPool { try RawWebClient(port: server.port).request("GET", "/healthz").status }
            #expect(health == 200)
        }
    }

    @Test("WHEP on a server with a secret: no token and a wrong token are 401 with a Bearer challenge")
    func whepNeedsAToken() async throws {
        try await withServer({ $0.secret = "a-test-secret" }) { server in
            let sdp: [(String, String)] = [("Content-Type", "application/sdp")]
            let (none, wrong) = try await offPool { () -> (RawWebClient.Response, RawWebClient.Response) in
                let client = try RawWebClient(port: server.port)
                let none = try client.request(
                    "POST",
                    "/rooms/r1/whep/alice_sub",
                    headers: sdp,
                    body: Array("v=0\r\n".utf8)
                )
                let wrong = try client.request(
                    "POST",
                    "/rooms/r1/whep/alice_sub?uid=viewer",
                    headers: sdp + [("Authorization", "Bearer v1.9999999999.AAAA")],
                    body: Array("v=0\r\n".utf8)
                )
                return (none, wrong)
            }
            for response in [none, wrong] {
                #expect(response.status == 401 && response.header("www-authenticate") == "Bearer", "\(response)")
                #expect(response.text.hasPrefix("unauthorized: "), "\(response)")
            }
        }
    }

    @Test("a malformed request line gets 400 and the connection closes; nothing else changes")
    func malformedRequest() async throws {
        try await withServer { server in
            let (reply, end, health) = try await offPool { () -> (String, RawTCPClient.End, Int) in
                let client = try RawWebClient(port: server.port)
                try client.socket.send("GET /\u{1}\u{2} HTTP/1.1\r\nHost: x\r\n\r\n")
                let (lines, end) = client.socket.linesUntilEnd(seconds: 5)
                return (lines.first ?? "", end, try RawWebClient(port: server.port).request("GET", "/healthz").status)
            }
            #expect(reply.hasPrefix("HTTP/1.1 400"), "\(reply)")
            #expect(end == .endOfFile)
            #expect(health == 200)
        }
    }

    @Test("WebSocket: RFC 6455's handshake vector, JSON in text frames, fragments, ping, close")
    func webSocketFrames() async throws {
        try await withServer { server in
            let outcome = try await offPool {
                () -> (RawWebClient.Response, [RawWebClient.Frame?]) in
                let client = try RawWebClient(port: server.port)
                let handshake = try client.upgrade()
                var frames: [RawWebClient.Frame?] = []
                try client.sendText(#"{"type":"ping","id":1}"#)
                frames.append(try client.readFrame())
                // One message in three fragments (§5.4), a ping between them (§5.5: allowed).
                try client.send(opcode: 1, Array(#"{"type":"#.utf8), fin: false)
                try client.send(opcode: 9, Array("are you there".utf8))
                try client.send(opcode: 0, Array(#""ping","#.utf8), fin: false)
                try client.send(opcode: 0, Array(#""id":2}"#.utf8))
                frames.append(try client.readFrame())
                frames.append(try client.readFrame())
                // Bad JSON gets the protocol's own error, as on TCP.
                try client.sendText("not json")
                frames.append(try client.readFrame())
                // A close is echoed with its code.
                try client.send(opcode: 8, [0x03, 0xE8])
                frames.append(try client.readFrame())
                frames.append(try client.readFrame())
                return (handshake, frames)
            }
            let (handshake, frames) = outcome
            #expect(handshake.status == 101, "\(handshake)")
            #expect(handshake.header("sec-websocket-accept") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=", "\(handshake)")
            #expect(frames[0] == .init(fin: true, opcode: 1, payload: Array(#"{"id":1,"type":"pong"}"#.utf8)))
            #expect(frames[1] == .init(fin: true, opcode: 10, payload: Array("are you there".utf8)))
            #expect(frames[2] == .init(fin: true, opcode: 1, payload: Array(#"{"id":2,"type":"pong"}"#.utf8)))
            #expect(frames[3]?.text.contains(#""code":"bad-json""#) ?? false, "\(String(describing: frames[3]))")
            #expect(frames[4]?.closeCode == 1000, "\(String(describing: frames[4]))")
            #expect(frames[5] == nil, "the connection ends after the close")
        }
    }

    @Test(
        "WebSocket violations end the connection with the close code that names them",
        arguments: [
            ("unmasked", UInt16(1002)),
            ("binary", UInt16(1003)),
            ("too large", UInt16(1009)),
            ("continuation first", UInt16(1002)),
            ("reserved bit", UInt16(1002)),
            ("not UTF-8", UInt16(1007)),
            ("close 1005", UInt16(1002)),
            ("close of one byte", UInt16(1002)),
        ]
    )
    func webSocketViolations(_ violation: String, _ code: UInt16) async throws {
        try await withServer { server in
            let close = try await offPool { () -> RawWebClient.Frame? in
                let client = try RawWebClient(port: server.port)
                _ = try client.upgrade()
                switch violation {
                case "unmasked": try client.send(opcode: 1, Array(#"{"type":"ping"}"#.utf8), masked: false)
                case "binary": try client.send(opcode: 2, [1, 2, 3])
                case "too large":
                    try client.send(opcode: 1, [UInt8](repeating: 32, count: 40_000), fin: false)
                    try client.send(opcode: 0, [UInt8](repeating: 32, count: 40_000))
                case "reserved bit":
                    // FIN + RSV1, text; masked, empty.
                    try client.socket.send([0xC1, 0x80, 1, 2, 3, 4])
                case "not UTF-8": try client.send(opcode: 1, [0x7B, 0xFF, 0xFE, 0x7D])
                case "close 1005": try client.send(opcode: 8, [0x03, 0xED])
                case "close of one byte": try client.send(opcode: 8, [0x03])
                default: try client.send(opcode: 0, Array("{}".utf8))
                }
                return try client.readFrame()
            }
            #expect(close?.opcode == 8 && close?.closeCode == code, "\(violation): \(String(describing: close))")
            let reason = close.map { String(decoding: $0.payload.dropFirst(2), as: UTF8.self) } ?? ""
            #expect(!reason.isEmpty, "\(violation): the close frame gives a reason")
        }
    }

    @Test(
        "a client's close is echoed with its code when the code may be sent, else refused with 1002",
        arguments: [
            (UInt16(1000), UInt16(1000)), (1001, 1001), (1011, 1011), (1012, 1012), (1013, 1013), (1014, 1014),
            (3000, 3000), (4999, 4999), (1004, 1002), (1006, 1002), (1015, 1002), (2999, 1002), (5000, 1002),
        ]
    )
    func closeCodes(_ sent: UInt16, _ answered: UInt16) async throws {
        try await withServer { server in
            let close = try await offPool { () -> RawWebClient.Frame? in
                let client = try RawWebClient(port: server.port)
                _ = try client.upgrade()
                try client.send(opcode: 8, [UInt8(sent >> 8), UInt8(sent & 0xFF)] + Array("bye".utf8))
                return try client.readFrame()
            }
            #expect(close?.opcode == 8 && close?.closeCode == answered, "\(sent): \(String(describing: close))")
        }
    }

    @Test("a WebSocket subscriber and a TCP publisher are members of the same room")
    func webSocketAndTCPMeet() async throws {
        try await withServer { server in
            let (publisher, _) = try await joinedLineClient(
                port: server.port,
                room: "123456",
                uid: "alice_sub",
                role: .publisher
            )
            try await publisher.send(ClientRequest(id: .number(2), .publish(.init(stream: Fixture.screen()))))
            _ = try await publisher.next()
            let reply = try await offPool { () -> String in
                let client = try RawWebClient(port: server.port)
                _ = try client.upgrade()
                try client.sendText(
                    #"{"type":"join","id":1,"version":1,"room":"123456","uid":"web_bob","role":"subscriber"}"#
                )
                return try client.readFrame()?.text ?? ""
            }
            let joined = try JSONSerialization.jsonObject(with: Data(reply.utf8)) as? [String: Any] ?? [:]
            #expect(joined["type"] as? String == "joined", "\(joined)")
            let streams = joined["streams"] as? [[String: Any]] ?? []
            #expect(streams.first?["uid"] as? String == "alice_sub", "\(joined)")
            let event = try await publisher.next()
            guard case .memberJoined(let member) = event.message else {
                Issue.record("the publisher got \(event), not member-joined")
                return
            }
            #expect(member.member.uid == (try Fixture.uid("web_bob")))
        }
    }

    @Test("/metrics is Prometheus text whose counters follow what the server did")
    func metrics() async throws {
        try await withServer { server in
            let (_, _) = try await joinedLineClient(port: server.port, room: "m1", uid: "alice_sub", role: .publisher)
            let text = try await offPool { () -> String in
                let web = try RawWebClient(port: server.port)
                _ = try web.upgrade()
                try web.sendText(#"{"type":"join","id":1,"version":1,"room":"m1","uid":"web_bob","role":"subscriber"}"#)
                _ = try web.readJSON()
                try web.sendText("nonsense")
                _ = try web.readJSON()
                return try RawWebClient(port: server.port).request("GET", "/metrics").text
            }
            var values: [String: Double] = [:]
            for line in text.split(separator: "\n") where !line.hasPrefix("#") {
                let fields = line.split(separator: " ")
                #expect(fields.count == 2 && Double(fields[1]) != nil, "not a sample line: \(line)")
                if fields.count == 2 { values[String(fields[0])] = Double(fields[1]) }
            }
            for line in text.split(separator: "\n") where line.hasPrefix("#") {
                #expect(line.hasPrefix("# TYPE ") || line.hasPrefix("# HELP "), "\(line)")
            }
            #expect(values[#"rtc_signal_connections_total{transport="tcp"}"#] == 1, "\(text)")
            #expect(values[#"rtc_signal_connections_total{transport="websocket"}"#] == 1, "\(text)")
            #expect(values[#"rtc_signal_messages_in_total{type="join"}"#] == 2, "\(text)")
            #expect(values[#"rtc_signal_messages_in_total{type="invalid"}"#] == 1, "\(text)")
            #expect(values[#"rtc_signal_errors_total{code="bad-json"}"#] == 1, "\(text)")
            #expect(values["rtc_signal_rooms"] == 1 && values["rtc_signal_members"] == 2, "\(text)")
        }
    }
}
