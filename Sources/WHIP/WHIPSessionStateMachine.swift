/// The WHIP publication's control plane (RFC 9725) as a value: events in, a `Transition` out (the
/// state to show, and the one thing the driver does next). No I/O, no clock, no task: the driver
/// (rtc-publish's `WHIPPublication`) makes the offer, POSTs, PATCHes, DELETEs, starts ICE and DTLS
/// and sleeps, and feeds what came of it back in; so every rule below can be tested without a peer.
///
///     idle ─start─► posting ─201─► connecting ─DTLS done─► live ─ICE or RTCP lost─► restarting
///                     │  │             │                    ▲  │                     │  │
///                     │  │             │                    └──┼──── ICE back ───────┘  │
///                     │  └ 4xx on the  └───── fails ───► deleting ◄──── fails ──────────┘
///                     │    first POST ─► refused             │ DELETE done
///                     └───── fails ───────────────► retrying ◄┘ (1 s, doubling, capped)
///                                                       └ timer ─► posting
///     stop: from anywhere but refused, through deleting while a resource exists, to stopped.
///
/// The policy is the one the publisher always had: a 4xx other than 408 and 429 on the very first
/// POST is the user's to fix and ends the run; any other failure deletes the session and publishes
/// anew after a backoff of 1 s doubling to `maximumBackoff`, back to 1 s after a session that went
/// live; a live session whose endpoint takes PATCH gets up to `maximumRestartsWithoutRecovery`
/// ICE restarts in a row before it is given up. 307 and 308 are followed inside
/// `WHIPClient.publish` (§4.5): the machine sees only where the redirects ended.
public struct WHIPSessionStateMachine: Sendable {
    /// The numbers of the policy; the defaults are rtc-publish's.
    public struct Policy: Hashable, Sendable {
        /// The wait after the first failure, and again after a session that was live.
        public var initialBackoff: Duration = .seconds(1)
        /// Waits double up to this (`WHIPOptions.maximumBackoff`).
        public var maximumBackoff: Duration = .seconds(30)
        /// ICE restarts in a row without ICE connecting again before a new session is published.
        public var maximumRestartsWithoutRecovery = 3

        public init() {}
    }

    /// ICE's state as the driver's agent reports it (ICE's own type is not WHIP's to import).
    public enum ICEProgress: Hashable, Sendable, CustomStringConvertible {
        case new, gathering, connecting, connected, ready, failed, consentLost, closed

        /// A pair works: media can flow (libnice's CONNECTED, then READY once nominated).
        public var isConnected: Bool { self == .connected || self == .ready }

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

    /// Where a session that has its answer is on the way to media.
    public enum Connecting: Hashable, Sendable {
        /// The 201 is in; the driver reads its answer and starts ICE and DTLS with it.
        case answered
        /// Both descriptions are known and ICE checks run.
        case checking
        /// ICE reported this state (before DTLS is done, the status line follows ICE).
        case ice(ICEProgress)
        /// ICE passed; the DTLS handshake runs (RFC 8842: not before).
        case handshaking
    }

    /// An ICE restart of a live session (RFC 9725 §4.3).
    public struct Restart: Hashable, Sendable {
        /// Restarts since ICE last connected, this one included.
        public var count: Int
        /// Why the path was given up (ICE failed, consent lost, no RTCP).
        public var reason: String
        /// The endpoint took our new credentials (the PATCH answered 200); ICE checks run again.
        public var patched: Bool

        public init(count: Int, reason: String, patched: Bool) {
            self.count = count
            self.reason = reason
            self.patched = patched
        }
    }

    /// What follows the DELETE of a session's resource.
    public enum Ending: Hashable, Sendable {
        /// The session failed: publish anew after the backoff. `wasLive`: media flowed, so the
        /// backoff starts again at its first wait.
        case retry(reason: String, wasLive: Bool)
        /// The publisher stops.
        case stop
    }

    public enum State: Hashable, Sendable, CustomStringConvertible {
        /// Waiting for the stream to be described (its SPS names the offer's profile).
        case idle
        /// The offer is made and POSTed; `attempt` counts the POSTs from 1.
        case posting(attempt: Int)
        /// The answer is accepted; ICE and DTLS run. `acceptsTrickle`: the 201's Accept-Patch
        /// offered trickle-ice-sdpfrag, so the session can be kept through an ICE restart.
        case connecting(Connecting, acceptsTrickle: Bool)
        /// Media flows to the endpoint.
        case live(acceptsTrickle: Bool)
        /// A live path was lost; ICE restarts over PATCH, DTLS and SRTP kept.
        case restarting(Restart)
        /// The session is over and its resource is being deleted.
        case deleting(then: Ending)
        /// Waiting `delay` before POST number `attempt`.
        case retrying(attempt: Int, delay: Duration)
        /// The endpoint refused the first offer with a 4xx: final.
        case refused(reason: String)
        /// Final: no session, nothing scheduled.
        case stopped

        /// The status line's and `--stats-json`'s `whip.state` text.
        public var description: String {
            switch self {
            case .idle: return "waiting for the stream"
            case .posting: return "posting"
            case .connecting(.answered, _), .connecting(.checking, _): return "connecting"
            case .connecting(.ice(let ice), _): return "ice \(ice)"
            case .connecting(.handshaking, _): return "dtls-handshake"
            case .live: return "live"
            case .restarting: return "ice-restart"
            case .deleting: return "deleting"
            case .retrying(_, let delay): return "retrying in \(delay)"
            case .refused: return "refused"
            case .stopped: return "stopped"
            }
        }

        /// Refused or stopped: no event changes it any more (but a late 201, which is deleted).
        public var isFinal: Bool {
            switch self {
            case .refused, .stopped: return true
            case .idle, .posting, .connecting, .live, .restarting, .deleting, .retrying: return false
            }
        }
    }

    public enum Event: Equatable, Sendable {
        /// The stream is described: publish.
        case start
        /// The POST ended in a 201 with an SDP answer (after any redirects).
        case answerReceived(WHIPSession)
        /// The answer cannot be used (its SDP is refused): the reason to report.
        case answerRejected(String)
        /// The POST ended in an error that names an HTTP status (4xx, 5xx, a 3xx not followed,
        /// a 201 without a usable answer). `reason` is the error as logged.
        case httpError(status: Int, reason: String)
        /// The POST got no HTTP answer (connection, TLS, timeout), or no offer could be made.
        case networkError(String)
        /// ICE and DTLS are started with the answer.
        case transportStarted
        case iceChanged(ICEProgress)
        /// ICE passed and the DTLS handshake began.
        case handshaking
        /// DTLS is done and the endpoint is a destination of the stream.
        case transportConnected
        /// The path is lost but DTLS is kept: ICE failed or consent was lost after connecting, or
        /// no RTCP came for the media timeout. A restart may save the session.
        case transportLost(String)
        /// The transport is over (ICE or DTLS failed, a close_notify, the sender refused it).
        case transportFailed(String)
        /// The ICE restart's PATCH was answered 200 with the endpoint's new credentials.
        case restartSucceeded
        /// The ICE restart failed (our agent, the PATCH, or its answer): why.
        case restartFailed(String)
        /// The backoff is over.
        case timerFired
        /// The publisher stops.
        case stopRequested
        /// The DELETE is answered, failed or timed out: the resource is the endpoint's concern now.
        case deleteDone
    }

    /// What the driver does next; its outcome is the next event.
    public enum Action: Equatable, Sendable {
        /// Nothing (the event changed nothing to act on, or was not one this state takes).
        case none
        /// Make the offer and POST it; then `answerReceived`, `httpError` or `networkError`.
        case postOffer(attempt: Int)
        /// Read the answer and start ICE and DTLS; then `transportStarted`, `answerRejected` or
        /// `transportFailed`.
        case startTransport(WHIPSession)
        /// (Re)start the watchdog that reports `transportLost` after the media timeout without RTCP.
        case watchMedia
        /// Restart ICE and PATCH our new credentials; then `restartSucceeded` or `restartFailed`.
        case patchICERestart(reason: String)
        /// Remove the destination, DELETE the resource, stop the transport; then `deleteDone`.
        case deleteResource
        /// Report the failure and wait `after`; then `timerFired`.
        case scheduleRetry(after: Duration, reason: String)
        /// The endpoint refuses for good: stop the publisher with this reason.
        case stopWithError(String)
    }

    /// One event's outcome: the state to report first (nil: what is shown stays), then the action.
    public struct Transition: Equatable, Sendable {
        public var report: State?
        public var action: Action

        public init(report: State? = nil, action: Action = .none) {
            self.report = report
            self.action = action
        }

        /// Not an event this state takes, or one that changes nothing.
        public static let ignored = Transition()
    }

    public let policy: Policy
    public private(set) var state: State = .idle
    /// POSTs made so far.
    public private(set) var attempts = 0
    /// The wait after the next failure.
    public private(set) var backoff: Duration

    public init(policy: Policy = Policy()) {
        self.policy = policy
        backoff = policy.initialBackoff
    }

    /// RFC 9110 §15.5: a 4xx says the request itself is wrong (a bad token, no such endpoint, an
    /// offer it rejects), so sending it again cannot help; 408 and 429 ask for a later try.
    public static func refusesForGood(status: Int) -> Bool {
        (400..<500).contains(status) && status != 408 && status != 429
    }

    /// Takes one event; an event the state does not take is ignored and leaves it as it was.
    public mutating func receive(_ event: Event) -> Transition {
        switch (state, event) {
        case (.idle, .start):
            return post()

        // RFC 9725 §4.2: a 201 carries the answer and the session's resource.
        case (.posting, .answerReceived(let session)):
            state = .connecting(.answered, acceptsTrickle: session.acceptsTrickle)
            return Transition(action: .startTransport(session))
        // The user's to fix only while no session ever came: later, this endpoint took this offer
        // and token, so a 4xx is retried as any failure.
        case (.posting(let attempt), .httpError(let status, let reason))
        where attempt == 1 && Self.refusesForGood(status: status):
            state = .refused(reason: reason)
            return Transition(report: state, action: .stopWithError(reason))
        case (.posting, .httpError(_, let reason)), (.posting, .networkError(let reason)):
            return retry(reason: reason)

        case (.connecting(.answered, let trickle), .transportStarted):
            state = .connecting(.checking, acceptsTrickle: trickle)
            return Transition(report: state)
        case (.connecting(.answered, _), .answerRejected(let reason)):
            return end(.retry(reason: reason, wasLive: false))
        case (.connecting(let progress, let trickle), .iceChanged(let ice)) where progress != .answered:
            state = .connecting(.ice(ice), acceptsTrickle: trickle)
            return Transition(report: state)
        case (.connecting(let progress, let trickle), .handshaking) where progress != .answered:
            state = .connecting(.handshaking, acceptsTrickle: trickle)
            return Transition(report: state)
        case (.connecting(let progress, let trickle), .transportConnected) where progress != .answered:
            state = .live(acceptsTrickle: trickle)
            return Transition(report: state, action: .watchMedia)
        case (.connecting, .transportLost(let reason)), (.connecting, .transportFailed(let reason)):
            return end(.retry(reason: reason, wasLive: false))

        // RFC 9725 §4.3: an endpoint that accepts PATCH can restart ICE and keep the session (its
        // viewers keep their subscription); one that does not gets a new session.
        case (.live(let trickle), .transportLost(let reason)):
            guard trickle, policy.maximumRestartsWithoutRecovery > 0 else {
                return end(.retry(reason: reason, wasLive: true))
            }
            state = .restarting(Restart(count: 1, reason: reason, patched: false))
            return Transition(report: state, action: .patchICERestart(reason: reason))
        case (.live, .transportFailed(let reason)):
            return end(.retry(reason: reason, wasLive: true))

        case (.restarting(var restart), .restartSucceeded) where !restart.patched:
            restart.patched = true
            state = .restarting(restart)
            return Transition(action: .watchMedia)
        case (.restarting(let restart), .restartFailed(let error)) where !restart.patched:
            return end(.retry(reason: "\(restart.reason); the ICE restart failed: \(error)", wasLive: true))
        case (.restarting(let restart), .iceChanged(let ice)) where restart.patched && ice.isConnected:
            state = .live(acceptsTrickle: true)
            return Transition(report: state)
        // A path down for longer than one restart's checks gets a few more before it is given up.
        case (.restarting(let restart), .transportLost(let reason)) where restart.patched:
            guard restart.count < policy.maximumRestartsWithoutRecovery else {
                return end(.retry(reason: reason, wasLive: true))
            }
            state = .restarting(Restart(count: restart.count + 1, reason: reason, patched: false))
            return Transition(report: state, action: .patchICERestart(reason: reason))
        case (.restarting, .transportFailed(let reason)):
            return end(.retry(reason: reason, wasLive: true))

        case (.deleting(.retry(let reason, let wasLive)), .deleteDone):
            if wasLive { backoff = policy.initialBackoff }
            return retry(reason: reason)
        case (.deleting(.stop), .deleteDone):
            state = .stopped
            return Transition(report: state)

        case (.retrying, .timerFired):
            backoff = min(backoff * 2, policy.maximumBackoff)
            return post()

        // RFC 9725 §4.2: the session ends with a DELETE of its resource, the publisher's stop too.
        case (.connecting, .stopRequested), (.live, .stopRequested), (.restarting, .stopRequested):
            return end(.stop)
        case (.deleting(.retry), .stopRequested):
            state = .deleting(then: .stop)
            return Transition()
        case (.idle, .stopRequested), (.posting, .stopRequested), (.retrying, .stopRequested):
            state = .stopped
            return Transition(report: state)
        // A POST that raced the stop made a session nobody will use: it is deleted all the same.
        case (.stopped, .answerReceived):
            return Transition(action: .deleteResource)

        default:
            return .ignored
        }
    }

    private mutating func post() -> Transition {
        attempts += 1
        state = .posting(attempt: attempts)
        return Transition(report: state, action: .postOffer(attempt: attempts))
    }

    /// The session is over: its resource goes first (RFC 9725 §4.2), then `ending`.
    private mutating func end(_ ending: Ending) -> Transition {
        state = .deleting(then: ending)
        return Transition(action: .deleteResource)
    }

    private mutating func retry(reason: String) -> Transition {
        state = .retrying(attempt: attempts + 1, delay: backoff)
        return Transition(report: state, action: .scheduleRetry(after: backoff, reason: reason))
    }
}
