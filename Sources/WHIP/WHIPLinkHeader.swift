/// The STUN and TURN servers a WHIP endpoint offers in the Link headers of its 201 (RFC 9725 §4.6).
public enum WHIPLinkHeader {
    /// More servers than this are ignored: an ICE agent gathers from each one.
    public static let maximumServers = 16
    /// A longer link-value is ignored, whatever it holds.
    public static let maximumLinkValueBytes = 1024
    /// `ignored` lists this many entries at most, then one line counting the rest.
    public static let maximumIgnored = 16

    /// RFC 9725 §4.6: every link-value whose `rel` holds `ice-server`, its target a stun:, stuns:,
    /// turn: or turns: URI (RFC 7064, 7065), with `username` and `credential` (required for TURN) and
    /// an optional `credential-type="password"`.
    ///
    /// `headerValues` are the Link field values as received (each may hold several comma-separated
    /// link-values, RFC 8288 §3). Anything else — other relations (WHIP extensions, §4.9), malformed
    /// syntax, unsupported URIs — is listed in `ignored` as "<target>: reason", never with a
    /// credential, and parsing goes on with the next link-value.
    public static func iceServers(_ headerValues: [String]) -> (servers: [WHIPICEServer], ignored: [String]) {
        var servers: [WHIPICEServer] = []
        var ignored: [String] = []
        var ignoredCount = 0
        var position = 0
        func ignore(_ target: String?, _ reason: String) {
            ignoredCount += 1
            guard ignoredCount <= maximumIgnored else { return }
            ignored.append("\(label(target, position)): \(reason)")
        }
        for value in headerValues {
            for result in LinkHeaderParser.parse(value, maximumLinkValueBytes: maximumLinkValueBytes) {
                position += 1
                let link: LinkValue
                switch result {
                case .failure(let error):
                    ignore(error.target, error.reason)
                    continue
                case .success(let value):
                    link = value
                }
                // RFC 8288 §3.3: rel holds one or more relation types, separated by spaces.
                guard let rel = link.first("rel")?.value else {
                    ignore(link.target, "no rel parameter")
                    continue
                }
                let relations = rel.split { $0 == " " || $0 == "\t" }.map { $0.lowercased() }
                guard relations.contains("ice-server") else {
                    ignore(link.target, "rel \"\(Printable.text(rel, limit: 100))\" is not ice-server")
                    continue
                }
                guard servers.count < maximumServers else {
                    ignore(link.target, "more than \(maximumServers) ICE servers")
                    continue
                }
                switch server(from: link) {
                case .success(let server): servers.append(server)
                case .failure(let error): ignore(link.target, error.reason)
                }
            }
        }
        if ignoredCount > maximumIgnored {
            ignored.append("\(ignoredCount - maximumIgnored) more links ignored")
        }
        return (servers, ignored)
    }

    /// The server a well-formed `ice-server` link describes, or why it cannot be used.
    static func server(from link: LinkValue) -> Result<WHIPICEServer, WHIPURL.Failure> {
        let parts: WHIPICEServer.Parts
        do throws(WHIPURL.Failure) {
            parts = try WHIPICEServer.parse(link.target)
        } catch {
            return .failure(error)
        }
        var credentials: [String: String] = [:]
        for name in ["username", "credential"] {
            guard let parameter = link.first(name) else { continue }
            guard let value = parameter.value, !value.isEmpty else {
                return .failure(WHIPURL.Failure("\(name) without a value"))
            }
            credentials[name] = value
        }
        // Drafts of RFC 9725 sent credential-type; only long-term passwords (RFC 8489 §9.2) work.
        if let type = link.first("credential-type"), type.value?.lowercased() != "password" {
            let given = Printable.text(type.value ?? "", limit: 32)
            return .failure(WHIPURL.Failure("credential-type \"\(given)\" is not supported (password only)"))
        }
        let server = WHIPICEServer(
            url: link.target,
            parts: parts,
            username: credentials["username"],
            credential: credentials["credential"]
        )
        if server.isTURN && (server.username == nil || server.credential == nil) {
            return .failure(WHIPURL.Failure("a TURN server without username and credential"))
        }
        return .success(server)
    }

    /// `<target>` fit for a log (user information cut out), or the link's position when the
    /// target could not be read.
    static func label(_ target: String?, _ position: Int) -> String {
        guard let target else { return "link \(position)" }
        guard let at = target.lastIndex(of: "@") else { return "<\(Printable.text(target, limit: 100))>" }
        let scheme = target.firstIndex(of: ":").map { target[...$0] } ?? ""
        let host = target[target.index(after: at)...]
        return "<\(Printable.text(scheme + "[redacted]@" + host, limit: 100))>"
    }
}
