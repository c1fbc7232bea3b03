/// Where one WebRTC transport is, and the transitions it may take. Apart from the libraries, so it
/// can be read, and tested, on its own:
///
///     gathering ──start──► checking ──ICE connected──► handshaking ──DTLS connected──► connected
///         │                   │                           │                             │
///         └───────────────────┴───────────► failed(reason) ◄────────────────────────────┘
///                                                 closed (stop, or the peer's close_notify)
///
/// `failed` and `closed` are final: a late event never brings a transport back.
public enum WebRTCTransportPhase: Hashable, Sendable, CustomStringConvertible {
    /// ICE is gathering our candidates for the description we send (answer, or WHIP offer).
    case gathering
    /// The descriptions are exchanged (our answer is out, or the WHIP answer is in); ICE checks run.
    case checking
    /// A pair works; the DTLS handshake runs over it.
    case handshaking
    /// DTLS is done and the SRTP keys are exported: media flows.
    case connected
    case failed(String)
    case closed

    public var isFinal: Bool {
        switch self {
        case .failed, .closed: return true
        case .gathering, .checking, .handshaking, .connected: return false
        }
    }

    /// Whether ICE has passed: DTLS may be read from now on (RFC 8842 §5: not before).
    public var iceHasPassed: Bool {
        switch self {
        case .handshaking, .connected: return true
        case .gathering, .checking, .failed, .closed: return false
        }
    }

    public var description: String {
        switch self {
        case .gathering: return "gathering"
        case .checking: return "checking"
        case .handshaking: return "dtls-handshake"
        case .connected: return "connected"
        case .failed(let reason): return "failed: \(reason)"
        case .closed: return "closed"
        }
    }
}

/// The phase and its legal transitions. Each returns whether it applied.
struct WebRTCTransportMachine {
    private(set) var phase: WebRTCTransportPhase = .gathering

    mutating func descriptionsExchanged() -> Bool {
        guard phase == .gathering else { return false }
        phase = .checking
        return true
    }

    mutating func iceConnected() -> Bool {
        guard phase == .checking else { return false }
        phase = .handshaking
        return true
    }

    mutating func dtlsConnected() -> Bool {
        guard phase == .handshaking else { return false }
        phase = .connected
        return true
    }

    mutating func fail(_ reason: String) -> Bool {
        guard !phase.isFinal else { return false }
        phase = .failed(reason)
        return true
    }

    mutating func close() -> Bool {
        guard !phase.isFinal else { return false }
        phase = .closed
        return true
    }
}
