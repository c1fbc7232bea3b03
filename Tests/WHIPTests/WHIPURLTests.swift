import Testing
import WHIP

/// WHIP endpoint URLs as users write them, and Location values resolved as RFC 3986 §5.4 does.
@Suite("WHIP URLs")
struct WHIPURLTests {
    @Test(
        "valid URLs: scheme, host, port, path and query, and how they print",
        arguments: [
            ("http://example.com", "http", "example.com", 80, "/", "http://example.com/"),
            ("HTTPS://Example.COM/whip", "https", "example.com", 443, "/whip", "https://example.com/whip"),
            ("https://example.com:443/a?b=c", "https", "example.com", 443, "/a?b=c", "https://example.com/a?b=c"),
            ("http://127.0.0.1:8080/whip/x", "http", "127.0.0.1", 8080, "/whip/x", "http://127.0.0.1:8080/whip/x"),
            ("http://[::1]:9000/w", "http", "::1", 9000, "/w", "http://[::1]:9000/w"),
            ("https://[2001:DB8::7]/w#frag", "https", "2001:db8::7", 443, "/w", "https://[2001:db8::7]/w"),
            ("http://h.example:/p", "http", "h.example", 80, "/p", "http://h.example/p"),
            ("http://h?x=1", "http", "h", 80, "/?x=1", "http://h/?x=1"),
            ("http://h/a/./b/../c%2F?q=%20", "http", "h", 80, "/a/c%2F?q=%20", "http://h/a/c%2F?q=%20"),
            (
                "http://my_host-1.example/live;id=7", "http", "my_host-1.example", 80, "/live;id=7",
                "http://my_host-1.example/live;id=7"
            ),
        ]
    )
    func parses(
        _ text: String,
        _ scheme: String,
        _ host: String,
        _ port: Int,
        _ target: String,
        _ printed: String
    )
        throws
    {
        let url = try WHIPURL(parsing: text)
        #expect(url.scheme.rawValue == scheme)
        #expect(url.host == host)
        #expect(url.port == port)
        #expect(url.pathAndQuery == target)
        #expect(url.description == printed)
        #expect(try WHIPURL(parsing: url.description) == url)
    }

    @Test("Host header form, path, query, IP literals")
    func parts() throws {
        let v6 = try WHIPURL(parsing: "https://[fe80::1]:8443/p?q")
        #expect(v6.authority == "[fe80::1]:8443")
        #expect(v6.path == "/p")
        #expect(v6.query == "q")
        #expect(v6.hostIsIPLiteral)
        let name = try WHIPURL(parsing: "https://whip.example.com/p")
        #expect(name.authority == "whip.example.com")
        #expect(name.query == nil)
        #expect(!name.hostIsIPLiteral)
        #expect(try WHIPURL(parsing: "http://127.0.0.9/").hostIsIPLiteral)
    }

    @Test(
        "invalid URLs are refused with the reason",
        arguments: [
            ("", "'' is not an http or https URL: it is empty"),
            ("ftp://h/x", "'ftp://h/x' is not an http or https URL: the scheme is not http or https"),
            ("example.com/whip", "'example.com/whip' is not an http or https URL: the scheme is not http or https"),
            ("http:/h/x", "'http:/h/x' is not an http or https URL: no '//' after 'http:'"),
            ("http:///x", "'http:///x' is not an http or https URL: no host"),
            ("http://h x/", "'http://h x/' is not an http or https URL: it contains a space"),
            ("http://h/\u{7}", "'http://h/' is not an http or https URL: it contains a control or non-ASCII character"),
            ("http://hé/", "'http://h?/' is not an http or https URL: it contains a control or non-ASCII character"),
            (
                "http://user:pw@h/",
                "'http://user:pw@h/' is not an http or https URL: user information in a URL is not supported "
                    + "(pass a bearer token instead)"
            ),
            ("http://h:0/", "'http://h:0/' is not an http or https URL: the port '0' is not a number from 1 to 65535"),
            (
                "http://h:65536/",
                "'http://h:65536/' is not an http or https URL: the port '65536' is not a number from 1 to 65535"
            ),
            ("http://h:x/", "'http://h:x/' is not an http or https URL: the port 'x' is not a number from 1 to 65535"),
            ("http://[::1/", "'http://[::1/' is not an http or https URL: no ']' after an IPv6 literal"),
            ("http://[zz::1]/", "'http://[zz::1]/' is not an http or https URL: 'zz::1' is not an IPv6 address"),
            ("http://[::1]x/", "'http://[::1]x/' is not an http or https URL: unexpected text after the IPv6 literal"),
            ("http://1.2.3/", "'http://1.2.3/' is not an http or https URL: '1.2.3' is not an IPv4 address"),
            (
                "http://a!b/",
                "'http://a!b/' is not an http or https URL: the host 'a!b' has characters a host name cannot have"
            ),
            (
                "http://h/%zz",
                "'http://h/%zz' is not an http or https URL: a '%' that does not start a two-digit escape"
            ),
            (
                "http://h/a<b",
                "'http://h/a<b' is not an http or https URL: the character '<' is not allowed in a path or query"
            ),
        ]
    )
    func refuses(_ text: String, _ message: String) {
        let error = #expect(throws: WHIPError.self) { try WHIPURL(parsing: text) }
        #expect(error?.code == .invalidURL)
        #expect(error?.message == message)
        #expect(error?.status == nil)
    }

    @Test("a URL longer than 4096 bytes is refused")
    func tooLong() {
        let error = #expect(throws: WHIPError.self) {
            try WHIPURL(parsing: "http://h/" + String(repeating: "a", count: 4090))
        }
        #expect(error?.message.hasSuffix("is not an http or https URL: longer than 4096 bytes") == true)
    }

    /// RFC 3986 §5.4.1 and §5.4.2, against its base `http://a/b/c/d;p?q`.
    @Test(
        "references resolve as RFC 3986 §5.4 shows",
        arguments: [
            ("g", "http://a/b/c/g"), ("./g", "http://a/b/c/g"), ("g/", "http://a/b/c/g/"),
            ("/g", "http://a/g"), ("//g", "http://g/"), ("?y", "http://a/b/c/d;p?y"),
            ("g?y", "http://a/b/c/g?y"), ("#s", "http://a/b/c/d;p?q"), ("g#s", "http://a/b/c/g"),
            ("g?y#s", "http://a/b/c/g?y"), (";x", "http://a/b/c/;x"), ("g;x", "http://a/b/c/g;x"),
            ("g;x?y#s", "http://a/b/c/g;x?y"), ("", "http://a/b/c/d;p?q"), (".", "http://a/b/c/"),
            ("./", "http://a/b/c/"), ("..", "http://a/b/"), ("../", "http://a/b/"), ("../g", "http://a/b/g"),
            ("../..", "http://a/"), ("../../", "http://a/"), ("../../g", "http://a/g"),
            ("../../../g", "http://a/g"), ("../../../../g", "http://a/g"), ("/./g", "http://a/g"),
            ("/../g", "http://a/g"), ("g.", "http://a/b/c/g."), (".g", "http://a/b/c/.g"),
            ("g..", "http://a/b/c/g.."), ("..g", "http://a/b/c/..g"), ("./../g", "http://a/b/g"),
            ("./g/.", "http://a/b/c/g/"), ("g/./h", "http://a/b/c/g/h"), ("g/../h", "http://a/b/c/h"),
            ("g;x=1/./y", "http://a/b/c/g;x=1/y"), ("g;x=1/../y", "http://a/b/c/y"),
            ("g?y/./x", "http://a/b/c/g?y/./x"), ("g?y/../x", "http://a/b/c/g?y/../x"),
            ("g#s/./x", "http://a/b/c/g"), ("g#s/../x", "http://a/b/c/g"),
            ("https://other.example:8443/s/1", "https://other.example:8443/s/1"),
            ("HTTP://A/x", "http://a/x"),
        ]
    )
    func resolves(_ reference: String, _ expected: String) throws {
        let base = try WHIPURL(parsing: "http://a/b/c/d;p?q")
        #expect(try base.resolving(reference: reference).description == expected)
    }

    @Test("a network-path reference keeps the base's scheme")
    func networkPath() throws {
        let base = try WHIPURL(parsing: "https://whip.example.com:8443/whip/endpoint")
        #expect(
            try base.resolving(reference: "//media-7.example.com/s/42").description
                == "https://media-7.example.com/s/42"
        )
        #expect(
            try base.resolving(reference: "session/42").description == "https://whip.example.com:8443/whip/session/42"
        )
    }

    @Test(
        "references that do not resolve to http or https are refused",
        arguments: [
            ("g:h", "'g:h' is not an http or https URL: the scheme is not http or https"),
            ("mailto:x@y", "'mailto:x@y' is not an http or https URL: the scheme is not http or https"),
            ("http:g", "'http:g' is not an http or https URL: no '//' after 'http:'"),
            (
                "/a b",
                "'/a b' does not resolve against http://a/b/c/d;p?q to an http or https URL: it contains a space"
            ),
            (
                "/a%2",
                "'/a%2' does not resolve against http://a/b/c/d;p?q to an http or https URL: "
                    + "a '%' that does not start a two-digit escape"
            ),
        ]
    )
    func refusesReference(_ reference: String, _ message: String) throws {
        let base = try WHIPURL(parsing: "http://a/b/c/d;p?q")
        let error = #expect(throws: WHIPError.self) { try base.resolving(reference: reference) }
        #expect(error?.code == .invalidURL)
        #expect(error?.message == message)
    }
}
