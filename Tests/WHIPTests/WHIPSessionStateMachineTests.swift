import TestSupport
import Testing
import WHIP

/// The WHIP session's control plane without a network: every state the machine can be in, every
/// event in each (the ones it takes, and the ones it must ignore), the backoff and its cap, the
/// ICE restart budget, the first-POST refusal, and a stop from everywhere.
@Suite("WHIP session state machine")
struct WHIPSessionStateMachineTests {
    typealias Machine = WHIPSessionStateMachine
    typealias State = Machine.State
    typealias Event = Machine.Event
    typealias Action = Machine.Action
    typealias Transition = Machine.Transition
    typealias Walk = StateMachineWalk<Machine, Sample, Transition>

    static func session(acceptsTrickle: Bool) -> WHIPSession {
        guard let url = try? WHIPURL(parsing: "http://127.0.0.1:8080/whip/resource/1") else {
            preconditionFailure("the fixture URL parses")
        }
        return WHIPSession(resource: url, endpoint: url, answer: "v=0", acceptsTrickle: acceptsTrickle)
    }

    static let trickle = session(acceptsTrickle: true)
    static let noTrickle = session(acceptsTrickle: false)

    /// One event of each kind (two statuses: one the endpoint keeps refusing, one worth a retry;
    /// two ICE states: one that checks, one that connects).
    enum Sample: String, CaseIterable, Sendable {
        case start, answer, answerRejected, http401, http500, networkError, transportStarted
        case iceConnecting, iceConnected, handshaking, transportConnected, transportLost, transportFailed
        case restartSucceeded, restartFailed, timerFired, stopRequested, deleteDone

        var event: Event { event(answer: WHIPSessionStateMachineTests.trickle) }

        /// The event, `.answer` a 201 with `answer`.
        func event(answer: WHIPSession) -> Event {
            switch self {
            case .start: return .start
            case .answer: return .answerReceived(answer)
            case .answerRejected: return .answerRejected("bad sdp")
            case .http401: return .httpError(status: 401, reason: "401 Unauthorized")
            case .http500: return .httpError(status: 500, reason: "500 Internal Server Error")
            case .networkError: return .networkError("connection refused")
            case .transportStarted: return .transportStarted
            case .iceConnecting: return .iceChanged(.connecting)
            case .iceConnected: return .iceChanged(.connected)
            case .handshaking: return .handshaking
            case .transportConnected: return .transportConnected
            case .transportLost: return .transportLost("consent lost")
            case .transportFailed: return .transportFailed("DTLS failed")
            case .restartSucceeded: return .restartSucceeded
            case .restartFailed: return .restartFailed("PATCH 405")
            case .timerFired: return .timerFired
            case .stopRequested: return .stopRequested
            case .deleteDone: return .deleteDone
            }
        }
    }

    /// Every state the tables start from, each reached from a fresh machine by real events.
    enum From: String, CaseIterable, Sendable {
        case idle, posting, postingAgain, answered, answeredNoTrickle, checking, iceConnecting, handshaking
        case live, liveNoTrickle, restarting, restarted, restartedThrice, deletingToRetry, deletingAfterLive
        case deletingToStop, retrying, refused, stopped

        /// The events from `idle` (default policy); `answer` says which endpoint answers.
        var path: [Sample] {
            switch self {
            case .idle: return []
            case .posting: return [.start]
            case .postingAgain: return [.start, .http500, .timerFired]
            case .answered, .answeredNoTrickle: return [.start, .answer]
            case .checking: return [.start, .answer, .transportStarted]
            case .iceConnecting: return [.start, .answer, .transportStarted, .iceConnecting]
            case .handshaking: return [.start, .answer, .transportStarted, .handshaking]
            case .live, .liveNoTrickle: return [.start, .answer, .transportStarted, .transportConnected]
            case .restarting: return From.live.path + [.transportLost]
            case .restarted: return From.restarting.path + [.restartSucceeded]
            case .restartedThrice:
                return From.restarted.path + [.transportLost, .restartSucceeded, .transportLost, .restartSucceeded]
            case .deletingToRetry: return [.start, .answer, .answerRejected]
            case .deletingAfterLive: return From.live.path + [.transportFailed]
            case .deletingToStop: return From.live.path + [.stopRequested]
            case .retrying: return [.start, .http500]
            case .refused: return [.start, .http401]
            case .stopped: return [.stopRequested]
            }
        }

        var state: State {
            switch self {
            case .idle: return .idle
            case .posting: return .posting(attempt: 1)
            case .postingAgain: return .posting(attempt: 2)
            case .answered: return .connecting(.answered, acceptsTrickle: true)
            case .answeredNoTrickle: return .connecting(.answered, acceptsTrickle: false)
            case .checking: return .connecting(.checking, acceptsTrickle: true)
            case .iceConnecting: return .connecting(.ice(.connecting), acceptsTrickle: true)
            case .handshaking: return .connecting(.handshaking, acceptsTrickle: true)
            case .live: return .live(acceptsTrickle: true)
            case .liveNoTrickle: return .live(acceptsTrickle: false)
            case .restarting: return .restarting(.init(count: 1, reason: "consent lost", patched: false))
            case .restarted: return .restarting(.init(count: 1, reason: "consent lost", patched: true))
            case .restartedThrice: return .restarting(.init(count: 3, reason: "consent lost", patched: true))
            case .deletingToRetry: return .deleting(then: .retry(reason: "bad sdp", wasLive: false))
            case .deletingAfterLive: return .deleting(then: .retry(reason: "DTLS failed", wasLive: true))
            case .deletingToStop: return .deleting(then: .stop)
            case .retrying: return .retrying(attempt: 2, delay: .seconds(1))
            case .refused: return .refused(reason: "401 Unauthorized")
            case .stopped: return .stopped
            }
        }

        /// The session in the endpoint's 201: one without trickle for the `NoTrickle` states.
        var answer: WHIPSession {
            switch self {
            case .answeredNoTrickle, .liveNoTrickle: return WHIPSessionStateMachineTests.noTrickle
            default: return WHIPSessionStateMachineTests.trickle
            }
        }

        /// A fresh machine walked through `path`, each `.answer` from then on a 201 with `answer`.
        var walk: Walk {
            let session = answer
            return Walk(Machine(), through: path) { $0.receive($1.event(answer: session)) }
        }
    }

    /// One transition a state takes: from, event → report, action, to.
    struct Row: Sendable, CustomTestStringConvertible {
        var from: From
        var sample: Sample
        var report: State?
        var action: Action
        var to: State

        /// A transition that reports nothing.
        init(_ from: From, _ sample: Sample, _ action: Action = .none, to: State) {
            self.from = from
            self.sample = sample
            self.action = action
            self.to = to
        }

        /// A transition to `state` that reports it.
        init(_ from: From, _ sample: Sample, shows state: State, _ action: Action = .none) {
            self.init(from, sample, action, to: state)
            report = state
        }

        var testDescription: String { "\(from) + \(sample) → \(to)" }
    }

    static func deleting(_ reason: String, wasLive: Bool) -> State {
        .deleting(then: .retry(reason: reason, wasLive: wasLive))
    }
    static func connecting(_ progress: Machine.Connecting, trickle: Bool = true) -> State {
        .connecting(progress, acceptsTrickle: trickle)
    }
    static func restarting(_ count: Int, patched: Bool) -> State {
        .restarting(.init(count: count, reason: "consent lost", patched: patched))
    }
    static func retry(_ delay: Int, _ reason: String) -> Action {
        .scheduleRetry(after: .seconds(delay), reason: reason)
    }
    static let live = State.live(acceptsTrickle: true)
    static let stopping = State.deleting(then: .stop)
    static let retrying2 = State.retrying(attempt: 2, delay: .seconds(1))
    static let retrying3 = State.retrying(attempt: 3, delay: .seconds(2))
    static let refusal = State.refused(reason: "401 Unauthorized")
    static let answered = Action.startTransport(trickle)

    /// Every transition that does something; any (state, event) not here must be ignored.
    static let rows: [Row] = {
        var rows: [Row] = [
            Row(.idle, .start, shows: .posting(attempt: 1), .postOffer(attempt: 1)),
            Row(.idle, .stopRequested, shows: .stopped),
            // RFC 9725 §4.2: the 201 and its answer; the first POST refused with a 4xx ends it all.
            Row(.posting, .answer, answered, to: connecting(.answered)),
            Row(.posting, .http401, shows: refusal, .stopWithError("401 Unauthorized")),
            Row(.posting, .http500, shows: retrying2, retry(1, "500 Internal Server Error")),
            Row(.posting, .networkError, shows: retrying2, retry(1, "connection refused")),
            Row(.posting, .stopRequested, shows: .stopped),
            // Not the first POST: a 4xx is retried like a 5xx, the backoff doubled by the timer.
            Row(.postingAgain, .answer, answered, to: connecting(.answered)),
            Row(.postingAgain, .http401, shows: retrying3, retry(2, "401 Unauthorized")),
            Row(.postingAgain, .http500, shows: retrying3, retry(2, "500 Internal Server Error")),
            Row(.postingAgain, .networkError, shows: retrying3, retry(2, "connection refused")),
            Row(.postingAgain, .stopRequested, shows: .stopped),
        ]
        for (from, trickle) in [(From.answered, true), (.answeredNoTrickle, false)] {
            rows += [
                Row(from, .transportStarted, shows: connecting(.checking, trickle: trickle)),
                Row(from, .answerRejected, .deleteResource, to: deleting("bad sdp", wasLive: false)),
                Row(from, .transportLost, .deleteResource, to: deleting("consent lost", wasLive: false)),
                Row(from, .transportFailed, .deleteResource, to: deleting("DTLS failed", wasLive: false)),
                Row(from, .stopRequested, .deleteResource, to: stopping),
            ]
        }
        // Once ICE and DTLS run, the status line follows them until media flows.
        for from in [From.checking, .iceConnecting, .handshaking] {
            rows += [
                Row(from, .iceConnecting, shows: connecting(.ice(.connecting))),
                Row(from, .iceConnected, shows: connecting(.ice(.connected))),
                Row(from, .handshaking, shows: connecting(.handshaking)),
                Row(from, .transportConnected, shows: live, .watchMedia),
                Row(from, .transportLost, .deleteResource, to: deleting("consent lost", wasLive: false)),
                Row(from, .transportFailed, .deleteResource, to: deleting("DTLS failed", wasLive: false)),
                Row(from, .stopRequested, .deleteResource, to: stopping),
            ]
        }
        // Live, and in an ICE restart: a failure is a failure after media flowed.
        for from in [From.live, .liveNoTrickle, .restarting, .restarted, .restartedThrice] {
            rows += [
                Row(from, .transportFailed, .deleteResource, to: deleting("DTLS failed", wasLive: true)),
                Row(from, .stopRequested, .deleteResource, to: stopping),
            ]
        }
        rows += [
            // RFC 9725 §4.3: an endpoint that takes PATCH keeps the session through an ICE restart.
            Row(.live, .transportLost, shows: restarting(1, patched: false), .patchICERestart(reason: "consent lost")),
            Row(.liveNoTrickle, .transportLost, .deleteResource, to: deleting("consent lost", wasLive: true)),
            Row(.restarting, .restartSucceeded, .watchMedia, to: restarting(1, patched: true)),
            Row(
                .restarting,
                .restartFailed,
                .deleteResource,
                to: deleting("consent lost; the ICE restart failed: PATCH 405", wasLive: true)
            ),
            Row(.restarted, .iceConnected, shows: live),
            Row(
                .restarted,
                .transportLost,
                shows: restarting(2, patched: false),
                .patchICERestart(reason: "consent lost")
            ),
            // Three restarts without ICE back: the session is given up.
            Row(.restartedThrice, .iceConnected, shows: live),
            Row(.restartedThrice, .transportLost, .deleteResource, to: deleting("consent lost", wasLive: true)),

            Row(.deletingToRetry, .deleteDone, shows: retrying2, retry(1, "bad sdp")),
            Row(.deletingToRetry, .stopRequested, to: stopping),
            Row(.deletingAfterLive, .deleteDone, shows: retrying2, retry(1, "DTLS failed")),
            Row(.deletingAfterLive, .stopRequested, to: stopping),
            Row(.deletingToStop, .deleteDone, shows: .stopped),

            Row(.retrying, .timerFired, shows: .posting(attempt: 2), .postOffer(attempt: 2)),
            Row(.retrying, .stopRequested, shows: .stopped),
            // A 201 that raced the stop: its session is deleted all the same.
            Row(.stopped, .answer, .deleteResource, to: .stopped),
        ]
        return rows
    }()

    @Test("each path reaches its state")
    func paths() {
        for from in From.allCases {
            let walk = from.walk
            #expect(walk.machine.state == from.state, "\(from): \(walk)")
        }
    }

    @Test("the table names each (state, event) once")
    func rowsAreUnique() {
        let keys = Self.rows.map { "\($0.from).\($0.sample)" }
        #expect(Set(keys).count == keys.count)
    }

    @Test("transitions", arguments: rows)
    func transition(_ row: Row) {
        var walk = row.from.walk
        let transition = walk.take(row.sample)
        #expect(transition == Transition(report: row.report, action: row.action), "\(walk)")
        #expect(walk.machine.state == row.to, "\(walk)")
    }

    /// Every (state, event) outside the table: ignored, the state as it was, nothing reported.
    @Test("events a state does not take are ignored", arguments: From.allCases)
    func ignored(_ from: From) {
        let taken = Set(Self.rows.filter { $0.from == from }.map(\.sample))
        for sample in Sample.allCases where !taken.contains(sample) {
            var walk = from.walk
            let before = (walk.machine.state, walk.machine.attempts, walk.machine.backoff)
            let transition = walk.take(sample)
            #expect(transition == .ignored, "\(from): \(walk)")
            #expect(walk.machine.state == before.0, "\(from): \(walk)")
            #expect(walk.machine.attempts == before.1 && walk.machine.backoff == before.2, "\(from): \(walk)")
        }
    }

    /// A stop from anywhere ends in `stopped` (through a DELETE when a resource exists), except a
    /// refusal, which is final already; after it, only a late 201 does anything (its DELETE).
    @Test("a stop from every state", arguments: From.allCases)
    func stopFromEveryState(_ from: From) {
        var walk = from.walk
        var transition = walk.take(.stopRequested)
        if transition.action == .deleteResource {
            #expect(walk.machine.state == .deleting(then: .stop), "\(walk)")
            transition = walk.take(.deleteDone)
        } else if case .deleting = from.state {
            #expect(walk.machine.state == .deleting(then: .stop), "\(walk)")
            transition = walk.take(.deleteDone)
        }
        if from == .refused {
            #expect(transition == .ignored && walk.machine.state == from.state, "\(walk)")
            return
        }
        #expect(walk.machine.state == .stopped, "\(walk)")
        #expect(from == .stopped ? transition == .ignored : transition.report == .stopped, "\(walk)")
        for sample in Sample.allCases {
            let after = walk.take(sample)
            #expect(after == (sample == .answer ? Transition(action: .deleteResource) : .ignored), "\(walk)")
            #expect(walk.machine.state == .stopped, "\(walk)")
        }
    }

    /// The POSTs keep failing: 1 s, doubling, capped at `maximumBackoff`.
    @Test(
        "backoff: 1 s doubling to the cap",
        arguments: [
            (30, [1, 2, 4, 8, 16, 30, 30, 30]),
            (5, [1, 2, 4, 5, 5]),
            (1, [1, 1, 1]),
        ]
    )
    func backoffSequence(maximumSeconds: Int, expected: [Int]) {
        var policy = Machine.Policy()
        policy.maximumBackoff = .seconds(maximumSeconds)
        var machine = Machine(policy: policy)
        var delays: [Duration] = []
        var transition = machine.receive(.start)
        for attempt in 1...expected.count {
            #expect(transition.action == .postOffer(attempt: attempt))
            transition = machine.receive(.networkError("connection refused"))
            guard case .scheduleRetry(let delay, _) = transition.action else {
                Issue.record("no retry after attempt \(attempt): \(transition)")
                return
            }
            #expect(machine.state == .retrying(attempt: attempt + 1, delay: delay))
            delays.append(delay)
            transition = machine.receive(.timerFired)
        }
        #expect(delays == expected.map { .seconds($0) })
        #expect(machine.attempts == expected.count + 1)
    }

    /// A session that went live starts the backoff over at 1 s; one that failed before media
    /// (its answer refused, ICE never connected) goes on doubling.
    @Test("backoff: back to 1 s after a live session, not after one that never was")
    func backoffResetsAfterLive() {
        var machine = Machine()
        func fail(_ events: [Event]) -> Duration? {
            var transition = Transition()
            for event in events { transition = machine.receive(event) }
            if transition.action == .deleteResource { transition = machine.receive(.deleteDone) }
            guard case .scheduleRetry(let delay, _) = transition.action else { return nil }
            _ = machine.receive(.timerFired)
            return delay
        }
        let answer = Event.answerReceived(Self.noTrickle)
        _ = machine.receive(.start)
        #expect(fail([.httpError(status: 503, reason: "503")]) == .seconds(1))
        #expect(fail([answer, .answerRejected("bad sdp")]) == .seconds(2))
        #expect(fail([answer, .transportStarted, .transportFailed("ICE did not connect")]) == .seconds(4))
        #expect(fail([answer, .transportStarted, .transportConnected, .transportLost("no RTCP")]) == .seconds(1))
        #expect(fail([.networkError("timeout")]) == .seconds(2))
        #expect(
            fail([answer, .transportStarted, .transportConnected, .transportFailed("close_notify")]) == .seconds(1)
        )
    }

    /// RFC 9110 §15.5: refused for good is a 4xx but 408 and 429; the client's error agrees.
    @Test(
        "refusal: only a 4xx other than 408 and 429, only on the first POST",
        arguments: [400, 401, 403, 404, 405, 408, 409, 415, 422, 429, 499, 301, 307, 500, 502, 503]
    )
    func refusal(status: Int) {
        let final = (400..<500).contains(status) && status != 408 && status != 429
        #expect(Machine.refusesForGood(status: status) == final)
        #expect(WHIPError(.status, "x", status: status).isClientError == final)
        var first = Machine()
        _ = first.receive(.start)
        let transition = first.receive(.httpError(status: status, reason: "HTTP \(status)"))
        if final {
            #expect(transition.action == .stopWithError("HTTP \(status)"))
            #expect(first.state == .refused(reason: "HTTP \(status)"))
        } else {
            #expect(transition.action == .scheduleRetry(after: .seconds(1), reason: "HTTP \(status)"))
        }
        var later = From.postingAgain.walk.machine
        #expect(
            later.receive(.httpError(status: status, reason: "x")).action
                == .scheduleRetry(after: .seconds(2), reason: "x")
        )
    }

    /// Three ICE restarts in a row without ICE back, then a new session; ICE back resets the count.
    @Test("ICE restarts: at most three without recovery")
    func restartBudget() {
        var machine = From.live.walk.machine
        for round in 1...3 {
            #expect(
                machine.receive(.transportLost("lost \(round)")).action == .patchICERestart(reason: "lost \(round)")
            )
            #expect(machine.receive(.restartSucceeded).action == .watchMedia)
            #expect(machine.state == .restarting(.init(count: round, reason: "lost \(round)", patched: true)))
        }
        #expect(machine.receive(.iceChanged(.ready)) == Transition(report: .live(acceptsTrickle: true)))
        for round in 1...3 {
            _ = machine.receive(.transportLost("again \(round)"))
            _ = machine.receive(.restartSucceeded)
        }
        #expect(machine.receive(.transportLost("for good")).action == .deleteResource)
        #expect(machine.state == .deleting(then: .retry(reason: "for good", wasLive: true)))

        var policy = Machine.Policy()
        policy.maximumRestartsWithoutRecovery = 0
        var none = Walk(Machine(policy: policy), through: From.live.path) { $0.receive($1.event) }.machine
        #expect(none.receive(.transportLost("lost")).action == .deleteResource)
    }

    /// The status line's words, as they were when they were strings.
    @Test("the state's text")
    func descriptions() {
        let texts: [(State, String)] = [
            (.idle, "waiting for the stream"),
            (.posting(attempt: 3), "posting"),
            (.connecting(.answered, acceptsTrickle: true), "connecting"),
            (.connecting(.checking, acceptsTrickle: false), "connecting"),
            (.connecting(.ice(.connecting), acceptsTrickle: true), "ice connecting"),
            (.connecting(.ice(.consentLost), acceptsTrickle: true), "ice consent-lost"),
            (.connecting(.handshaking, acceptsTrickle: true), "dtls-handshake"),
            (.live(acceptsTrickle: true), "live"),
            (.restarting(.init(count: 1, reason: "x", patched: false)), "ice-restart"),
            (.deleting(then: .stop), "deleting"),
            (.retrying(attempt: 2, delay: .seconds(4)), "retrying in 4.0 seconds"),
            (.refused(reason: "x"), "refused"),
            (.stopped, "stopped"),
        ]
        for (state, text) in texts { #expect(state.description == text) }
        #expect(State.refused(reason: "x").isFinal && State.stopped.isFinal)
        #expect(!From.allCases.filter { $0 != .refused && $0 != .stopped }.contains { $0.state.isFinal })
    }

    /// A whole publication: what the driver is told, in order.
    @Test("a session from start to stop, through an ICE restart")
    func wholeSession() {
        var machine = Machine()
        let events: [Event] = [
            .start, .answerReceived(Self.trickle), .transportStarted, .iceChanged(.connecting), .handshaking,
            .transportConnected, .transportLost("no RTCP"), .restartSucceeded, .iceChanged(.connected),
            .stopRequested, .deleteDone,
        ]
        let trace = events.map { machine.receive($0) }
        #expect(
            trace.compactMap(\.report).map(\.description) == [
                "posting", "connecting", "ice connecting", "dtls-handshake", "live", "ice-restart", "live", "stopped",
            ]
        )
        #expect(
            trace.map(\.action) == [
                .postOffer(attempt: 1), .startTransport(Self.trickle), .none, .none, .none, .watchMedia,
                .patchICERestart(reason: "no RTCP"), .watchMedia, .none, .deleteResource, .none,
            ]
        )
    }

    /// Random events (a fixed seed): never a crash, final states stay final, the counters agree.
    @Test("random event sequences keep the invariants")
    func randomSequences() {
        let sequences = Walk.randomSequences(of: Sample.allCases, count: 500, length: 40, seed: 0x9E37_79B9_7F4A_7C15)
        for sequence in sequences {
            var walk = From.idle.walk
            var posts = 0
            for sample in sequence {
                let before = walk.machine.state
                let transition = walk.take(sample)
                if case .postOffer = transition.action { posts += 1 }
                if case .scheduleRetry(let delay, _) = transition.action {
                    #expect(delay >= .seconds(1) && delay <= .seconds(30), "\(walk)")
                }
                if before.isFinal { #expect(walk.machine.state == before, "\(walk)") }
            }
            #expect(walk.machine.attempts == posts, "\(walk)")
        }
    }
}
