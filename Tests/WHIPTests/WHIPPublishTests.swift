import NIOHTTP1
import Testing
import WHIP

/// POST of the offer against a real loopback server: the request on the wire, the 201, redirects.
@Suite("WHIP publish", .timeLimit(.minutes(1)))
struct WHIPPublishTests {
    @Test("201: the request carries the offer, type and token; the session holds all the 201 gave")
    func happyPath() async throws {
        try await withServer { server in
            let location = "http://127.0.0.1:\(server.port)/session/abc"
            server.route(
                "/whip",
                Fixture.created(
                    location,
                    [
                        ("ETag", "\"xyzzy\""),
                        ("Accept-Patch", "application/json, Application/Trickle-ICE-SDPfrag"),
                        ("Link", #"<stun:stun.example.net>; rel="ice-server""#),
                        (
                            "Link",
                            #"<turn:turn.example.net?transport=udp>; rel="ice-server"; username="user"; credential="pass""#
                        ),
                        ("Link", #"<http://127.0.0.1/sse>; rel="urn:ietf:params:whip:ext:example:server-sent-events""#),
                    ]
                )
            )
            let client = WHIPClient(endpoint: try server.url("/whip"), configuration: Fixture.configuration())
            let session = try await client.publish(offer: Fixture.offer)

            #expect(session.resource == (try WHIPURL(parsing: location)))
            #expect(session.endpoint == (try server.url("/whip")))
            #expect(session.answer == Fixture.answer)
            #expect(session.etag == "\"xyzzy\"")
            #expect(session.acceptsTrickle)
            #expect(
                try session.iceServers == [
                    WHIPICEServer(url: "stun:stun.example.net"),
                    WHIPICEServer(url: "turn:turn.example.net?transport=udp", username: "user", credential: "pass"),
                ]
            )
            #expect(
                session.ignoredLinks == [
                    #"<http://127.0.0.1/sse>: rel "urn:ietf:params:whip:ext:example:server-sent-events" is not ice-server"#
                ]
            )

            let requests = server.requests
            #expect(requests.count == 1)
            let request = try #require(requests.first)
            #expect(request.method == .POST)
            #expect(request.uri == "/whip")
            #expect(request.headers["Content-Type"] == ["application/sdp"])
            #expect(request.headers["Accept"] == ["application/sdp"])
            #expect(request.headers["Authorization"] == ["Bearer \(Fixture.token)"])
            #expect(request.headers["Host"] == ["127.0.0.1:\(server.port)"])
            #expect(request.headers["User-Agent"] == ["rtc-publish"])
            #expect(request.headers["Connection"] == ["close"])
            #expect(request.headers["Content-Length"] == ["\(Fixture.offer.utf8.count)"])
            #expect(request.body == Array(Fixture.offer.utf8))
        }
    }

    @Test("a relative Location resolves against the endpoint; charset is allowed; no token, no Authorization")
    func relativeLocation() async throws {
        try await withServer { server in
            server.route(
                "/whip/endpoint",
                .respond(
                    201,
                    [("Content-Type", "application/sdp; charset=utf-8"), ("Location", "../session/42?k=v#frag")],
                    body: Fixture.answer
                )
            )
            let client = WHIPClient(
                endpoint: try server.url("/whip/endpoint"),
                configuration: Fixture.configuration(token: nil)
            )
            let session = try await client.publish(offer: Fixture.offer)
            #expect(session.resource.description == "http://127.0.0.1:\(server.port)/session/42?k=v")
            #expect(session.etag == nil)
            #expect(!session.acceptsTrickle)
            #expect(session.iceServers == [])
            #expect(session.ignoredLinks == [])
            #expect(server.requests.first?.headers["Authorization"] == [])
        }
    }

    @Test("307: the same offer is POSTed again to the target; the Location resolves against it")
    func temporaryRedirect() async throws {
        try await withServer { server in
            server.route("/a", Fixture.redirect(307, to: "/b/endpoint"))
            server.route("/b/endpoint", Fixture.created("session/1"))
            let client = WHIPClient(endpoint: try server.url("/a"), configuration: Fixture.configuration())
            let session = try await client.publish(offer: Fixture.offer)
            #expect(session.endpoint == (try server.url("/b/endpoint")))
            #expect(session.resource == (try server.url("/b/session/1")))
            let requests = server.requests
            #expect(requests.map(\.uri) == ["/a", "/b/endpoint"])
            #expect(requests.map(\.method) == [.POST, .POST])
            #expect(requests.map(\.body) == [Array(Fixture.offer.utf8), Array(Fixture.offer.utf8)])
            #expect(
                requests.map { $0.headers["Authorization"] } == [
                    ["Bearer \(Fixture.token)"], ["Bearer \(Fixture.token)"],
                ]
            )
            #expect(requests.map { $0.headers["Content-Type"] } == [["application/sdp"], ["application/sdp"]])
        }
    }

    @Test("308 five times (the limit) with absolute and relative targets, then 201")
    func permanentRedirectChain() async throws {
        try await withServer { server in
            server.route("/r1", Fixture.redirect(308, to: "http://127.0.0.1:\(server.port)/r2"))
            server.route("/r2", Fixture.redirect(308, to: "/r3"))
            server.route("/r3", Fixture.redirect(307, to: "r4"))
            server.route("/r4", Fixture.redirect(308, to: "//127.0.0.1:\(server.port)/r5"))
            server.route("/r5", Fixture.redirect(308, to: "/r6"))
            server.route("/r6", Fixture.created("/session/6"))
            let client = WHIPClient(endpoint: try server.url("/r1"), configuration: Fixture.configuration())
            let session = try await client.publish(offer: Fixture.offer)
            #expect(session.endpoint == (try server.url("/r6")))
            #expect(session.resource == (try server.url("/session/6")))
            #expect(server.requests.map(\.uri) == ["/r1", "/r2", "/r3", "/r4", "/r5", "/r6"])
            #expect(server.requests.allSatisfy { $0.body == Array(Fixture.offer.utf8) })
        }
    }

    @Test("a redirect back to a URL already in the chain is a loop")
    func redirectLoop() async throws {
        try await withServer { server in
            server.route("/loop-a", Fixture.redirect(307, to: "/loop-b"))
            server.route("/loop-b", Fixture.redirect(308, to: "http://127.0.0.1:\(server.port)/loop-a"))
            let client = WHIPClient(endpoint: try server.url("/loop-a"), configuration: Fixture.configuration())
            let error = await whipError { () async throws(WHIPError) in try await client.publish(offer: Fixture.offer) }
            let base = "http://127.0.0.1:\(server.port)"
            #expect(error?.code == .redirectLoop)
            #expect(error?.status == 308)
            #expect(error?.message == "redirect loop: \(base)/loop-a -> \(base)/loop-b -> \(base)/loop-a")
            #expect(server.requests.map(\.uri) == ["/loop-a", "/loop-b"])
        }
    }

    @Test("a sixth redirect is one too many: the last target is never asked")
    func tooManyRedirects() async throws {
        try await withServer { server in
            for hop in 0..<6 {
                server.route("/t\(hop)", Fixture.redirect(307, to: "/t\(hop + 1)"))
            }
            server.route("/t6", Fixture.created("/session/6"))
            let client = WHIPClient(endpoint: try server.url("/t0"), configuration: Fixture.configuration())
            let error = await whipError { () async throws(WHIPError) in try await client.publish(offer: Fixture.offer) }
            let base = "http://127.0.0.1:\(server.port)"
            #expect(error?.code == .tooManyRedirects)
            #expect(error?.status == 307)
            #expect(error?.message == "more than 5 redirects from \(base)/t0 (the last to \(base)/t6)")
            #expect(server.requests.map(\.uri) == ["/t0", "/t1", "/t2", "/t3", "/t4", "/t5"])
        }
    }

    @Test(
        "301, 302 and 303 are refused, not followed (RFC 9725 §4.5)",
        arguments: [(301, "Moved Permanently"), (302, "Found"), (303, "See Other")]
    )
    func refusedRedirects(_ status: Int, _ phrase: String) async throws {
        try await withServer { server in
            server.route("/moved", Fixture.redirect(status, to: "/new"))
            server.route("/new", Fixture.created("/session/1"))
            let client = WHIPClient(endpoint: try server.url("/moved"), configuration: Fixture.configuration())
            let error = await whipError { () async throws(WHIPError) in try await client.publish(offer: Fixture.offer) }
            #expect(error?.code == .status)
            #expect(error?.status == status)
            #expect(error?.isClientError == false)
            #expect(
                error?.message
                    == "POST http://127.0.0.1:\(server.port)/moved answered \(status) \(phrase) to /new: not followed, "
                    + "WHIP endpoints redirect with 307 or 308 (RFC 9725 §4.5)"
            )
            #expect(server.requests.map(\.uri) == ["/moved"])
        }
    }

    @Test("a redirect without a Location, or with one that is not a URL")
    func badRedirects() async throws {
        try await withServer { server in
            server.route("/bare", .respond(307))
            server.route("/echo", Fixture.redirect(307, to: "http://[bad/\(Fixture.token)"))
            let base = "http://127.0.0.1:\(server.port)"
            let bare = WHIPClient(endpoint: try server.url("/bare"), configuration: Fixture.configuration())
            let error = await whipError { () async throws(WHIPError) in try await bare.publish(offer: Fixture.offer) }
            #expect(error?.code == .malformedResponse)
            #expect(error?.message == "POST \(base)/bare answered 307 Temporary Redirect without a Location header")

            // The server echoed the token back: it is cut out of the message.
            let echo = WHIPClient(endpoint: try server.url("/echo"), configuration: Fixture.configuration())
            let echoed = await whipError { () async throws(WHIPError) in try await echo.publish(offer: Fixture.offer) }
            #expect(echoed?.code == .malformedResponse)
            #expect(
                echoed?.message
                    == "POST \(base)/echo answered 307 Temporary Redirect with an unusable Location: "
                    + "'http://[bad/[redacted]' is not an http or https URL: no ']' after an IPv6 literal"
            )
        }
    }
}
