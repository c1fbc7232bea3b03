import Testing
import WHIP

/// Errors, configuration and ICE servers as values: what callers switch on and what gets logged.
@Suite("WHIP values")
struct WHIPValueTests {
    @Test(
        "isClientError: 4xx other than 408 and 429; never without a status",
        arguments: [
            (400, true), (401, true), (403, true), (404, true), (412, true), (422, true), (499, true),
            (408, false), (429, false), (301, false), (500, false), (503, false), (399, false),
        ]
    )
    func clientError(_ status: Int, _ expected: Bool) {
        #expect(WHIPError(.status, "x", status: status).isClientError == expected)
    }

    @Test("descriptions carry the code and the status")
    func descriptions() {
        #expect(WHIPError(.timeout, "no answer").description == "WHIPError(timeout): no answer")
        #expect(WHIPError(.status, "nope", status: 404).description == "WHIPError(status, 404): nope")
        #expect(!WHIPError(.connection, "x").isClientError)
        #expect(WHIPError.Code.tooManyRedirects.description == "too-many-redirects")
    }

    @Test("a configuration prints and dumps without its token")
    func configurationHidesToken() {
        var configuration = WHIPClient.Configuration(token: "s3cr3t-token")
        configuration.trustedCertificatesPEMPath = "/etc/ca.pem"
        #expect(
            configuration.description
                == "WHIPClient.Configuration(token: [redacted], trustedCertificatesPEMPath: /etc/ca.pem, "
                + "connectTimeout: 5.0 seconds, responseTimeout: 10.0 seconds, maximumRedirects: 5, "
                + "maximumBodyBytes: 65536, maximumHeaderBytes: 16384, userAgent: rtc-publish)"
        )
        var dumped = ""
        dump(configuration, to: &dumped)
        #expect(!dumped.contains("s3cr3t"))
        #expect(dumped.contains("[redacted]"))
        #expect(!"\(configuration)".contains("s3cr3t"))
        #expect(!String(reflecting: configuration).contains("s3cr3t"))
        #expect(WHIPClient.Configuration().description.hasPrefix("WHIPClient.Configuration(token: none, "))
    }

    @Test("an ICE server prints its URL and user, never its credential; its parts")
    func iceServer() throws {
        let server = try WHIPICEServer(url: "TURNS:t.example:443?transport=tcp", username: "u", credential: "pw")
        #expect(server.description == "TURNS:t.example:443?transport=tcp (user u)")
        #expect(server.scheme == "turns")
        #expect(server.host == "t.example")
        #expect(server.port == 443)
        #expect(server.transport == "tcp")
        #expect(server.isTURN && server.isSecure)
        let stuns = try WHIPICEServer(url: "stuns:s.example")
        #expect(stuns.transport == "tcp")
        #expect(stuns.port == 5349)
        #expect(!stuns.isTURN)
        let error = #expect(throws: WHIPError.self) { try WHIPICEServer(url: "https://example.com") }
        #expect(error?.code == .invalidURL)
        #expect(
            error?.message == "'https://example.com' is not an ICE server URI: not a stun:, stuns:, turn: or turns: URI"
        )
    }
}
