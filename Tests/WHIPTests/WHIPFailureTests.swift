import Testing
import WHIP

/// Answers a publish cannot use, and servers that misbehave, against a real loopback server.
@Suite("WHIP publish failures", .timeLimit(.minutes(1)))
struct WHIPFailureTests {
    static let longText = String(repeating: "line of text\r\n", count: 30)

    @Test(
        "4xx and 5xx: the status, Retry-After and the start of a text body; the token cut out",
        arguments: [
            (
                401, [("Content-Type", "text/plain")], "bad token \(Fixture.token)\n", true,
                "401 Unauthorized: bad token [redacted]"
            ),
            (403, [], "forbidden", true, "403 Forbidden: forbidden"),
            (404, [("Content-Type", "text/plain")], "no route", true, "404 Not Found: no route"),
            (408, [], "", false, "408 Request Timeout"),
            (
                422, [("Content-Type", "application/problem+json")], #"{"title":"bad offer"}"#, true,
                #"422 Unprocessable Entity: {"title":"bad offer"}"#
            ),
            (429, [("Retry-After", "30")], "", false, "429 Too Many Requests (Retry-After: 30)"),
            (
                500, [("Content-Type", "text/html")], "<h1>oops\u{1B}[31m</h1>", false,
                "500 Internal Server Error: <h1>oops [31m</h1>"
            ),
            (
                503, [("Retry-After", "5"), ("Content-Type", "application/octet-stream")], "\u{0}\u{1}", false,
                "503 Service Unavailable (Retry-After: 5)"
            ),
            (
                502, [("Content-Type", "text/plain")], longText, false,
                "502 Bad Gateway: " + String(repeating: "line of text ", count: 16).prefix(199) + "..."
            ),
        ]
    )
    func statuses(
        _ status: Int,
        _ headers: [(String, String)],
        _ body: String,
        _ clientError: Bool,
        _ text: String
    )
        async throws
    {
        try await withServer { server in
            server.route("/whip", .respond(status, headers, body: body))
            let client = WHIPClient(endpoint: try server.url("/whip"), configuration: Fixture.configuration())
            let error = await whipError { () async throws(WHIPError) in try await client.publish(offer: Fixture.offer) }
            #expect(error?.code == .status)
            #expect(error?.status == status)
            #expect(error?.isClientError == clientError)
            #expect(error?.message == "POST http://127.0.0.1:\(server.port)/whip answered \(text)")
        }
    }

    @Test(
        "a success that is not a usable 201",
        arguments: [
            (
                ScriptedReply.respond(201, [("Content-Type", "application/sdp")], body: Fixture.answer),
                WHIPError.Code.malformedResponse, "201 Created without a Location header"
            ),
            (
                .respond(201, [("Content-Type", "text/html"), ("Location", "/s")], body: "<html></html>"),
                .unsupportedContentType, "201 Created with Content-Type text/html, not application/sdp"
            ),
            (
                .respond(201, [("Location", "/s")], body: Fixture.answer),
                .unsupportedContentType, "201 Created with Content-Type none, not application/sdp"
            ),
            (
                .respond(201, [("Content-Type", "application/sdp"), ("Location", "/s")]),
                .malformedResponse, "201 Created with an empty body, not an SDP answer"
            ),
            (
                .respond(
                    201,
                    [("Content-Type", "application/sdp"), ("Location", "/s"), ("Location", "/t")],
                    body: "v=0"
                ),
                .malformedResponse, "201 Created with 2 different Location headers"
            ),
            (
                .respond(200, [("Content-Type", "application/sdp"), ("Location", "/s")], body: Fixture.answer),
                .malformedResponse, "200 OK, not 201 Created"
            ),
        ]
    )
    func unusableSuccess(_ reply: ScriptedReply, _ code: WHIPError.Code, _ text: String) async throws {
        try await withServer { server in
            server.route("/whip", reply)
            let client = WHIPClient(endpoint: try server.url("/whip"), configuration: Fixture.configuration())
            let error = await whipError { () async throws(WHIPError) in try await client.publish(offer: Fixture.offer) }
            #expect(error?.code == code)
            #expect(error?.message == "POST http://127.0.0.1:\(server.port)/whip answered \(text)")
        }
    }

    enum Oversize: String, CaseIterable {
        case contentLength, chunked, headers
    }

    @Test("a body over the limit (by Content-Length or chunked), or headers over theirs", arguments: Oversize.allCases)
    func tooLarge(_ oversize: Oversize) async throws {
        try await withServer { server in
            let big = String(repeating: "a", count: 70_000)
            switch oversize {
            case .contentLength: server.route("/whip", .respond(201, [("Location", "/s")], body: big))
            case .chunked: server.route("/whip", .respond(201, [("Location", "/s")], body: big, chunked: true))
            case .headers:
                server.route("/whip", .respond(201, [("X-Padding", String(big.prefix(20_000)))], body: "v=0"))
            }
            let client = WHIPClient(endpoint: try server.url("/whip"), configuration: Fixture.configuration())
            let error = await whipError { () async throws(WHIPError) in try await client.publish(offer: Fixture.offer) }
            let url = "http://127.0.0.1:\(server.port)/whip"
            #expect(error?.code == .responseTooLarge)
            if oversize == .headers {
                #expect(error?.status == nil)
                #expect(error?.message == "the response to POST \(url) has headers over the size limit")
            } else {
                #expect(error?.status == 201)
                #expect(error?.message == "the response (201) to POST \(url) has a body over 65536 bytes")
            }
        }
    }

    @Test("a server that accepts and never answers: .timeout naming the URL and the seconds")
    func neverAnswers() async throws {
        try await withServer { server in
            server.route("/slow", .never)
            var configuration = Fixture.configuration()
            configuration.responseTimeout = .milliseconds(300)
            let client = WHIPClient(endpoint: try server.url("/slow"), configuration: configuration)
            let error = await whipError { () async throws(WHIPError) in try await client.publish(offer: Fixture.offer) }
            #expect(error?.code == .timeout)
            #expect(error?.status == nil)
            #expect(error?.message == "no complete response to POST http://127.0.0.1:\(server.port)/slow within 0.3 s")
        }
    }

    @Test("nothing listening: .connection, connection refused")
    func connectionRefused() async throws {
        let port = try await closedPort()
        let client = WHIPClient(endpoint: try WHIPURL(parsing: "http://127.0.0.1:\(port)/whip"))
        let error = await whipError { () async throws(WHIPError) in try await client.publish(offer: Fixture.offer) }
        #expect(error?.code == .connection)
        #expect(error?.message == "cannot connect to 127.0.0.1:\(port): connection refused")
    }

    @Test("cancelling the task ends the request with .cancelled")
    func cancelled() async throws {
        try await withServer { server in
            server.route("/slow", .never)
            let client = WHIPClient(endpoint: try server.url("/slow"), configuration: Fixture.configuration())
            let task = Task {
                await whipError { () async throws(WHIPError) in try await client.publish(offer: Fixture.offer) }
            }
            while server.requests.isEmpty {
                try await Task.sleep(for: .milliseconds(10))
            }
            task.cancel()
            let error = await task.value
            #expect(error?.code == .cancelled)
            #expect(error?.message == "POST http://127.0.0.1:\(server.port)/slow was cancelled")
        }
    }

    @Test("a token that would break the header is refused before anything is sent, and never printed")
    func invalidToken() async throws {
        try await withServer { server in
            let client = WHIPClient(
                endpoint: try server.url("/whip"),
                configuration: Fixture.configuration(token: "se cret\r\nX: 1")
            )
            let error = await whipError { () async throws(WHIPError) in try await client.publish(offer: Fixture.offer) }
            #expect(error?.code == .invalidConfiguration)
            #expect(
                error?.message
                    == "the bearer token has characters RFC 6750 does not allow (letters, digits, -._~+/ and trailing =)"
            )
            #expect(server.requests.isEmpty)
        }
    }
}
