import ICE
import Ingest
import Transport
import WHIP

/// `HOST:PORT` with a port in 1...65535 and any host text before the last colon (a name is
/// resolved later): `--signal`, `--stun`, and the server in `--turn`.
public struct HostPort: ArgumentValue, Hashable {
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    public static func parse(_ text: String) throws(InvalidValue) -> HostPort {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
            (1...65535).contains(port), colon > text.startIndex
        else { throw InvalidValue("'\(text)' is not HOST:PORT") }
        return HostPort(host: String(text[..<colon]), port: port)
    }
}

/// `--ice-address`: a numeric IPv4 or IPv6 address, kept as given.
public struct IPAddress: ArgumentValue, Hashable {
    public var text: String

    public static func parse(_ text: String) throws(InvalidValue) -> IPAddress {
        guard (try? UDPAddress(host: text, port: 0)) != nil else {
            throw InvalidValue("'\(text)' is not a numeric IPv4 or IPv6 address")
        }
        return IPAddress(text: text)
    }
}

/// `--ice-ports MIN-MAX`: two decimal UDP ports, 1...65535, MIN ≤ MAX (one port: `N-N`).
public struct PortRange: ArgumentValue, Hashable {
    public var ports: ClosedRange<UInt16>

    public static func parse(_ text: String) throws(InvalidValue) -> PortRange {
        let quoted = "'\(text.prefix(40))'"
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        let digits = parts.allSatisfy { part in
            (1...5).contains(part.utf8.count)
                && part.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
        }
        guard parts.count == 2, digits, let low = Int(parts[0]), let high = Int(parts[1]) else {
            throw InvalidValue("\(quoted): not MIN-MAX, two UDP ports such as 40000-40999")
        }
        for port in [low, high] where !(1...65535).contains(port) {
            throw InvalidValue("\(quoted): port \(port) is outside 1-65535")
        }
        guard low <= high else {
            throw InvalidValue("\(quoted): the first port \(low) is above the last \(high)")
        }
        return PortRange(ports: UInt16(low)...UInt16(high))
    }
}

/// `--ice-transport-policy`: `all` offers every candidate; `relay` only the TURN server's.
public enum ICETransportPolicy: ArgumentValue, Hashable {
    case all
    case relay

    public static func parse(_ text: String) throws(InvalidValue) -> ICETransportPolicy {
        switch text {
        case "all": return .all
        case "relay": return .relay
        default: throw InvalidValue("'\(text.prefix(40))' is not all or relay")
        }
    }
}

/// `--turn turn:USER:PASS@HOST:PORT` (UDP). The password may hold `:`; the user may not.
extension ICEAgent.TURNServer: ArgumentValue {
    public static func parse(_ text: String) throws(InvalidValue) -> ICEAgent.TURNServer {
        let usage = InvalidValue("'\(text.prefix(200))' is not turn:USER:PASS@HOST:PORT")
        guard text.hasPrefix("turn:"), let at = text.lastIndex(of: "@") else { throw usage }
        let credentials = text[text.index(text.startIndex, offsetBy: 5)..<at]
        guard let colon = credentials.firstIndex(of: ":") else { throw usage }
        let user = String(credentials[..<colon])
        let password = String(credentials[credentials.index(after: colon)...])
        guard !user.isEmpty, !password.isEmpty, user.utf8.count <= 128, password.utf8.count <= 128 else {
            throw usage
        }
        let server = try HostPort.parse(String(text[text.index(after: at)...]))
        return ICEAgent.TURNServer(
            server: ICEAgent.Server(host: server.host, port: UInt16(server.port)),
            username: user,
            password: password
        )
    }
}

/// `--preview` and `--to`: `HOST:PORT` or `[V6HOST]:PORT` with a numeric host.
extension UDPAddress: ArgumentValue {
    public static func parse(_ text: String) throws(InvalidValue) -> UDPAddress {
        do {
            return try UDPAddress(parsing: text)
        } catch {
            throw InvalidValue(error.message)
        }
    }
}

/// `--ingest unix:/path` or `tcp:HOST:PORT`.
extension IngestAddress: ArgumentValue {
    public static func parse(_ text: String) throws(InvalidValue) -> IngestAddress {
        do {
            return try IngestAddress(parsing: text)
        } catch {
            throw InvalidValue("'\(text)': \(error.message)")
        }
    }
}

/// `--whip URL`: an absolute http or https URL.
extension WHIPURL: ArgumentValue {
    public static func parse(_ text: String) throws(InvalidValue) -> WHIPURL {
        do {
            return try WHIPURL(parsing: text)
        } catch {
            throw InvalidValue(error.message)
        }
    }
}

/// `--whip-token`: what an `Authorization: Bearer` header can carry unquoted (RFC 6750 §2.1
/// b64token), at most 4096 characters. Never echoed, not even when refused.
public struct BearerToken: ArgumentValue, Hashable {
    public var token: String

    public static func parse(_ text: String) throws(InvalidValue) -> BearerToken {
        let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/=")
        guard !text.isEmpty, text.count <= 4096, text.allSatisfy(allowed.contains) else {
            throw InvalidValue("is not a bearer token (RFC 6750 section 2.1 characters)")
        }
        return BearerToken(token: text)
    }
}
