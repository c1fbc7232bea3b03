import Testing

@testable import WebRTC

/// The transport's phases: forward only, and a final phase stays final whatever arrives late.
@Suite struct WebRTCTransportMachineTests {
    enum Step: Sendable {
        case descriptionsExchanged, iceConnected, dtlsConnected, fail, close
    }

    private func run(_ steps: [Step]) -> (applied: [Bool], phase: WebRTCTransportPhase) {
        var machine = WebRTCTransportMachine()
        let applied = steps.map { step -> Bool in
            switch step {
            case .descriptionsExchanged: return machine.descriptionsExchanged()
            case .iceConnected: return machine.iceConnected()
            case .dtlsConnected: return machine.dtlsConnected()
            case .fail: return machine.fail("x")
            case .close: return machine.close()
            }
        }
        return (applied, machine.phase)
    }

    @Test(arguments: [
        (
            [Step.descriptionsExchanged, .iceConnected, .dtlsConnected], [true, true, true],
            WebRTCTransportPhase.connected
        ),
        // DTLS cannot finish before ICE passed, nor ICE connect before the answer went out.
        ([.iceConnected, .dtlsConnected], [false, false], .gathering),
        ([.descriptionsExchanged, .dtlsConnected], [true, false], .checking),
        // ICE reports connected, then ready: the second is no new phase.
        ([.descriptionsExchanged, .iceConnected, .iceConnected], [true, true, false], .handshaking),
        // A failure is final: a late DTLS success or close does not undo it.
        (
            [.descriptionsExchanged, .iceConnected, .fail, .dtlsConnected, .close], [true, true, true, false, false],
            .failed("x")
        ),
        (
            [.descriptionsExchanged, .iceConnected, .dtlsConnected, .close, .fail], [true, true, true, true, false],
            .closed
        ),
        ([.close, .descriptionsExchanged], [true, false], .closed),
    ])
    func transitions(steps: [Step], applied: [Bool], phase: WebRTCTransportPhase) {
        let result = run(steps)
        #expect(result.applied == applied)
        #expect(result.phase == phase)
    }

    @Test func onlyHandshakingAndConnectedLetDTLSIn() {
        let open: [WebRTCTransportPhase] = [.handshaking, .connected]
        let shut: [WebRTCTransportPhase] = [.gathering, .checking, .failed("x"), .closed]
        #expect(open.allSatisfy { $0.iceHasPassed })
        #expect(!shut.contains { $0.iceHasPassed })
    }
}
