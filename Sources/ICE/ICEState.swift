import SDP

/// Where an agent's one component is, from libnice's component states, with the two ways it ends
/// told apart:
///
///     new ──gather()──► gathering ──► connecting ──► connected ──► ready
///                                         │              │           │
///                                         ▼              └─────┬─────┘
///                                      failed                  ▼
///                                                         consentLost
///
/// `failed`: no pair ever worked (checks timed out or were refused, after the peer's
/// end-of-candidates). `consentLost`: a pair worked, then the peer stopped answering consent checks
/// (RFC 7675) or its checks fail. Both, and `closed`, are final: ICE restart is a new agent.
public enum ICEState: Hashable, Sendable, CustomStringConvertible {
    case new
    case gathering
    case connecting
    /// At least one pair works; media may flow (libnice `CONNECTED`).
    case connected
    /// Nomination concluded (libnice `READY`).
    case ready
    case failed
    case consentLost
    /// `stop()` was called.
    case closed

    public var isFinal: Bool {
        switch self {
        case .failed, .consentLost, .closed: return true
        case .new, .gathering, .connecting, .connected, .ready: return false
        }
    }

    public var description: String {
        switch self {
        case .new: return "new"
        case .gathering: return "gathering"
        case .connecting: return "connecting"
        case .connected: return "connected"
        case .ready: return "ready"
        case .failed: return "failed"
        case .consentLost: return "consent-lost"
        case .closed: return "closed"
        }
    }
}

/// What the agent reports, in order, on its GLib thread.
public enum ICEEvent: Hashable, Sendable {
    /// The state changed; `pair` is the selected pair when there is one (connected, ready, and the
    /// pair that lost consent).
    case state(ICEState, pair: ICECandidatePair?)
    /// A local candidate to trickle to the peer (`attribute` is its `candidate:…` text).
    case localCandidate(ICECandidate)
    /// Gathering finished: the local candidate list is complete (`a=end-of-candidates`).
    case gatheringDone([ICECandidate])
    /// A new selected pair (also after a switch to a better pair).
    case selectedPair(ICECandidatePair)
    /// A remote candidate learnt from the peer's checks (RFC 8445 §7.3.1.3), not from signalling.
    case peerReflexive(ICEEndpoint)
}

/// Counters, read with `ICEAgent.statistics`.
public struct ICEStatistics: Hashable, Sendable {
    /// Datagrams handed to the receive handler.
    public var datagramsReceived = 0
    /// Datagrams from the peer whose first byte is neither DTLS nor SRTP/SRTCP (RFC 7983).
    public var droppedNotRFC7983 = 0
    /// Datagrams from the peer longer than `ICEAgent.maximumDatagramLength`.
    public var droppedTooLarge = 0
    /// Remote `.local` (mDNS) candidates ignored.
    public var ignoredMDNSCandidates = 0
    /// Remote candidates for another component than 1 (rtcp-mux makes component 2 unused).
    public var ignoredOtherComponent = 0
    /// Remote candidates passed to libnice.
    public var remoteCandidates = 0
    /// Peer-reflexive remote candidates learnt from checks.
    public var peerReflexiveCandidates = 0
    /// The peer's first connectivity check (a Binding request for our ufrag) has arrived: its
    /// side of ICE started (libnice's initial-binding-request-received).
    public var peerChecksReceived = false

    public init() {}
}
