import ICE

/// One WebRTC viewer of the publisher, from its subscribe to its removal, as a value: events in,
/// a `Transition` out (the state to show, and what the driver does). No I/O: the publisher's
/// `WebRTCSubscribers` makes the answer, starts and stops the transport and adds the destination,
/// and its room side signals; so every rule here can be tested without a peer.
///
///     idle ─offer─► answering ─answer made─► checking ─ICE passed─► handshaking ─DTLS done─► connected
///       │ at capacity     │ cannot answer       └──────────┬──────────────┴──────────────────────┘
///       └────────────► refused ◄──────────────────────────┤ (the answer could not be sent)
///                                                           └─ failed, consent lost, closed, left,
///                                                              gone from the room ─► ended
///
/// The time limits are the transport's (`WebRTCTransport.Configuration`: no first check within
/// 10 s, no ICE within 30 s, no DTLS within 10 s of ICE): they arrive as `transportFailed` with
/// their reason. A viewer does not restart ICE: a lost path (ICE failed, consent lost, RFC 7675)
/// ends it, and the viewer's page subscribes again, which replaces it.
public struct WebRTCViewerStateMachine: Sendable {
    /// Why a viewer that was answered is gone.
    public enum Ending: Hashable, Sendable {
        /// ICE, DTLS, consent or a time limit failed, or the viewer could not be sent to.
        case failed(String)
        /// The viewer closed DTLS (close_notify): it left on its own.
        case closedByViewer
        /// Signaling came back without the viewer in the room: nobody could end it any more.
        case goneFromRoom(String)
        /// The room said the viewer left (its destination is already gone).
        case left(String)
        /// The same member subscribed again: its new viewer takes the place (and the status entry).
        case replaced
        /// The publisher stops.
        case stopped

        public var reason: String {
            switch self {
            case .failed(let reason), .goneFromRoom(let reason), .left(let reason): return reason
            case .closedByViewer: return "the viewer closed DTLS (close_notify)"
            case .replaced: return "re-subscribed"
            case .stopped: return "publisher stopped"
            }
        }

        /// A failure goes to stderr and the log; a viewer that left or closed left normally.
        public var isProblem: Bool {
            if case .failed = self { return true }
            return false
        }

        /// The viewer hears why in a `webrtc-ended` signal: it may still be there to read it.
        public var tellsViewer: Bool {
            switch self {
            case .failed, .closedByViewer, .goneFromRoom: return true
            case .left, .replaced, .stopped: return false
            }
        }
    }

    public enum State: Hashable, Sendable, CustomStringConvertible {
        /// Nothing yet.
        case idle
        /// Admitted: the answer is being made (transport, candidates, SDP).
        case answering
        /// Our answer is out; ICE checks run. `ice`: ICE's state once it reported one.
        case checking(ICEState?)
        /// ICE passed; the DTLS handshake runs (RFC 8842 §5: no DTLS before).
        case handshaking
        /// DTLS is done and the viewer is a destination of the stream.
        case connected
        /// Never served: at capacity, an offer that cannot be answered, an answer not delivered.
        case refused(reason: String)
        /// Served, then removed.
        case ended(Ending)

        /// Refused or ended: no event changes it any more.
        public var isFinal: Bool {
            switch self {
            case .refused, .ended: return true
            case .idle, .answering, .checking, .handshaking, .connected: return false
            }
        }

        /// The viewer's `state` in `--stats-json` `webRTCViewers` (a final one is no entry there).
        public var description: String {
            switch self {
            case .idle: return "idle"
            case .answering: return "answering"
            case .checking(nil): return "ice checking"
            case .checking(let ice?): return "ice \(ice)"
            case .handshaking: return "dtls-handshake"
            case .connected: return "connected"
            case .refused(let reason): return "refused: \(reason)"
            case .ended(let ending): return "ended: \(ending.reason)"
            }
        }
    }

    public enum Event: Hashable, Sendable {
        /// A subscribe with an offer. `served`: the viewers served besides this member (a
        /// re-subscribe replaces its own); `maximum`: `--max-viewers`.
        case offerReceived(served: Int, maximum: Int)
        /// Our answer is written; the transport starts with it.
        case answerReady
        /// The offer could not be answered, ICE and DTLS not started, or the answer not sent.
        case answerFailed(String)
        case iceChanged(ICEState)
        /// ICE passed and the DTLS handshake began.
        case handshaking
        /// DTLS is done: media can flow on the transport's link.
        case transportConnected
        /// ICE selected another pair after connecting.
        case pathChanged
        /// ICE or DTLS failed, a time limit passed, or the viewer could not be sent to.
        case transportFailed(String)
        /// Connected, then consent was lost or ICE failed (RFC 7675).
        case iceLost(String)
        /// The viewer's close_notify.
        case closedByViewer
        case goneFromRoom(String)
        case left(String)
        case replaced
        case stop
    }

    /// What the driver does next.
    public enum Action: Hashable, Sendable {
        /// Nothing (the event changed nothing to act on, or was not one this state takes).
        case none
        /// Make the answer and start the transport; then `answerReady` or `answerFailed`.
        case makeAnswer
        /// Send the answer in the subscribe's reply; if that fails, `answerFailed`.
        case sendAnswer
        /// Reject the subscribe with the reason; a transport made for it goes.
        case refuse(String)
        /// The viewer becomes a destination (from the next key frame); if that fails, `transportFailed`.
        case addDestination
        /// Send on the new pair; if that fails, `transportFailed`.
        case changePath
        /// Remove the viewer: its destination (with a BYE, while the transport still sends), then
        /// its transport; say why, and tell the viewer when `ending.tellsViewer`.
        case remove(Ending)
        /// Stop the transport only: nothing else of the viewer is left to remove.
        case stopTransport
    }

    /// One event's outcome: the state to report first (nil: what is shown stays), then the action.
    public struct Transition: Hashable, Sendable {
        public var report: State?
        public var action: Action

        public init(report: State? = nil, action: Action = .none) {
            self.report = report
            self.action = action
        }

        /// Not an event this state takes, or one that changes nothing.
        public static let ignored = Transition()
    }

    public private(set) var state: State = .idle

    public init() {}

    /// `--max-viewers`: the reason a new viewer is refused when `served` viewers (WebRTC or SDES,
    /// connecting or connected, this member's own not counted) are `maximum` already, else nil.
    public static func refusalAtCapacity(served: Int, maximum: Int) -> String? {
        served >= maximum ? "the publisher serves its most viewers (\(maximum))" : nil
    }

    /// Takes one event; an event the state does not take is ignored and leaves it as it was.
    public mutating func receive(_ event: Event) -> Transition {
        switch (state, event) {
        case (.idle, .offerReceived(let served, let maximum)):
            if let refusal = Self.refusalAtCapacity(served: served, maximum: maximum) {
                state = .refused(reason: refusal)
                return Transition(action: .refuse(refusal))
            }
            state = .answering
            return Transition(action: .makeAnswer)
        case (.answering, .answerReady):
            state = .checking(nil)
            return Transition(report: state, action: .sendAnswer)
        case (.answering, .answerFailed(let reason)), (.checking, .answerFailed(let reason)),
            (.handshaking, .answerFailed(let reason)), (.connected, .answerFailed(let reason)):
            state = .refused(reason: reason)
            return Transition(report: state, action: .refuse(reason))

        // ICE's own state while it checks; connected and ready are the transport's handshaking
        // next, failed its failure, each reported by its own event.
        case (.checking, .iceChanged(let ice)) where [.new, .gathering, .connecting].contains(ice):
            state = .checking(ice)
            return Transition(report: state)
        case (.checking, .handshaking):
            state = .handshaking
            return Transition(report: state)
        case (.handshaking, .transportConnected):
            state = .connected
            return Transition(report: state, action: .addDestination)
        case (.connected, .pathChanged):
            return Transition(action: .changePath)

        case (.checking, .transportFailed(let reason)), (.handshaking, .transportFailed(let reason)),
            (.connected, .transportFailed(let reason)), (.checking, .iceLost(let reason)),
            (.handshaking, .iceLost(let reason)), (.connected, .iceLost(let reason)):
            return end(.failed(reason))
        case (.checking, .closedByViewer), (.handshaking, .closedByViewer), (.connected, .closedByViewer):
            return end(.closedByViewer)

        case (let current, .goneFromRoom(let reason)) where current.isOpen:
            return end(.goneFromRoom(reason))
        case (let current, .left(let reason)) where current.isOpen:
            return end(.left(reason))
        // The status entry is the member's, and now its new viewer's: nothing to report.
        case (let current, .replaced) where current.isOpen:
            state = .ended(.replaced)
            return Transition(action: .stopTransport)
        case (let current, .stop) where !current.isFinal:
            state = .ended(.stopped)
            return Transition(action: current == .idle ? .none : .stopTransport)

        default:
            return .ignored
        }
    }

    private mutating func end(_ ending: Ending) -> Transition {
        state = .ended(ending)
        return Transition(report: state, action: .remove(ending))
    }
}

extension WebRTCViewerStateMachine.State {
    /// Answering or later, not final: a transport exists (or is being made) for the viewer.
    fileprivate var isOpen: Bool {
        switch self {
        case .answering, .checking, .handshaking, .connected: return true
        case .idle, .refused, .ended: return false
        }
    }
}
