import ICE
import Publisher
import Transport
import WHIP

/// `--ice-address`, `--ice-ports`, `--stun`, `--turn`, `--ice-transport-policy`,
/// `--dtls-cert`/`--dtls-key`: read and checked before anything starts (a bad one exits 2 with
/// one line naming it).
enum WebRTCArguments {
    static func options(
        iceAddresses: [String],
        stun: String?,
        turn: String?,
        transportPolicy: String,
        certificate: String?,
        privateKey: String?
    ) throws -> WebRTCOptions {
        var options = WebRTCOptions()
        guard iceAddresses.count <= ICEAgent.maximumLocalAddresses else {
            throw PublishError(.usage, "--ice-address: at most \(ICEAgent.maximumLocalAddresses) addresses")
        }
        for address in iceAddresses {
            guard (try? UDPAddress(host: address, port: 0)) != nil else {
                throw PublishError(.usage, "--ice-address '\(address)' is not a numeric IPv4 or IPv6 address")
            }
        }
        options.iceAddresses = iceAddresses
        if let stun {
            let (host, port) = try RTCPublish.hostPort(stun, what: "--stun")
            options.stunServer = ICEAgent.Server(host: host, port: UInt16(port))
        }
        if let turn { options.turnServer = try turnServer(turn) }
        switch transportPolicy {
        case "all": options.relayOnly = false
        case "relay":
            guard options.turnServer != nil else {
                throw PublishError(.usage, "--ice-transport-policy relay needs --turn")
            }
            options.relayOnly = true
        default:
            let policy = transportPolicy.prefix(40)
            throw PublishError(.usage, "--ice-transport-policy '\(policy)' is not all or relay")
        }
        guard (certificate == nil) == (privateKey == nil) else {
            throw PublishError(.usage, "--dtls-cert and --dtls-key go together")
        }
        options.certificatePath = certificate
        options.privateKeyPath = privateKey
        return options
    }

    /// `--whip URL` (http or https), `--whip-token`, `--whip-ca`; the token is never echoed.
    static func whip(url: String?, token: String?, certificateAuthority: String?) throws -> WHIPOptions? {
        guard let url else {
            guard token == nil, certificateAuthority == nil else {
                throw PublishError(.usage, "--whip-token and --whip-ca need --whip")
            }
            return nil
        }
        let endpoint: WHIPURL
        do {
            endpoint = try WHIPURL(parsing: url)
        } catch {
            throw PublishError(.usage, "--whip: \(error)")
        }
        if let token {
            // RFC 6750 §2.1 b64token: what an Authorization header can carry unquoted.
            let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/=")
            guard !token.isEmpty, token.count <= 4096, token.allSatisfy(allowed.contains) else {
                throw PublishError(.usage, "--whip-token is not a bearer token (RFC 6750 section 2.1 characters)")
            }
        }
        return WHIPOptions(endpoint: endpoint, token: token, certificateAuthority: certificateAuthority)
    }

    /// `--ice-ports MIN-MAX`: two decimal UDP ports, 1...65535, MIN ≤ MAX (one port: `N-N`).
    static func portRange(_ text: String) throws -> ClosedRange<UInt16> {
        let quoted = "--ice-ports '\(text.prefix(40))'"
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        let digits = parts.allSatisfy { part in
            (1...5).contains(part.utf8.count)
                && part.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
        }
        guard parts.count == 2, digits, let low = Int(parts[0]), let high = Int(parts[1]) else {
            throw PublishError(.usage, "\(quoted): not MIN-MAX, two UDP ports such as 40000-40999")
        }
        for port in [low, high] where !(1...65535).contains(port) {
            throw PublishError(.usage, "\(quoted): port \(port) is outside 1-65535")
        }
        guard low <= high else {
            throw PublishError(.usage, "\(quoted): the first port \(low) is above the last \(high)")
        }
        return UInt16(low)...UInt16(high)
    }

    /// `turn:USER:PASS@HOST:PORT` (UDP). The password may hold `:`; the user may not.
    static func turnServer(_ text: String) throws -> ICEAgent.TURNServer {
        let usage = "--turn '\(text.prefix(200))' is not turn:USER:PASS@HOST:PORT"
        guard text.hasPrefix("turn:"), let at = text.lastIndex(of: "@") else { throw PublishError(.usage, usage) }
        let credentials = text[text.index(text.startIndex, offsetBy: 5)..<at]
        guard let colon = credentials.firstIndex(of: ":") else { throw PublishError(.usage, usage) }
        let user = String(credentials[..<colon])
        let password = String(credentials[credentials.index(after: colon)...])
        guard !user.isEmpty, !password.isEmpty, user.utf8.count <= 128, password.utf8.count <= 128 else {
            throw PublishError(.usage, usage)
        }
        let (host, port) = try RTCPublish.hostPort(String(text[text.index(after: at)...]), what: "--turn")
        return ICEAgent.TURNServer(
            server: ICEAgent.Server(host: host, port: UInt16(port)),
            username: user,
            password: password
        )
    }
}
