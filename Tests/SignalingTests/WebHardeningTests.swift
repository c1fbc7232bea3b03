import Foundation
import SignalingProtocol
import SignalingServer
import TestSupport
import Testing

/// Issue 33's findings on the web port, byte by byte over real sockets: slowloris (a request
/// dripped or never finished), a body refused only after it was read, WHEP passing any body on
/// as an offer, one address filling a room with WHEP sessions, and refused upgrades left
/// unanswered.
@Suite("Web hardening")
struct WebHardeningTests {
    static let sdp: [(String, String)] = [("Content-Type", "application/sdp")]

    @Test("a request that never finishes, or drips its head or body, gets 408 and the connection closes")
    func slowRequestsTimeOut() async throws {
        try await withServer({ $0.httpRequestTimeout = .seconds(1) }) { server in
            let port = server.port
            let results = try await offPool { () -> [(RawWebClient.Response, Double, RawTCPClient.End)] in
                var results: [(RawWebClient.Response, Double, RawTCPClient.End)] = []
                let drips: [[UInt8]] = [
                    Array("GET ".utf8),
                    Array("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ".utf8)
                        + Array(repeating: UInt8(ascii: "a"), count: 40),
                    Array(
                        "POST /rooms/r1/whep/p HTTP/1.1\r\nContent-Type: application/sdp\r\nContent-Length: 100\r\n\r\nv=0"
                            .utf8
                    )
                        + Array(repeating: UInt8(ascii: "a"), count: 40),
                ]
                for drip in drips {
                    let client = try RawWebClient(port: port)
                    let start = Date()
                    // The first 4 bytes at once (the port tells HTTP by them), then a byte every 100 ms.
                    try client.socket.send(Array(drip.prefix(4)))
                    for byte in drip.dropFirst(4) {
                        guard client.socket.sendSome([byte]) == 1, !client.socket.readable(waitingMilliseconds: 100)
                        else { break }
                    }
                    let response = try client.readResponse(seconds: 5)
                    let elapsed = Date().timeIntervalSince(start)
                    results.append((response, elapsed, client.socket.linesUntilEnd(seconds: 5).end))
                }
                return results
            }
            for (response, elapsed, end) in results {
                #expect(response.status == 408, "\(response)")
                #expect(response.text == "the request did not arrive within 1 s\n", "\(response)")
                #expect(response.header("connection") == "close", "\(response)")
                #expect(elapsed < 4, "answered after \(elapsed) s")
                #expect(end == .endOfFile)
            }
            // Time between requests on a keep-alive connection is not the request's.
            let statuses = try await offPool { () -> [Int] in
                let client = try RawWebClient(port: port)
                let first = try client.request("GET", "/healthz").status
                Thread.sleep(forTimeInterval: 1.5)
                return [first, try client.request("GET", "/healthz").status]
            }
            #expect(statuses == [200, 200])
        }
    }

    @Test(
        "a body announced too long gets 413 before any of it is sent, and the connection closes",
        arguments: [
            ("100000000", "100000000 bytes"),
            // NIO keeps a trailing space, and reads values past Int.max (fuzzing found both).
            ("100000000 ", "100000000 bytes"),
            ("18446744073709551615", "18446744073709551615 bytes"),
            ("00100000000", "100000000 bytes"),
        ]
    )
    func announcedBodyIsRefusedAtOnce(_ length: String, _ said: String) async throws {
        try await withServer { server in
            let port = server.port
            let (response, elapsed, end) = try await offPool {
                () -> (RawWebClient.Response, Double, RawTCPClient.End) in
                let client = try RawWebClient(port: port)
                let start = Date()
                try client.socket.send(
                    "POST /rooms/r1/whep/p HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/sdp\r\n"
                        + "Content-Length: \(length)\r\n\r\n"
                )
                let response = try client.readResponse(seconds: 5)
                return (response, Date().timeIntervalSince(start), client.socket.linesUntilEnd(seconds: 5).end)
            }
            #expect(response.status == 413, "\(response)")
            #expect(response.text == "the body (\(said)) is longer than 65536 bytes\n", "\(response)")
            #expect(response.header("connection") == "close")
            // From the head alone: a server that waited for the body would answer at the 10 s
            // request deadline (408). Half of that leaves room for a loaded machine.
            #expect(elapsed < 5, "answered after \(elapsed) s")
            #expect(end == .endOfFile)
        }
    }

    @Test(
        "refused upgrades are answered: h2c is served as HTTP/1.1, a WebSocket handshake without a key gets 400",
        arguments: [
            (
                "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n"
                    + "HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n",
                200, "ok\n"
            ),
            (
                "GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
                    + "Sec-WebSocket-Version: 13\r\n\r\n",
                400, "a WebSocket handshake needs Sec-WebSocket-Key and Sec-WebSocket-Version: 13\n"
            ),
        ]
    )
    func refusedUpgradesAreAnswered(_ request: String, _ status: Int, _ text: String) async throws {
        try await withServer { server in
            let port = server.port
            let (response, elapsed) = try await offPool { () -> (RawWebClient.Response, Double) in
                let client = try RawWebClient(port: port)
                let start = Date()
                try client.socket.send(request)
                return (try client.readResponse(seconds: 5), Date().timeIntervalSince(start))
            }
            #expect(response.status == status, "\(response)")
            #expect(response.text == text, "\(response)")
            #expect(elapsed < 2, "answered after \(elapsed) s")
        }
    }

    @Test("an absolute-form target's authority ends at ? too (RFC 3986 §3.2): its path is empty")
    func absoluteFormAuthorityEndsAtQuery() async throws {
        try await withServer { server in
            let port = server.port
            let statuses = try await offPool {
                let client = try RawWebClient(port: port)
                return [
                    try client.request("GET", "http://local?os%t/healthz").status,
                    try client.request("GET", "http://local/healthz?x").status,
                ]
            }
            #expect(statuses == [404, 200])
        }
    }

    @Test("WHEP checks the offer at once: not UTF-8, not an SDP, or too long once relayed")
    func whepChecksTheOffer() async throws {
        try await withServer { server in
            let publisher = try await publishingLineClient(port: server.port, room: "r1", uid: "alice_sub")
            let port = server.port
            let quotes = RelayLimitTests.quotedSDP(32_700)
            let answers = try await offPool { () -> [(RawWebClient.Response, Double)] in
                let bodies: [[UInt8]] = [
                    [0xFF, 0xFE, 0x00],
                    Array("hello".utf8),
                    Array("v=0\r\nthis is no SDP\r\n".utf8),
                    Array(quotes.utf8),
                ]
                return try bodies.map { body in
                    let start = Date()
                    let response = try RawWebClient(port: port).request(
                        "POST",
                        "/rooms/r1/whep/alice_sub",
                        headers: Self.sdp,
                        body: body
                    )
                    return (response, Date().timeIntervalSince(start))
                }
            }
            let expected = [
                (400, "the offer is not valid UTF-8\n"),
                (400, "field \"offer\" must be an SDP starting with \"v=0\"\n"),
                (400, "field \"offer\" is not an SDP: line 2 has no \"=\" after its type\n"),
                (413, "too-large: subscribe: the relayed subscribe-request would be longer than the 65536-byte"),
            ]
            for ((response, elapsed), (status, text)) in zip(answers, expected) {
                #expect(response.status == status, "\(response)")
                #expect(response.text.hasPrefix(text), "\(response)")
                #expect(elapsed < 2, "answered after \(elapsed) s")
            }
            // The publisher saw none of them, and is still in the room.
            let seen = try await publisher.drainUntilBarrier()
            #expect(!seen.contains { $0.message.type == "subscribe-request" }, "\(seen)")
        }
    }

    @Test("one client address holds at most its WHEP sessions; a DELETE frees a place")
    func whepSessionsPerAddress() async throws {
        try await withServer({ $0.maxWHEPSessionsPerAddress = 2 }) { server in
            let publisher = try await publishingLineClient(port: server.port, room: "r1", uid: "alice_sub")
            // The publisher answers every subscribe it is asked.
            let answering = Task {
                var index: Int64 = 10
                while let envelope = try? await publisher.next(timeout: .seconds(30)) {
                    guard case .subscribeRequest(let request) = envelope.message else { continue }
                    index += 1
                    let answer = ClientMessage.SubscribeAnswer(
                        subscriber: request.subscriber,
                        kind: request.kind,
                        sdp: Fixture.answerSDP(for: request.subscriber.rawValue)
                    )
                    try? await publisher.send(ClientRequest(id: .number(index), .subscribeAnswer(answer)))
                }
            }
            defer { answering.cancel() }
            let port = server.port
            let offer = Array(Fixture.screenSDP.utf8)
            let (statuses, third, afterDelete) = try await offPool { () -> ([Int], RawWebClient.Response, Int) in
                let created = try (0..<2).map { _ in
                    try RawWebClient(port: port).request(
                        "POST",
                        "/rooms/r1/whep/alice_sub",
                        headers: Self.sdp,
                        body: offer
                    )
                }
                let third = try RawWebClient(port: port).request(
                    "POST",
                    "/rooms/r1/whep/alice_sub",
                    headers: Self.sdp,
                    body: offer
                )
                let location = created[0].header("location") ?? ""
                _ = try RawWebClient(port: port).request("DELETE", location)
                let again = try RawWebClient(port: port).request(
                    "POST",
                    "/rooms/r1/whep/alice_sub",
                    headers: Self.sdp,
                    body: offer
                )
                return (created.map(\.status), third, again.status)
            }
            #expect(statuses == [201, 201])
            #expect(third.status == 429, "\(third)")
            #expect(third.text == "127.0.0.1 holds its most WHEP sessions (2); DELETE one first\n", "\(third)")
            #expect(afterDelete == 201)
        }
    }
}
