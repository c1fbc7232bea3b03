import TestSupport
import Testing

@testable import WebRTC

/// One WebRTC viewer's lifecycle without a peer: every state, every event in each (the ones it
/// takes and the ones it must ignore), the `--max-viewers` admission, how each ending is said and
/// whether the viewer hears it, and a stop from everywhere.
@Suite("WebRTC viewer state machine")
struct WebRTCViewerStateMachineTests {
    typealias Machine = WebRTCViewerStateMachine
    typealias State = Machine.State
    typealias Event = Machine.Event
    typealias Action = Machine.Action
    typealias Transition = Machine.Transition
    typealias Walk = StateMachineWalk<Machine, Sample, Transition>

    static let atCapacity = "the publisher serves its most viewers (2)"

    /// One event of each kind (an offer with room and one at capacity; ICE states that check,
    /// connect and fail).
    enum Sample: String, CaseIterable, Sendable {
        case offer, offerAtCapacity, answerReady, answerFailed, iceConnecting, iceConnected, iceFailed
        case handshaking, transportConnected, pathChanged, transportFailed, iceLost, closedByViewer
        case goneFromRoom, left, replaced, stop

        var event: Event {
            switch self {
            case .offer: return .offerReceived(served: 1, maximum: 2)
            case .offerAtCapacity: return .offerReceived(served: 2, maximum: 2)
            case .answerReady: return .answerReady
            case .answerFailed: return .answerFailed("offer refused: no video")
            case .iceConnecting: return .iceChanged(.connecting)
            case .iceConnected: return .iceChanged(.connected)
            case .iceFailed: return .iceChanged(.failed)
            case .handshaking: return .handshaking
            case .transportConnected: return .transportConnected
            case .pathChanged: return .pathChanged
            case .transportFailed: return .transportFailed("ICE did not connect within 30.0 seconds")
            case .iceLost: return .iceLost("consent lost")
            case .closedByViewer: return .closedByViewer
            case .goneFromRoom: return .goneFromRoom("no longer in the room")
            case .left: return .left("left")
            case .replaced: return .replaced
            case .stop: return .stop
            }
        }
    }

    /// Every state the tables start from, each reached from a fresh machine by real events.
    enum From: String, CaseIterable, Sendable {
        case idle, answering, checking, iceConnecting, handshaking, connected
        case refusedAtCapacity, refused, failed, closed, replaced, stopped

        var path: [Sample] {
            switch self {
            case .idle: return []
            case .answering: return [.offer]
            case .checking: return [.offer, .answerReady]
            case .iceConnecting: return [.offer, .answerReady, .iceConnecting]
            case .handshaking: return [.offer, .answerReady, .handshaking]
            case .connected: return [.offer, .answerReady, .handshaking, .transportConnected]
            case .refusedAtCapacity: return [.offerAtCapacity]
            case .refused: return [.offer, .answerFailed]
            case .failed: return [.offer, .answerReady, .transportFailed]
            case .closed: return From.connected.path + [.closedByViewer]
            case .replaced: return From.connected.path + [.replaced]
            case .stopped: return [.stop]
            }
        }

        var state: State {
            switch self {
            case .idle: return .idle
            case .answering: return .answering
            case .checking: return .checking(nil)
            case .iceConnecting: return .checking(.connecting)
            case .handshaking: return .handshaking
            case .connected: return .connected
            case .refusedAtCapacity: return .refused(reason: WebRTCViewerStateMachineTests.atCapacity)
            case .refused: return .refused(reason: "offer refused: no video")
            case .failed: return .ended(.failed("ICE did not connect within 30.0 seconds"))
            case .closed: return .ended(.closedByViewer)
            case .replaced: return .ended(.replaced)
            case .stopped: return .ended(.stopped)
            }
        }

        /// A fresh machine walked through `path`.
        var walk: Walk { Walk(Machine(), through: path) { $0.receive($1.event) } }
    }

    struct Row: Sendable, CustomTestStringConvertible {
        var from: From
        var sample: Sample
        var report: State?
        var action: Action
        var to: State

        init(_ from: From, _ sample: Sample, report: State? = nil, _ action: Action = .none, to: State) {
            self.from = from
            self.sample = sample
            self.report = report
            self.action = action
            self.to = to
        }

        var testDescription: String { "\(from) + \(sample) → \(to)" }
    }

    /// A removal: reported (its status entry goes) and acted on.
    static func removal(_ from: From, _ sample: Sample, _ ending: Machine.Ending) -> Row {
        Row(from, sample, report: .ended(ending), .remove(ending), to: .ended(ending))
    }

    /// Every transition that does something; any (state, event) not here must be ignored.
    static let rows: [Row] = {
        let refused = State.refused(reason: "offer refused: no video")
        let gone = Machine.Ending.goneFromRoom("no longer in the room")
        var rows: [Row] = [
            Row(.idle, .offer, .makeAnswer, to: .answering),
            Row(.idle, .offerAtCapacity, .refuse(atCapacity), to: .refused(reason: atCapacity)),
            Row(.idle, .stop, to: .ended(.stopped)),
            Row(.answering, .answerReady, report: .checking(nil), .sendAnswer, to: .checking(nil)),
        ]
        // Until ended, a viewer leaves the same ways; an answer that fails refuses it.
        for from in [From.answering, .checking, .iceConnecting, .handshaking, .connected] {
            rows += [
                Row(from, .answerFailed, report: refused, .refuse("offer refused: no video"), to: refused),
                removal(from, .goneFromRoom, gone),
                removal(from, .left, .left("left")),
                Row(from, .replaced, .stopTransport, to: .ended(.replaced)),
                Row(from, .stop, .stopTransport, to: .ended(.stopped)),
            ]
        }
        // Answered: the transport's failures, consent and close end it.
        for from in [From.checking, .iceConnecting, .handshaking, .connected] {
            rows += [
                removal(from, .transportFailed, .failed("ICE did not connect within 30.0 seconds")),
                removal(from, .iceLost, .failed("consent lost")),
                removal(from, .closedByViewer, .closedByViewer),
            ]
        }
        for from in [From.checking, .iceConnecting] {
            rows += [
                Row(from, .iceConnecting, report: .checking(.connecting), to: .checking(.connecting)),
                Row(from, .handshaking, report: .handshaking, to: .handshaking),
            ]
        }
        rows += [
            Row(.handshaking, .transportConnected, report: .connected, .addDestination, to: .connected),
            Row(.connected, .pathChanged, .changePath, to: .connected),
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

    /// Every (state, event) outside the table: ignored, the state as it was.
    @Test("events a state does not take are ignored", arguments: From.allCases)
    func ignored(_ from: From) {
        let taken = Set(Self.rows.filter { $0.from == from }.map(\.sample))
        for sample in Sample.allCases where !taken.contains(sample) {
            var walk = from.walk
            let transition = walk.take(sample)
            #expect(transition == .ignored, "\(from): \(walk)")
            #expect(walk.machine.state == from.state, "\(from): \(walk)")
        }
    }

    /// A stop ends every viewer that is not ended already, its transport stopped when it has one,
    /// and its status entry left to whoever owns it (the session is ending).
    @Test("a stop from every state", arguments: From.allCases)
    func stopFromEveryState(_ from: From) {
        var walk = from.walk
        let transition = walk.take(.stop)
        #expect(transition.report == nil, "\(walk)")
        if from.state.isFinal {
            #expect(transition == .ignored && walk.machine.state == from.state, "\(walk)")
        } else {
            #expect(walk.machine.state == .ended(.stopped), "\(walk)")
            #expect(transition.action == (from == .idle ? .none : .stopTransport), "\(walk)")
        }
        for sample in Sample.allCases {
            let before = walk.machine.state
            let after = walk.take(sample)
            #expect(after == .ignored, "\(walk)")
            #expect(walk.machine.state == before, "\(walk)")
        }
    }

    /// `--max-viewers`: refused once the others served reach the maximum; a re-subscribe does not
    /// count itself, so it always gets in.
    @Test(
        "admission under --max-viewers",
        arguments: [(0, 1, true), (1, 2, true), (2, 2, false), (3, 2, false), (0, 0, false), (99, 100, true)]
    )
    func admission(served: Int, maximum: Int, admitted: Bool) {
        var machine = Machine()
        let transition = machine.receive(.offerReceived(served: served, maximum: maximum))
        let reason = "the publisher serves its most viewers (\(maximum))"
        #expect(Machine.refusalAtCapacity(served: served, maximum: maximum) == (admitted ? nil : reason))
        #expect(transition.action == (admitted ? .makeAnswer : .refuse(reason)))
        #expect(machine.state == (admitted ? .answering : .refused(reason: reason)))
    }

    /// How each ending is said: a failure is a problem; the viewer hears of every ending it may
    /// still be there for.
    @Test("endings: reason, problem, told")
    func endings() {
        let endings: [(Machine.Ending, String, Bool, Bool)] = [
            (.failed("DTLS: bad fingerprint"), "DTLS: bad fingerprint", true, true),
            (.closedByViewer, "the viewer closed DTLS (close_notify)", false, true),
            (.goneFromRoom("no longer in the room"), "no longer in the room", false, true),
            (.left("left"), "left", false, false),
            (.replaced, "re-subscribed", false, false),
            (.stopped, "publisher stopped", false, false),
        ]
        for (ending, reason, problem, told) in endings {
            #expect(ending.reason == reason)
            #expect(ending.isProblem == problem, "\(ending)")
            #expect(ending.tellsViewer == told, "\(ending)")
        }
    }

    /// The `webRTCViewers` state words, as they were when they were strings.
    @Test("the state's text")
    func descriptions() {
        #expect(State.checking(nil).description == "ice checking")
        #expect(State.checking(.connecting).description == "ice connecting")
        #expect(State.checking(.gathering).description == "ice gathering")
        #expect(State.handshaking.description == "dtls-handshake")
        #expect(State.connected.description == "connected")
        #expect(State.refused(reason: "x").isFinal && State.ended(.left("x")).isFinal)
        #expect(!From.allCases.prefix(6).contains { $0.state.isFinal })
    }

    /// A viewer's whole life, then a late event of its ended transport.
    @Test("a viewer from offer to close_notify")
    func wholeLife() {
        var machine = Machine()
        let events: [Event] = [
            .offerReceived(served: 0, maximum: 100), .answerReady, .iceChanged(.gathering), .iceChanged(.connecting),
            .iceChanged(.connected), .handshaking, .iceChanged(.ready), .transportConnected, .pathChanged,
            .closedByViewer, .transportFailed("late"),
        ]
        let trace = events.map { machine.receive($0) }
        #expect(
            trace.compactMap(\.report).map(\.description) == [
                "ice checking", "ice gathering", "ice connecting", "dtls-handshake", "connected",
                "ended: the viewer closed DTLS (close_notify)",
            ]
        )
        #expect(
            trace.map(\.action) == [
                .makeAnswer, .sendAnswer, .none, .none, .none, .none, .none, .addDestination, .changePath,
                .remove(.closedByViewer), .none,
            ]
        )
    }

    /// Random events (a fixed seed): never a crash, a final state stays as it is.
    @Test("random event sequences keep final states final")
    func randomSequences() {
        let sequences = Walk.randomSequences(of: Sample.allCases, count: 500, length: 30, seed: 0x2545_F491_4F6C_DD1D)
        for sequence in sequences {
            var walk = From.idle.walk
            for sample in sequence {
                let before = walk.machine.state
                let transition = walk.take(sample)
                if before.isFinal {
                    #expect(walk.machine.state == before && transition == .ignored, "\(walk)")
                }
                if case .remove(let ending) = transition.action {
                    #expect(walk.machine.state == .ended(ending), "\(walk)")
                }
            }
        }
    }
}
