import Synchronization

/// What a client connection has heard from the host, shared between the channel's event loop
/// (which records) and the tasks that wait for it.
final class IngestClientState: Sendable {
    struct Snapshot: Sendable {
        var hostHello: IngestHello?
        /// The host's end message, or how the connection ended without one.
        var end: IngestSessionEnd?
        var closed = false
    }

    private struct State {
        var snapshot = Snapshot()
        var generation = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter = 0
    }

    private let state = Mutex(State())

    var snapshot: Snapshot { state.withLock { $0.snapshot } }

    func update(_ change: (inout Snapshot) -> Void) {
        let waiters = state.withLock { state in
            change(&state.snapshot)
            state.generation += 1
            defer { state.waiters = [:] }
            return state.waiters
        }
        for waiter in waiters.values { waiter.resume() }
    }

    /// Waits until `condition` gives a value or `deadline` passes (nil then).
    func wait<T: Sendable>(
        until deadline: ContinuousClock.Instant,
        _ condition: @Sendable (Snapshot) -> T?
    ) async -> T? {
        while true {
            let (value, generation) = state.withLock { (condition($0.snapshot), $0.generation) }
            if let value { return value }
            guard ContinuousClock.now < deadline, !Task.isCancelled else { return nil }
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await self.changed(since: generation) }
                group.addTask { try? await Task.sleep(until: deadline) }
                await group.next()
                group.cancelAll()
            }
        }
    }

    /// Returns after the next change past `generation`, or when cancelled.
    private func changed(since generation: Int) async {
        let id = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                let registered = state.withLock { state in
                    guard state.generation == generation, !Task.isCancelled else { return false }
                    state.waiters[id] = waiter
                    return true
                }
                if !registered { waiter.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resume()
        }
    }
}
