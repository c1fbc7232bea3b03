import Dispatch
import ICE
import JSEP
import SDP
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Everything an agent reported, for the tests to wait on. Handlers run on the agent's GLib
/// thread; the tests wait by polling on a Dispatch thread (`blocking`), never on Swift's
/// cooperative pool, which has only two threads here.
final class Recorder: Sendable {
    struct Received: Sendable, Equatable {
        var bytes: [UInt8]
        var kind: ICEDatagramClass
    }

    private let events = Mutex<[ICEEvent]>([])
    private let datagrams = Mutex<[Received]>([])
    private let logLines = Mutex<[String]>([])

    var eventHandler: ICEAgent.EventHandler { { event in self.events.withLock { $0.append(event) } } }
    var receiveHandler: ICEAgent.ReceiveHandler {
        { bytes, kind in self.datagrams.withLock { $0.append(Received(bytes: Array(bytes), kind: kind)) } }
    }
    var log: @Sendable (String) -> Void { { line in self.logLines.withLock { $0.append(line) } } }

    var allEvents: [ICEEvent] { events.withLock { $0 } }
    var received: [Received] { datagrams.withLock { $0 } }
    var lines: [String] { logLines.withLock { $0 } }

    var states: [ICEState] {
        allEvents.compactMap { event in
            if case .state(let state, _) = event { return state }
            return nil
        }
    }

    var gatheringDone: Bool {
        allEvents.contains { event in
            if case .gatheringDone = event { return true }
            return false
        }
    }

    func wait(seconds: Double, until condition: () -> Bool) -> Bool {
        poll(seconds: seconds, until: condition)
    }

    func waitForState(_ state: ICEState, seconds: Double) -> Bool {
        wait(seconds: seconds) { states.contains(state) }
    }
}

/// Polls `condition` every 10 ms until it holds or `seconds` pass; whether it held.
func poll(seconds: Double, until condition: () -> Bool) -> Bool {
    let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(seconds * 1e9)
    while DispatchTime.now().uptimeNanoseconds < deadline {
        if condition() { return true }
        usleep(10_000)
    }
    return condition()
}

/// Runs blocking test code on a Dispatch thread and awaits it, so the cooperative pool stays free.
func blocking<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(with: Result { try body() }) }
    }
}

struct Peer: Sendable {
    let agent: ICEAgent
    let recorder: Recorder

    init(_ role: ICERole, retransmissions: UInt32 = 7, portRange: ClosedRange<UInt16>? = nil) throws {
        let recorder = Recorder()
        self.recorder = recorder
        agent = try ICEAgent(
            ICEAgent.Configuration(
                role: role,
                localAddresses: ["127.0.0.1"],
                portRange: portRange,
                checkRetransmissions: retransmissions,
                log: recorder.log
            ),
            onEvent: recorder.eventHandler,
            onReceive: recorder.receiveHandler
        )
    }

    /// An agent made with handlers of the test's own that feed `recorder`.
    init(agent: ICEAgent, recorder: Recorder) {
        self.agent = agent
        self.recorder = recorder
    }

    func gatherAndWait() throws -> [ICECandidate] {
        try agent.gather()
        guard recorder.wait(seconds: 10, until: { recorder.gatheringDone }) else {
            throw ICEError(.agent, "gathering did not finish")
        }
        return agent.localCandidates
    }
}

/// Gathers on both, then gives each the other's credentials and (unless told not to) candidates
/// with end-of-candidates. The candidates go as the values `localCandidates` holds: libnice's
/// lines read by JSEP's parser, written back by JSEP's writer for the other agent's libnice.
func exchange(
    _ a: Peer,
    _ b: Peer,
    candidatesToB: Bool = true,
    credentialsForA: ICECredentials? = nil
) throws {
    let aCandidates = try a.gatherAndWait()
    let bCandidates = try b.gatherAndWait()
    try a.agent.setRemoteCredentials(credentialsForA ?? b.agent.localCredentials)
    try b.agent.setRemoteCredentials(a.agent.localCredentials)
    try a.agent.addRemoteCandidates(bCandidates)
    try a.agent.remoteCandidatesComplete()
    if candidatesToB {
        try b.agent.addRemoteCandidates(aCandidates)
        try b.agent.remoteCandidatesComplete()
    }
}

func seconds(since start: DispatchTime) -> Double {
    Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
}
