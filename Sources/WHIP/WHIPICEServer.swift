/// A STUN or TURN server a WHIP endpoint offered in a `Link: <...>; rel="ice-server"` header
/// (RFC 9725 §4.6): the URI it gave (RFC 7064 `stun:`/`stuns:`, RFC 7065 `turn:`/`turns:`), its
/// parts, and the long-term credentials for it.
///
/// Valid by construction: the parts are read from the URI when the value is made.
public struct WHIPICEServer: Sendable, Equatable, CustomStringConvertible {
    /// The URI exactly as the server sent it, e.g. `turn:turn.example.net?transport=udp`.
    public private(set) var url: String
    public var username: String?
    public var credential: String?
    /// "stun", "stuns", "turn" or "turns" (lowercased).
    public let scheme: String
    /// A name, an IPv4 literal, or an IPv6 literal without its brackets.
    public let host: String
    /// The URI's port, or the scheme's default: 3478, or 5349 over TLS (RFC 7064 §3.2, RFC 7065 §3).
    public let port: UInt16
    /// "udp" or "tcp": the URI's `transport`, or the scheme's default, UDP for stun: and turn:,
    /// TCP (with TLS) for stuns: and turns: (RFC 7065 §3).
    public let transport: String

    /// Reads `url`; one that is not a stun:, stuns:, turn: or turns: URI throws `.invalidURL`.
    public init(url: String, username: String? = nil, credential: String? = nil) throws(WHIPError) {
        let parts: Parts
        do throws(WHIPURL.Failure) {
            parts = try Self.parse(url)
        } catch {
            throw WHIPError(
                .invalidURL,
                "'\(Printable.text(url, limit: 200))' is not an ICE server URI: \(error.reason)"
            )
        }
        self.init(url: url, parts: parts, username: username, credential: credential)
    }

    init(url: String, parts: Parts, username: String?, credential: String?) {
        self.url = url
        self.username = username
        self.credential = credential
        self.scheme = parts.scheme
        self.host = parts.host
        self.port = parts.port
        self.transport = parts.transport
    }

    /// True for turn: and turns:, which need a username and a credential.
    public var isTURN: Bool { scheme.hasPrefix("turn") }

    /// True for stuns: and turns: (TLS).
    public var isSecure: Bool { scheme.hasSuffix("s") }

    /// The URL and the user: the credential is a secret and never printed.
    public var description: String {
        username.map { "\(url) (user \(Printable.text($0, limit: 64)))" } ?? url
    }

    typealias Parts = (scheme: String, host: String, port: UInt16, transport: String)

    /// RFC 7064 §3.1 `stunURI = scheme ":" host [ ":" port ]`, and RFC 7065 §3.1
    /// `turnURI = scheme ":" host [ ":" port ] [ "?transport=" transport ]`.
    static func parse(_ text: String) throws(WHIPURL.Failure) -> Parts {
        let bytes = Array(text.utf8)
        let schemes = ["stun", "stuns", "turn", "turns"]
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")),
            case let scheme = String(decoding: bytes[..<colon], as: UTF8.self).lowercased(), schemes.contains(scheme)
        else {
            throw WHIPURL.Failure("not a stun:, stuns:, turn: or turns: URI")
        }
        let rest = bytes[(colon + 1)...]
        guard !rest.starts(with: "//".utf8) else {
            throw WHIPURL.Failure("'//' after '\(scheme):' (RFC 7064 and 7065 URIs have none)")
        }
        if let bad = rest.first(where: { !(0x21...0x7E).contains($0) }) {
            throw WHIPURL.Failure("it contains \(bad == 0x20 ? "a space" : "a control or non-ASCII character")")
        }
        let secure = scheme.hasSuffix("s")
        let mark = rest.firstIndex(of: UInt8(ascii: "?"))
        let (host, port) = try WHIPURL.parseAuthority(rest[..<(mark ?? rest.endIndex)])
        var transport = secure ? "tcp" : "udp"
        if let mark {
            let query = String(decoding: rest[(mark + 1)...], as: UTF8.self).lowercased()
            guard scheme.hasPrefix("turn") else { throw WHIPURL.Failure("a query in a \(scheme): URI") }
            guard query == "transport=udp" || query == "transport=tcp" else {
                throw WHIPURL.Failure("unsupported query '\(Printable.text(query, limit: 64))' (transport=udp or tcp)")
            }
            transport = String(query.dropFirst("transport=".count))
        }
        return (scheme, host, UInt16(port ?? (secure ? 5349 : 3478)), transport)
    }
}
