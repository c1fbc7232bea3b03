/// An ICE candidate as an SDP attribute (RFC 8839 §5.1), kept as the line it came in or went out
/// as, with the fields the agent decides on read from it. libnice parses the line again when it
/// takes it (`nice_agent_parse_remote_candidate_sdp`): this type only has to recognise what must
/// not reach libnice (mDNS names, other components, overlong lines).
public struct ICECandidate: Hashable, Sendable, CustomStringConvertible {
    /// The attribute as `a=candidate:…`, the form libnice reads and writes.
    public let sdpLine: String
    public let foundation: String
    public let component: Int
    /// `udp` or `tcp`, lower-cased.
    public let transport: String
    public let priority: UInt32
    /// An IPv4 or IPv6 literal, or an mDNS name ending in `.local`.
    public let address: String
    public let port: UInt16
    public let type: ICECandidateType

    /// Longer lines are refused: a candidate with every extension a browser adds is under 250 bytes.
    public static let maximumLineLength = 512

    /// Reads `a=candidate:…` or `candidate:…` (trickle's form, without `a=`), with or without the
    /// line end.
    public init(sdpLine line: String) throws {
        var text = Substring(line)
        while let last = text.last, last.isNewline { text = text.dropLast() }
        if text.hasPrefix("a=") { text = text.dropFirst(2) }
        guard text.utf8.count <= Self.maximumLineLength else {
            throw ICEError(.invalidCandidate, "candidate line longer than \(Self.maximumLineLength) bytes")
        }
        guard text.hasPrefix("candidate:") else {
            throw ICEError(.invalidCandidate, "not a candidate attribute: \(text.prefix(40))")
        }
        let fields = text.dropFirst("candidate:".count).split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count >= 8, fields[6] == "typ",
            let component = Int(fields[1]), (1...256).contains(component),
            let priority = UInt32(fields[3]),
            let port = UInt16(fields[5]),
            let type = ICECandidateType(rawValue: String(fields[7]))
        else {
            throw ICEError(.invalidCandidate, "malformed candidate: \(text.prefix(120))")
        }
        self.sdpLine = "a=" + text
        self.foundation = String(fields[0])
        self.component = component
        self.transport = fields[2].lowercased()
        self.priority = priority
        self.address = String(fields[4])
        self.port = port
        self.type = type
    }

    /// An mDNS name (`<uuid>.local`, RFC 8839 §5.1 and draft-ietf-mmusic-mdns-ice-candidates),
    /// which the agent does not resolve.
    public var isMDNS: Bool { address.lowercased().hasSuffix(".local") }

    public var description: String { sdpLine }
}

/// A candidate's type (RFC 8445 §5.1.1).
public enum ICECandidateType: String, Hashable, Sendable, CustomStringConvertible {
    case host
    case serverReflexive = "srflx"
    case peerReflexive = "prflx"
    case relayed = "relay"

    public var description: String { rawValue }
}

/// One end of a candidate pair, as libnice reports it.
public struct ICEEndpoint: Hashable, Sendable, CustomStringConvertible {
    public var address: String
    public var port: UInt16
    public var type: ICECandidateType

    public init(address: String, port: UInt16, type: ICECandidateType) {
        self.address = address
        self.port = port
        self.type = type
    }

    public var description: String {
        (address.contains(":") ? "[\(address)]" : address) + ":\(port) \(type)"
    }
}

/// The pair ICE selected: media leaves from `local` to `remote`.
public struct ICECandidatePair: Hashable, Sendable, CustomStringConvertible {
    public var local: ICEEndpoint
    public var remote: ICEEndpoint

    public init(local: ICEEndpoint, remote: ICEEndpoint) {
        self.local = local
        self.remote = remote
    }

    public var description: String { "\(local) -> \(remote)" }
}
