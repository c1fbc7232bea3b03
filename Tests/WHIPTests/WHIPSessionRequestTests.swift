import NIOHTTP1
import Testing
import WHIP

/// PATCH (RFC 9725 §4.3) and DELETE on a session resource, against a real loopback server.
@Suite("WHIP PATCH and DELETE", .timeLimit(.minutes(1)))
struct WHIPSessionRequestTests {
    static let trickle =
        "a=group:BUNDLE 0\r\nm=video 9 UDP/TLS/RTP/SAVPF 96\r\na=mid:0\r\na=ice-ufrag:EsAw\r\na=ice-pwd:P2uYro0UCOQ4zxjKXaWCBui1\r\n"
        + "a=candidate:1387637174 1 udp 2122260223 127.0.0.9 61764 typ host\r\na=end-of-candidates\r\n"
    static let restartAnswer =
        "a=ice-lite\r\na=group:BUNDLE 0\r\nm=video 9 UDP/TLS/RTP/SAVPF 96\r\na=mid:0\r\na=ice-ufrag:289b31b754eaa438\r\n"
        + "a=ice-pwd:0b66f472495ef0ccac7bda653ab6be49ea13114472a5d10a\r\n"

    @Test("trickle: PATCH with the sdpfrag, its type, If-Match and the token; 204 with no body")
    func trickle() async throws {
        try await withServer { server in
            server.route("/session/1", .respond(204))
            let client = WHIPClient(endpoint: try server.url("/whip"), configuration: Fixture.configuration())
            let session = try Fixture.session(on: server, "/session/1", etag: "\"xyzzy\"")
            let result = try await client.patch(session, fragment: Self.trickle)
            #expect(result.status == 204)
            #expect(result.body == "")
            #expect(result.etag == nil)

            let request = try #require(server.requests.first)
            #expect(request.method == .PATCH)
            #expect(request.uri == "/session/1")
            #expect(request.headers["Content-Type"] == ["application/trickle-ice-sdpfrag"])
            #expect(request.headers["If-Match"] == ["\"xyzzy\""])
            #expect(request.headers["Authorization"] == ["Bearer \(Fixture.token)"])
            #expect(request.body == Array(Self.trickle.utf8))
        }
    }

    @Test("ICE restart: If-Match \"*\"; 200 with the new sdpfrag and the new ETag")
    func iceRestart() async throws {
        try await withServer { server in
            server.route(
                "/session/1",
                .respond(
                    200,
                    [("Content-Type", "application/trickle-ice-sdpfrag"), ("ETag", "\"abccd\"")],
                    body: Self.restartAnswer
                )
            )
            let client = WHIPClient(endpoint: try server.url("/whip"), configuration: Fixture.configuration())
            let session = try Fixture.session(on: server, "/session/1", etag: "\"xyzzy\"")
            let result = try await client.patch(session, fragment: Self.trickle, iceRestart: true)
            #expect(result.status == 200)
            #expect(result.body == Self.restartAnswer)
            #expect(result.etag == "\"abccd\"")
            #expect(server.requests.first?.headers["If-Match"] == ["*"])
        }
    }

    @Test("PATCH without an ETag sends no If-Match; 412 and a wrongly typed 200 are errors")
    func patchFailures() async throws {
        try await withServer { server in
            server.route("/session/stale", .respond(412, [("Content-Type", "text/plain")], body: "stale etag"))
            server.route("/session/typed", .respond(200, [("Content-Type", "text/plain")], body: "a=ice-lite"))
            let client = WHIPClient(endpoint: try server.url("/whip"), configuration: Fixture.configuration())
            let base = "http://127.0.0.1:\(server.port)"

            let stale = try Fixture.session(on: server, "/session/stale")
            let error = await whipError { () async throws(WHIPError) in
                try await client.patch(stale, fragment: Self.trickle)
            }
            #expect(error?.code == .status)
            #expect(error?.status == 412)
            #expect(error?.isClientError == true)
            #expect(error?.message == "PATCH \(base)/session/stale answered 412 Precondition Failed: stale etag")
            #expect(server.requests.first?.headers["If-Match"] == [])

            let typed = try Fixture.session(on: server, "/session/typed")
            let wrong = await whipError { () async throws(WHIPError) in
                try await client.patch(typed, fragment: Self.trickle)
            }
            #expect(wrong?.code == .unsupportedContentType)
            #expect(
                wrong?.message
                    == "PATCH \(base)/session/typed answered 200 OK with Content-Type text/plain, "
                    + "not application/trickle-ice-sdpfrag"
            )
        }
    }

    @Test("DELETE: 200, and 404 for a session already gone; the token, no body, no If-Match")
    func delete() async throws {
        try await withServer { server in
            server.route("/session/live", .respond(200))
            server.route("/session/gone", .respond(404, [("Content-Type", "text/plain")], body: "unknown session"))
            let client = WHIPClient(endpoint: try server.url("/whip"), configuration: Fixture.configuration())
            #expect(try await client.delete(try Fixture.session(on: server, "/session/live", etag: "\"e\"")) == 200)
            #expect(try await client.delete(try Fixture.session(on: server, "/session/gone")) == 404)

            let requests = server.requests
            #expect(requests.map(\.method) == [.DELETE, .DELETE])
            #expect(requests.map(\.uri) == ["/session/live", "/session/gone"])
            #expect(
                requests.map { $0.headers["Authorization"] } == [
                    ["Bearer \(Fixture.token)"], ["Bearer \(Fixture.token)"],
                ]
            )
            #expect(requests.map { $0.headers["If-Match"] } == [[], []])
            #expect(requests.map { $0.headers["Content-Length"] } == [["0"], ["0"]])
            #expect(requests.map(\.body) == [[], []])
        }
    }

    @Test("DELETE: 500 is an error, and a silent server ends at the DELETE's own timeout")
    func deleteFailures() async throws {
        try await withServer { server in
            server.route("/session/broken", .respond(500))
            server.route("/session/silent", .never)
            let client = WHIPClient(endpoint: try server.url("/whip"), configuration: Fixture.configuration())
            let base = "http://127.0.0.1:\(server.port)"

            let broken = try Fixture.session(on: server, "/session/broken")
            let error = await whipError { () async throws(WHIPError) in try await client.delete(broken) }
            #expect(error?.code == .status)
            #expect(error?.status == 500)
            #expect(error?.message == "DELETE \(base)/session/broken answered 500 Internal Server Error")

            let silent = try Fixture.session(on: server, "/session/silent")
            let timeout = await whipError { () async throws(WHIPError) in
                try await client.delete(silent, timeout: .milliseconds(300))
            }
            #expect(timeout?.code == .timeout)
            #expect(timeout?.message == "no complete response to DELETE \(base)/session/silent within 0.3 s")
        }
    }
}
