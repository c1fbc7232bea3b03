import NIOCore

/// Where the host listens and the capture process connects: `unix:/path` (the default kind, a
/// Unix-domain stream socket) or `tcp:HOST:PORT`, with IPv6 hosts in brackets (`tcp:[::1]:5000`).
///
/// TCP is for loopback only unless a caller explicitly allows more: raw screen content and
/// microphone audio travel unencrypted and unauthenticated on this socket.
public enum IngestAddress: Sendable, Hashable, CustomStringConvertible {
    case unix(path: String)
    case tcp(host: String, port: Int)

    /// `sun_path` holds 108 bytes including the terminating NUL.
    public static let maxUnixPathBytes = 107

    public init(parsing text: String) throws(IngestError) {
        if text.hasPrefix("unix:") {
            let path = String(text.dropFirst("unix:".count))
            guard !path.isEmpty else {
                throw IngestError(.invalidAddress, "'\(text)' has no socket path after 'unix:'")
            }
            guard !path.utf8.contains(0) else {
                throw IngestError(.invalidAddress, "the socket path in '\(text)' contains a NUL byte")
            }
            guard path.utf8.count <= Self.maxUnixPathBytes else {
                throw IngestError(
                    .invalidAddress,
                    "the socket path is \(path.utf8.count) bytes; Unix-domain sockets allow at most "
                        + "\(Self.maxUnixPathBytes)"
                )
            }
            self = .unix(path: path)
        } else if text.hasPrefix("tcp:") {
            let (host, port) = try Self.hostAndPort(String(text.dropFirst("tcp:".count)), in: text)
            self = .tcp(host: host, port: port)
        } else {
            throw IngestError(.invalidAddress, "'\(text)' is not unix:/path or tcp:HOST:PORT")
        }
    }

    private static func hostAndPort(_ rest: String, in text: String) throws(IngestError) -> (String, Int) {
        let host: Substring
        let portText: Substring
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else {
                throw IngestError(.invalidAddress, "'\(text)' opens an IPv6 address with '[' but has no ']'")
            }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            guard after.hasPrefix(":") else {
                throw IngestError(.invalidAddress, "'\(text)' needs ':PORT' after the IPv6 address")
            }
            portText = after.dropFirst()
        } else {
            guard let colon = rest.lastIndex(of: ":") else {
                throw IngestError(.invalidAddress, "'\(text)' has no port: use tcp:HOST:PORT")
            }
            host = rest[..<colon]
            portText = rest[rest.index(after: colon)...]
            guard !host.contains(":") else {
                throw IngestError(.invalidAddress, "'\(text)': IPv6 addresses go in brackets, as in tcp:[::1]:PORT")
            }
        }
        guard !host.isEmpty else {
            throw IngestError(.invalidAddress, "'\(text)' has no host")
        }
        guard !portText.isEmpty, portText.allSatisfy({ $0.isASCII && $0.isNumber }), portText.count <= 5,
            let port = Int(portText), port <= 65_535
        else {
            throw IngestError(.invalidAddress, "'\(portText)' in '\(text)' is not a port number 0–65535")
        }
        return (String(host), port)
    }

    public var description: String {
        switch self {
        case .unix(let path): "unix:\(path)"
        case .tcp(let host, let port): host.contains(":") ? "tcp:[\(host)]:\(port)" : "tcp:\(host):\(port)"
        }
    }

    /// True for Unix-domain sockets, `localhost`, 127.0.0.0/8 and ::1.
    public var isLoopback: Bool {
        switch self {
        case .unix:
            return true
        case .tcp(let host, _):
            if host == "localhost" { return true }
            guard let address = try? SocketAddress(ipAddress: host, port: 0) else { return false }
            switch address {
            case .v4(let v4):
                // s_addr is in network order: its first byte in memory is the first octet.
                return withUnsafeBytes(of: v4.address.sin_addr.s_addr) { $0.first == 127 }
            case .v6(let v6):
                let loopback: [UInt8] = Array(repeating: 0, count: 15) + [1]
                return withUnsafeBytes(of: v6.address.sin6_addr) { Array($0) == loopback }
            default:
                return false
            }
        }
    }

    /// Throws unless the address is loopback or `allowed` says other hosts are fine.
    public func requireLoopback(unless allowed: Bool) throws(IngestError) {
        guard allowed || isLoopback else {
            throw IngestError(
                .invalidAddress,
                "\(self) is not a loopback address; the ingest socket carries unencrypted screen content, "
                    + "so only 127.0.0.0/8, ::1, localhost or a unix: path are allowed"
            )
        }
    }

    /// The socket address to bind or connect to (`localhost` means 127.0.0.1; other names are
    /// resolved).
    func socketAddress() throws(IngestError) -> SocketAddress {
        do {
            switch self {
            case .unix(let path):
                return try SocketAddress(unixDomainSocketPath: path)
            case .tcp(let host, let port):
                return try SocketAddress.makeAddressResolvingHost(host == "localhost" ? "127.0.0.1" : host, port: port)
            }
        } catch {
            throw IngestError(.invalidAddress, "cannot use \(self): \(error)")
        }
    }
}
