import Testing
import WHIP

/// `Link` headers offering ICE servers (RFC 9725 §4.6) in RFC 8288's syntax, and broken ones.
@Suite("WHIP Link headers")
struct WHIPLinkHeaderTests {
    @Test("RFC 9725 Figure 5, one header each")
    func rfcExample() throws {
        let (servers, ignored) = WHIPLinkHeader.iceServers([
            #"<stun:stun.example.net>; rel="ice-server""#,
            #"<turn:turn.example.net?transport=udp>; rel="ice-server"; username="user"; credential="myPassword""#,
            #"<turn:turn.example.net?transport=tcp>; rel="ice-server"; username="user"; credential="myPassword""#,
            #"<turns:turn.example.net?transport=tcp>; rel="ice-server"; username="user"; credential="myPassword""#,
        ])
        #expect(ignored == [])
        #expect(
            try servers == [
                WHIPICEServer(url: "stun:stun.example.net"),
                WHIPICEServer(url: "turn:turn.example.net?transport=udp", username: "user", credential: "myPassword"),
                WHIPICEServer(url: "turn:turn.example.net?transport=tcp", username: "user", credential: "myPassword"),
                WHIPICEServer(url: "turns:turn.example.net?transport=tcp", username: "user", credential: "myPassword"),
            ]
        )
        #expect(servers.map(\.scheme) == ["stun", "turn", "turn", "turns"])
        #expect(
            servers.map(\.host) == ["stun.example.net", "turn.example.net", "turn.example.net", "turn.example.net"]
        )
        #expect(servers.map(\.port) == [3478, 3478, 3478, 5349])
        #expect(servers.map(\.transport) == ["udp", "udp", "tcp", "tcp"])
        #expect(servers[1].description == "turn:turn.example.net?transport=udp (user user)")
    }

    @Test("credential-type=\"password\" (drafts of RFC 9725), ports and IPv6 literals")
    func credentialTypeAndPorts() throws {
        let (servers, ignored) = WHIPLinkHeader.iceServers([
            #"<turn:turn.example.net:3479?transport=udp>; rel="ice-server"; username="user"; credential="pass"; credential-type="password""#,
            #"<stun:[2001:db8::1]:19302>; rel=ice-server"#,
        ])
        #expect(ignored == [])
        #expect(servers.count == 2)
        #expect(servers[0].scheme == "turn")
        #expect(servers[0].host == "turn.example.net")
        #expect(servers[0].port == 3479)
        #expect(servers[0].transport == "udp")
        #expect(servers[0].username == "user")
        #expect(servers[0].credential == "pass")
        #expect(servers[1].host == "2001:db8::1")
        #expect(servers[1].port == 19302)
    }

    @Test("several links in one header, token and quoted values, escapes, empty elements")
    func severalInOneHeader() throws {
        let (servers, ignored) = WHIPLinkHeader.iceServers([
            #" , <stun:a.example>;rel=ice-server,<turn:b.example?transport=tcp> ; rel = "ice-server" ; username=u-1 ; credential="p,w;x" ,, "#,
            #"<turn:c.example>; rel="ice-server"; username="a\"b\\c"; credential=pw, <turn:d.example>; rel=ice-server; username=u; credential="""#,
        ])
        #expect(
            try servers == [
                WHIPICEServer(url: "stun:a.example"),
                WHIPICEServer(url: "turn:b.example?transport=tcp", username: "u-1", credential: "p,w;x"),
                WHIPICEServer(url: "turn:c.example", username: #"a"b\c"#, credential: "pw"),
            ]
        )
        #expect(ignored == ["<turn:d.example>: credential without a value"])
    }

    @Test("rel with several types, in any case; only the first rel counts (RFC 8288 §3)")
    func relationTypes() throws {
        let (servers, ignored) = WHIPLinkHeader.iceServers([
            #"<stun:a.example>; rel="preload ICE-Server""#,
            #"<stun:b.example>; rel="other"; rel="ice-server""#,
            #"<https://whip.example.com/session/id/sse>; rel="urn:ietf:params:whip:ext:example:server-sent-events""#,
            #"<stun:c.example>; title="no rel""#,
        ])
        #expect(try servers == [WHIPICEServer(url: "stun:a.example")])
        #expect(
            ignored == [
                #"<stun:b.example>: rel "other" is not ice-server"#,
                #"<https://whip.example.com/session/id/sse>: rel "urn:ietf:params:whip:ext:example:server-sent-events" is not ice-server"#,
                "<stun:c.example>: no rel parameter",
            ]
        )
    }

    @Test(
        "malformed or unusable links are ignored with the reason, and the next one is still read",
        arguments: [
            ("stun:x; rel=ice-server", "link 1: no '<' at the start of the link"),
            ("<stun:x; rel=ice-server", "link 1: a space or invalid character inside '<...>'"),
            ("<stun:x> rel=ice-server", "<stun:x>: 'r' where ';' or ',' belongs"),
            ("<stun:x>; =v", "<stun:x>: a parameter without a name"),
            ("<stun:x>; rel=", "<stun:x>: parameter 'rel' has no value after '='"),
            (
                "<stun:x>; rel=ice-server; username=\"a\u{1}b\"",
                "<stun:x>: parameter 'username' has a control character"
            ),
            (
                "<https://example.com>; rel=ice-server",
                "<https://example.com>: not a stun:, stuns:, turn: or turns: URI"
            ),
            ("<turn:t.example>; rel=ice-server", "<turn:t.example>: a TURN server without username and credential"),
            (
                "<turn:t.example?transport=sctp>; rel=ice-server; username=u; credential=p",
                "<turn:t.example?transport=sctp>: unsupported query 'transport=sctp' (transport=udp or tcp)"
            ),
            (
                "<stun:s.example?transport=udp>; rel=ice-server",
                "<stun:s.example?transport=udp>: a query in a stun: URI"
            ),
            (
                "<stun://s.example>; rel=ice-server",
                "<stun://s.example>: '//' after 'stun:' (RFC 7064 and 7065 URIs have none)"
            ),
            ("<stun:>; rel=ice-server", "<stun:>: no host"),
            (
                "<stun:s.example:99999>; rel=ice-server",
                "<stun:s.example:99999>: the port '99999' is not a number from 1 to 65535"
            ),
            (
                "<turn:t.example>; rel=ice-server; username=u; credential=p; credential-type=oauth",
                "<turn:t.example>: credential-type \"oauth\" is not supported (password only)"
            ),
            (
                "<turn:user:secret@t.example>; rel=ice-server; username=u; credential=p",
                "<turn:[redacted]@t.example>: user information in a URL is not supported (pass a bearer token instead)"
            ),
        ]
    )
    func ignored(_ value: String, _ reason: String) throws {
        let (servers, ignored) = WHIPLinkHeader.iceServers([value + #", <stun:ok.example>; rel="ice-server""#])
        #expect(ignored == [reason])
        #expect(try servers == [WHIPICEServer(url: "stun:ok.example")])
    }

    @Test("an unterminated target or quoted string takes the rest of its header, not the next header")
    func unterminated() throws {
        let (servers, ignored) = WHIPLinkHeader.iceServers([
            "<stun:x",
            #"<stun:y>; rel="ice-server, <stun:lost.example>; rel=ice-server"#,
            "<stun:ok.example>; rel=ice-server",
        ])
        #expect(try servers == [WHIPICEServer(url: "stun:ok.example")])
        #expect(ignored == ["link 1: no '>' after the target", #"<stun:y>: parameter 'rel' has no closing '"'"#])
    }

    @Test("at most 16 servers; a link-value over 1 KiB is ignored; 16 reasons at most")
    func limits() throws {
        let many = (1...20).map { "<stun:s\($0).example>; rel=ice-server" }.joined(separator: ", ")
        let (servers, ignored) = WHIPLinkHeader.iceServers([many])
        #expect(servers.map(\.url) == (1...16).map { "stun:s\($0).example" })
        #expect(ignored == (17...20).map { "<stun:s\($0).example>: more than 16 ICE servers" })

        let long = "<turn:t.example>; rel=ice-server; username=u; credential=\"\(String(repeating: "x", count: 1000))\""
        let (none, tooLong) = WHIPLinkHeader.iceServers([long])
        #expect(none == [])
        #expect(tooLong == ["<turn:t.example>: longer than 1024 bytes"])

        let noise = (1...20).map { "<stun:n\($0).example>" }
        let (_, capped) = WHIPLinkHeader.iceServers(noise)
        #expect(capped.count == 17)
        #expect(capped.first == "<stun:n1.example>: no rel parameter")
        #expect(capped.last == "4 more links ignored")
    }

    @Test("hostile input never crashes and yields nothing usable")
    func hostile() throws {
        let inputs = [
            "", ",", ";", "<", ">", "<>", "\"", "<a>;\"", "<a>; x=\"\\", "<a>; x=\"\\\u{0}\"", "<a>;;;, ,;",
            String(repeating: "<", count: 5000), String(repeating: "\"", count: 5000),
            "<stun:\u{FF}>; rel=ice-server", "<stun:x>; rel=\"ice-server\u{80}\"",
        ]
        for input in inputs {
            let (servers, _) = WHIPLinkHeader.iceServers([input])
            #expect(servers == [], "\(input.prefix(20))")
        }
    }
}
