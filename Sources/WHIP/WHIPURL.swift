import NIOCore

/// An absolute http or https URL (RFC 3986 §3, RFC 9110 §4.2): a WHIP endpoint, a redirect target
/// or a session resource.
///
/// Only what an HTTP/1.1 client needs is kept: scheme, host, port and the path with its query. A
/// fragment is dropped (it never reaches the server); user information is refused (the token goes
/// in the Authorization header, RFC 9725 §4.7.1).
public struct WHIPURL: Sendable, Hashable, CustomStringConvertible {
    public enum Scheme: String, Sendable, Hashable {
        case http
        case https

        public var defaultPort: Int { self == .http ? 80 : 443 }
    }

    public let scheme: Scheme
    /// A lowercased name, an IPv4 literal, or an IPv6 literal without its brackets.
    public let host: String
    public let port: Int
    /// The path (never empty, dot segments removed) and the query when there is one: what the
    /// request line carries.
    public let pathAndQuery: String

    /// Longer input is refused before it is looked at.
    public static let maximumLength = 4096

    init(scheme: Scheme, host: String, port: Int, pathAndQuery: String) {
        self.scheme = scheme
        self.host = host
        self.port = port
        self.pathAndQuery = pathAndQuery
    }

    /// Reads `http://host[:port][/path][?query][#fragment]`; anything else throws `.invalidURL`.
    public init(parsing text: String) throws(WHIPError) {
        let bytes = Array(text.utf8)
        let fail = { (why: String) in
            WHIPError(.invalidURL, "'\(Printable.text(text, limit: 200))' is not an http or https URL: \(why)")
        }
        guard bytes.count <= Self.maximumLength else { throw fail("longer than \(Self.maximumLength) bytes") }
        guard !bytes.isEmpty else { throw fail("it is empty") }
        if let bad = bytes.first(where: { !(0x21...0x7E).contains($0) }) {
            throw fail("it contains \(bad == 0x20 ? "a space" : "a control or non-ASCII character")")
        }
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")),
            let scheme = Scheme(rawValue: String(decoding: bytes[..<colon], as: UTF8.self).lowercased())
        else {
            throw fail("the scheme is not http or https")
        }
        let rest = bytes[(colon + 1)...]
        guard rest.starts(with: "//".utf8) else { throw fail("no '//' after '\(scheme.rawValue):'") }
        let afterSlashes = rest.dropFirst(2)
        let withoutFragment = afterSlashes.prefix { $0 != UInt8(ascii: "#") }
        let authorityEnd =
            withoutFragment.firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") }
            ?? withoutFragment.endIndex
        let (host, port): (String, Int?)
        do throws(Failure) {
            (host, port) = try Self.parseAuthority(withoutFragment[..<authorityEnd])
        } catch {
            throw fail(error.reason)
        }
        let target = withoutFragment[authorityEnd...]
        if let reason = Self.invalidCharacter(in: target) {
            throw fail(reason)
        }
        let (path, query) = Self.split(String(decoding: target, as: UTF8.self))
        self.init(
            scheme: scheme,
            host: host,
            port: port ?? scheme.defaultPort,
            pathAndQuery: Self.join(Self.removeDotSegments(path.isEmpty ? "/" : path), query)
        )
    }

    /// The path alone, without the query.
    public var path: String { Self.split(pathAndQuery).path }

    /// The query without its `?`, nil when there is none.
    public var query: String? { Self.split(pathAndQuery).query }

    /// True for an IPv4 or IPv6 literal: no name to send as TLS SNI or to verify against.
    public var hostIsIPLiteral: Bool {
        (try? SocketAddress(ipAddress: host, port: 0)) != nil
    }

    /// `host[:port]` as the Host header carries it (RFC 9110 §7.2): brackets around an IPv6
    /// literal, the port only when it is not the scheme's default.
    public var authority: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return port == scheme.defaultPort ? name : "\(name):\(port)"
    }

    public var description: String { "\(scheme.rawValue)://\(authority)\(pathAndQuery)" }
}

extension WHIPURL {
    struct Failure: Error {
        let reason: String
        init(_ reason: String) { self.reason = reason }
    }

    /// RFC 3986 §3.2: `host [":" port]`, host a name, an IPv4 literal or a bracketed IPv6 literal.
    static func parseAuthority(_ authority: ArraySlice<UInt8>) throws(Failure) -> (String, Int?) {
        guard !authority.contains(UInt8(ascii: "@")) else {
            throw Failure("user information in a URL is not supported (pass a bearer token instead)")
        }
        let host: String
        let portText: ArraySlice<UInt8>?
        if authority.first == UInt8(ascii: "[") {
            guard let close = authority.firstIndex(of: UInt8(ascii: "]")) else {
                throw Failure("no ']' after an IPv6 literal")
            }
            host = String(decoding: authority[(authority.startIndex + 1)..<close], as: UTF8.self).lowercased()
            guard host.contains(":"), let address = try? SocketAddress(ipAddress: host, port: 0), case .v6 = address
            else {
                throw Failure("'\(Printable.text(host, limit: 64))' is not an IPv6 address")
            }
            let after = authority[(close + 1)...]
            guard after.isEmpty || after.first == UInt8(ascii: ":") else {
                throw Failure("unexpected text after the IPv6 literal")
            }
            portText = after.isEmpty ? nil : after.dropFirst()
        } else {
            let colon = authority.firstIndex(of: UInt8(ascii: ":"))
            let name = authority[..<(colon ?? authority.endIndex)]
            portText = colon.map { authority[($0 + 1)...] }
            host = try parseName(name)
        }
        guard let portText, !portText.isEmpty else { return (host, nil) }
        guard portText.count <= 5, portText.allSatisfy({ (0x30...0x39).contains($0) }),
            let port = Int(String(decoding: portText, as: UTF8.self)), (1...65535).contains(port)
        else {
            throw Failure("the port '\(Printable.text(portText, limit: 16))' is not a number from 1 to 65535")
        }
        return (host, port)
    }

    /// A DNS name or an IPv4 literal, lowercased.
    private static func parseName(_ name: ArraySlice<UInt8>) throws(Failure) -> String {
        guard !name.isEmpty else { throw Failure("no host") }
        guard name.count <= 253 else { throw Failure("the host name is longer than 253 bytes") }
        let allowed = { (byte: UInt8) in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
        }
        let text = String(decoding: name, as: UTF8.self).lowercased()
        guard name.allSatisfy(allowed) else {
            throw Failure("the host '\(Printable.text(text, limit: 64))' has characters a host name cannot have")
        }
        let numeric = name.allSatisfy { (0x30...0x39).contains($0) || $0 == UInt8(ascii: ".") }
        if numeric && (try? SocketAddress(ipAddress: text, port: 0)) == nil {
            throw Failure("'\(text)' is not an IPv4 address")
        }
        return text
    }

    /// RFC 3986 §3.3 and §3.4: pchar, "/" and "?", with every "%" starting a two-digit escape.
    static func invalidCharacter(in target: some Collection<UInt8>) -> String? {
        let bytes = Array(target)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < bytes.count, bytes[index + 1].isHexDigit, bytes[index + 2].isHexDigit else {
                    return "a '%' that does not start a two-digit escape"
                }
                index += 3
                continue
            }
            guard byte.isURIPathCharacter else {
                return "the character '\(Character(Unicode.Scalar(byte)))' is not allowed in a path or query"
            }
            index += 1
        }
        return nil
    }

    static func split(_ pathAndQuery: String) -> (path: String, query: String?) {
        guard let mark = pathAndQuery.firstIndex(of: "?") else { return (pathAndQuery, nil) }
        return (String(pathAndQuery[..<mark]), String(pathAndQuery[pathAndQuery.index(after: mark)...]))
    }

    static func join(_ path: String, _ query: String?) -> String {
        query.map { "\(path)?\($0)" } ?? path
    }
}

extension UInt8 {
    var isHexDigit: Bool {
        (0x30...0x39).contains(self) || (0x41...0x46).contains(self) || (0x61...0x66).contains(self)
    }

    /// unreserved, sub-delims, ":", "@" (pchar without the escape), and "/" and "?".
    var isURIPathCharacter: Bool {
        switch self {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: return true
        default: return Array("-._~!$&'()*+,;=:@/?".utf8).contains(self)
        }
    }
}
