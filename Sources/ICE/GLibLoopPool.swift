import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The GLib loops every `ICEAgent` of the process runs on: at most `maximumLoops` threads however
/// many agents there are, each new agent on an idle loop, else a new loop while there may be
/// more, else the loop with the fewest agents.
///
/// Shared because an agent's own work is small (a check every 20–50 ms while connecting, consent
/// every 4–6 s, one DTLS handshake, SRTCP handed on), while a loop per agent cost every viewer a
/// thread, a malloc arena and an eventfd. More than one so that a handshake or a slow handler
/// delays only its loop's share of the agents. Loops start when first needed and then live as
/// long as the process: an idle one is a thread asleep in `poll`.
final class GLibLoopPool: Sendable {
    /// One loop per core, at most four: enough to keep handshakes of a crowd of viewers off one
    /// another, few enough that threads no longer grow with viewers.
    static let shared = GLibLoopPool(maximumLoops: min(max(Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))), 1), 4))

    /// A loop an agent was given; hand it back with `release(_:)` once the agent is gone.
    struct Lease: Sendable {
        let index: Int
        let loop: GLibThread
    }

    let maximumLoops: Int
    private let state = Mutex(State())

    private struct State: ~Copyable {
        var loops: [GLibThread] = []
        /// Agents on each loop, by index.
        var agents: [Int] = []
    }

    init(maximumLoops: Int) {
        precondition(maximumLoops >= 1)
        self.maximumLoops = maximumLoops
    }

    func acquire() -> Lease {
        state.withLock { state in
            let index: Int
            if let idle = state.agents.firstIndex(of: 0) {
                index = idle
            } else if state.loops.count < maximumLoops {
                state.loops.append(GLibThread(name: "rtc-ice-\(state.loops.count)"))
                state.agents.append(0)
                index = state.loops.count - 1
            } else {
                index = state.agents.indices.min { state.agents[$0] < state.agents[$1] } ?? 0
            }
            state.agents[index] += 1
            return Lease(index: index, loop: state.loops[index])
        }
    }

    func release(_ lease: Lease) {
        state.withLock { state in
            precondition(state.agents[lease.index] > 0, "a GLib loop lease was released twice")
            state.agents[lease.index] -= 1
        }
    }
}
