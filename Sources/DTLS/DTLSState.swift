/// Where a DTLS session is in its life.
///
///     new ──start() or the first ClientHello──► handshaking ──► connected(profile) ──► closed
///                                                  │                  │
///                                                  └──► failed(error) ◄┘
///
/// `failed` and `closed` are final: a session is not restarted, a new one is made.
public enum DTLSState: Hashable, Sendable, CustomStringConvertible {
    /// Created; nothing sent or received yet.
    case new
    /// Flights are being exchanged.
    case handshaking
    /// The handshake completed, the peer's fingerprint matched and the SRTP keys are exported.
    case connected(DTLSSRTPProfile)
    /// The handshake or the connection failed for the reason given.
    case failed(DTLSError)
    /// Closed by us (`close()`) or by the peer's close_notify.
    case closed

    public var description: String {
        switch self {
        case .new: return "new"
        case .handshaking: return "handshaking"
        case .connected(let profile): return "connected(\(profile))"
        case .failed(let error): return "failed(\(error.code))"
        case .closed: return "closed"
        }
    }
}

/// What happened to a session while it handled a datagram or a timeout.
public enum DTLSEvent: Hashable, Sendable {
    /// The handshake completed; `DTLSSession.srtpKeys` holds the keys for this profile.
    case connected(DTLSSRTPProfile)
    /// The session failed; the state holds the same error.
    case failed(DTLSError)
    /// The peer sent close_notify; ours went back in the same output.
    case closedByPeer
}

/// What a session asks its caller to do: send these datagrams to the peer, in order, and take note
/// of these events.
public struct DTLSOutput: Hashable, Sendable {
    /// DTLS datagrams for the peer, each at most the configured MTU.
    public var datagrams: [[UInt8]]
    public var events: [DTLSEvent]

    public init(datagrams: [[UInt8]] = [], events: [DTLSEvent] = []) {
        self.datagrams = datagrams
        self.events = events
    }
}

/// The session's state and its legal transitions, apart from OpenSSL so they can be read, and
/// tested, on their own. A transition that does not apply leaves the state as it is and says so:
/// a late timer or a datagram after the end must never undo a final state.
struct DTLSStateMachine {
    private(set) var state: DTLSState = .new

    /// `start()`, or a server's first datagram: new → handshaking.
    mutating func startHandshake() -> Bool {
        guard state == .new else { return false }
        state = .handshaking
        return true
    }

    /// The handshake completed and the keys are out: handshaking → connected.
    mutating func connect(_ profile: DTLSSRTPProfile) -> Bool {
        guard state == .handshaking else { return false }
        state = .connected(profile)
        return true
    }

    /// Handshaking or connected → failed. A session that already ended keeps its first ending.
    mutating func fail(_ error: DTLSError) -> Bool {
        switch state {
        case .new, .handshaking, .connected:
            state = .failed(error)
            return true
        case .failed, .closed:
            return false
        }
    }

    /// Any state but failed → closed.
    mutating func close() -> Bool {
        switch state {
        case .new, .handshaking, .connected:
            state = .closed
            return true
        case .failed, .closed:
            return false
        }
    }

    /// Whether OpenSSL has a handshake or a connection to feed.
    var isRunning: Bool {
        switch state {
        case .handshaking, .connected: return true
        case .new, .failed, .closed: return false
        }
    }
}
