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

        var machine: Machine {
            var machine = Machine()
            for sample in path { _ = machine.receive(sample.event) }
            return machine
        }
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
            #expect(from.machine.state == from.state, "\(from)")
        }
    }

    @Test("the table names each (state, event) once")
    func rowsAreUnique() {
        let keys = Self.rows.map { "\($0.from).\($0.sample)" }
        #expect(Set(keys).count == keys.count)
    }

    @Test("transitions", arguments: rows)
    func transition(_ row: Row) {
        var machine = row.from.machine
        #expect(machine.receive(row.sample.event) == Transition(report: row.report, action: row.action))
        #expect(machine.state == row.to)
    }

    /// Every (state, event) outside the table: ignored, the state as it was.
    @Test("events a state does not take are ignored", arguments: From.allCases)
    func ignored(_ from: From) {
        let taken = Set(Self.rows.filter { $0.from == from }.map(\.sample))
        for sample in Sample.allCases where !taken.contains(sample) {
            var machine = from.machine
            #expect(machine.receive(sample.event) == .ignored, "\(from) + \(sample)")
            #expect(machine.state == from.state, "\(from) + \(sample)")
        }
    }

    /// A stop ends every viewer that is not ended already, its transport stopped when it has one,
    /// and its status entry left to whoever owns it (the session is ending).
    @Test("a stop from every state", arguments: From.allCases)
    func stopFromEveryState(_ from: From) {
        var machine = from.machine
        let transition = machine.receive(.stop)
        #expect(transition.report == nil)
        if from.state.isFinal {
            #expect(transition == .ignored && machine.state == from.state)
        } else {
            #expect(machine.state == .ended(.stopped))
            #expect(transition.action == (from == .idle ? .none : .stopTransport))
        }
        for sample in Sample.allCases {
            let before = machine.state
            #expect(machine.receive(sample.event) == .ignored, "\(sample)")
            #expect(machine.state == before)
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
        var seed: UInt64 = 0x2545_F491_4F6C_DD1D
        func next(_ bound: Int) -> Int {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((seed >> 33) % UInt64(bound))
        }
        let samples = Sample.allCases
        for _ in 0..<500 {
            var machine = Machine()
            for _ in 0..<30 {
                let before = machine.state
                let transition = machine.receive(samples[next(samples.count)].event)
                if before.isFinal {
                    #expect(machine.state == before && transition == .ignored)
                }
                if case .remove(let ending) = transition.action { #expect(machine.state == .ended(ending)) }
            }
        }
    }
}
