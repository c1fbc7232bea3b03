import ICE
import Publisher
import Transport

/// `--ice-address`, `--stun`, `--turn`, `--ice-transport-policy`, `--dtls-cert`/`--dtls-key`: read and checked before
/// anything starts (a bad one exits 2 with one line naming it).
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
            throw PublishSession.UsageError("--ice-address: at most \(ICEAgent.maximumLocalAddresses) addresses")
        }
        for address in iceAddresses {
            guard (try? UDPAddress(host: address, port: 0)) != nil else {
                throw PublishSession.UsageError("--ice-address '\(address)' is not a numeric IPv4 or IPv6 address")
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
                throw PublishSession.UsageError("--ice-transport-policy relay needs --turn")
            }
            options.relayOnly = true
        default:
            let policy = transportPolicy.prefix(40)
            throw PublishSession.UsageError("--ice-transport-policy '\(policy)' is not all or relay")
        }
        guard (certificate == nil) == (privateKey == nil) else {
            throw PublishSession.UsageError("--dtls-cert and --dtls-key go together")
        }
        options.certificatePath = certificate
        options.privateKeyPath = privateKey
        return options
    }

    /// `turn:USER:PASS@HOST:PORT` (UDP). The password may hold `:`; the user may not.
    static func turnServer(_ text: String) throws -> ICEAgent.TURNServer {
        let usage = "--turn '\(text.prefix(200))' is not turn:USER:PASS@HOST:PORT"
        guard text.hasPrefix("turn:"), let at = text.lastIndex(of: "@") else { throw PublishSession.UsageError(usage) }
        let credentials = text[text.index(text.startIndex, offsetBy: 5)..<at]
        guard let colon = credentials.firstIndex(of: ":") else { throw PublishSession.UsageError(usage) }
        let user = String(credentials[..<colon])
        let password = String(credentials[credentials.index(after: colon)...])
        guard !user.isEmpty, !password.isEmpty, user.utf8.count <= 128, password.utf8.count <= 128 else {
            throw PublishSession.UsageError(usage)
        }
        let (host, port) = try RTCPublish.hostPort(String(text[text.index(after: at)...]), what: "--turn")
        return ICEAgent.TURNServer(
            server: ICEAgent.Server(host: host, port: UInt16(port)),
            username: user,
            password: password
        )
    }
}
