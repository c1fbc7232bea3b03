import SDP

/// One end of a candidate pair, as libnice reports it: its numeric address, port and
/// candidate type (host, srflx, prflx or relay).
public struct ICEEndpoint: Hashable, Sendable, CustomStringConvertible {
    public var address: String
    public var port: UInt16
    public var type: ICECandidate.CandidateType

    public init(address: String, port: UInt16, type: ICECandidate.CandidateType) {
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
