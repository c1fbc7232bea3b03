import TestSupport
import Testing

@testable import DTLS

@Suite("DTLS state machine")
struct DTLSStateMachineTests {
    static let error = DTLSError(.handshakeTimeout, "test")

    enum Step: Sendable {
        case start, connect, fail, close
    }

    /// Applies `step`; returns whether the transition applied.
    static func apply(_ step: Step, to machine: inout DTLSStateMachine) -> Bool {
        switch step {
        case .start: return machine.startHandshake()
        case .connect: return machine.connect(.aeadAES128GCM)
        case .fail: return machine.fail(error)
        case .close: return machine.close()
        }
    }

    /// From each state, each step: applied or not, and the state after. Final states stay final.
    static let transitions: [([Step], Step, Bool, DTLSState)] = [
        ([Step](), Step.start, true, DTLSState.handshaking),
        ([], .connect, false, .new),
        ([], .fail, true, .failed(error)),
        ([], .close, true, .closed),
        ([.start], .start, false, .handshaking),
        ([.start], .connect, true, .connected(.aeadAES128GCM)),
        ([.start], .fail, true, .failed(error)),
        ([.start], .close, true, .closed),
        ([.start, .connect], .connect, false, .connected(.aeadAES128GCM)),
        ([.start, .connect], .start, false, .connected(.aeadAES128GCM)),
        ([.start, .connect], .fail, true, .failed(error)),
        ([.start, .connect], .close, true, .closed),
        ([.start, .fail], .start, false, .failed(error)),
        ([.start, .fail], .connect, false, .failed(error)),
        ([.start, .fail], .fail, false, .failed(error)),
        ([.start, .fail], .close, false, .failed(error)),
        ([.close], .start, false, .closed),
        ([.close], .fail, false, .closed),
        ([.close], .close, false, .closed),
    ]

    @Test("transitions", arguments: transitions)
    func transition(history: [Step], step: Step, applies: Bool, after: DTLSState) {
        var walk = StateMachineWalk(DTLSStateMachine(), through: history) { Self.apply($1, to: &$0) }
        let applied = walk.take(step)
        #expect(applied == applies, "\(walk)")
        #expect(walk.machine.state == after, "\(walk)")
        let running: Bool
        switch after {
        case .handshaking, .connected: running = true
        default: running = false
        }
        #expect(walk.machine.isRunning == running, "\(walk)")
    }
}
