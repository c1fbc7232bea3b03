import Synchronization

/// What the server's tasks share: the one capture slot, shutdown, and the counters.
final class IngestServerState: Sendable {
    enum Claim {
        case claimed(Int)
        case busy
        case shuttingDown
    }

    private struct Slot {
        var connection: Int
        var signals: SessionSignals
    }

    private struct State {
        var active: Slot?
        var nextConnection = 1
        var shuttingDown = false
        var running = false
        var statistics = IngestStatistics()
    }

    private let state = Mutex(State())

    /// Takes the capture slot for a new connection, unless another holds it or the server is
    /// shutting down.
    func claim(_ signals: SessionSignals) -> Claim {
        state.withLock { state in
            guard !state.shuttingDown else { return .shuttingDown }
            guard state.active == nil else { return .busy }
            let connection = state.nextConnection
            state.nextConnection += 1
            state.active = Slot(connection: connection, signals: signals)
            return .claimed(connection)
        }
    }

    /// True the first time only: the listener's connections can be iterated once.
    func startRunning() -> Bool {
        state.withLock { state in
            defer { state.running = true }
            return !state.running
        }
    }

    func release(_ connection: Int) {
        state.withLock { state in
            if state.active?.connection == connection { state.active = nil }
        }
    }

    var hasActiveConnection: Bool { state.withLock { $0.active != nil } }

    /// Asks the connection holding the slot to end with `reason`; false when there is none.
    func endActive(_ reason: IngestEndReason, _ message: String) -> Bool {
        guard let signals = state.withLock({ $0.active?.signals }) else { return false }
        signals.inject(.hostEnd(reason, message))
        return true
    }

    /// Refuses new connections from now on and ends the active one.
    func beginShutdown() {
        let signals = state.withLock { state in
            state.shuttingDown = true
            return state.active?.signals
        }
        signals?.inject(.hostEnd(.hostShutdown, "the host is shutting down"))
    }

    func count(_ update: (inout IngestStatistics) -> Void) {
        state.withLock { update(&$0.statistics) }
    }

    var statistics: IngestStatistics { state.withLock { $0.statistics } }
}
