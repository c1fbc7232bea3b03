import Dispatch
import ICE
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Agents share the process's few GLib loops (`GLibLoopPool`): threads do not grow with agents,
/// agents on one loop all connect and carry datagrams, and one agent's handler may stop another
/// agent of its own loop.
@Suite struct ICELoopSharingTests {
    /// Twelve agents (six connected pairs) run on at most four `rtc-ice-N` threads of this
    /// process, however many agents other suites hold at the same time, and every pair connects
    /// and carries a datagram both ways.
    @Test func manyAgentsRunOnAFewThreads() async throws {
        try await blocking {
            let pairs = try (0..<6).map { _ in (try Peer(.controlling), try Peer(.controlled)) }
            defer {
                for (a, b) in pairs {
                    a.agent.stop()
                    b.agent.stop()
                }
            }
            let loops = iceThreadNames()
            #expect(!loops.isEmpty && loops.count <= 4, "\(loops)")
            print("ICE: 12 agents on \(loops.count) loop threads: \(loops.sorted())")
            for (a, b) in pairs { try exchange(a, b) }
            for (index, (a, b)) in pairs.enumerated() {
                #expect(a.recorder.waitForState(.ready, seconds: 15), "pair \(index)")
                #expect(b.recorder.waitForState(.ready, seconds: 15), "pair \(index)")
                let dtls: [UInt8] = [22, 254, 253, UInt8(index)]
                try a.agent.send(dtls)
                try b.agent.send(dtls)
                #expect(b.recorder.wait(seconds: 5) { b.recorder.received.map(\.bytes) == [dtls] }, "pair \(index)")
                #expect(a.recorder.wait(seconds: 5) { a.recorder.received.map(\.bytes) == [dtls] }, "pair \(index)")
            }
            #expect(iceThreadNames().count <= 4)
        }
    }

    /// A receive handler that stops another agent on its own loop: `stop()` returns there (it
    /// cannot wait on the loop it runs on), the stopped agent is closed, and the handler's own
    /// agent goes on receiving.
    @Test func aHandlerStopsAnotherAgentOnItsLoop() async throws {
        try await blocking {
            let threads = ThreadLog()
            let receiver = Recorder()
            let target = Mutex<ICEAgent?>(nil)
            let stopped = Mutex<[ICEState]>([])
            let a = try ICEAgent(
                ICEAgent.Configuration(role: .controlled, localAddresses: ["127.0.0.1"], log: receiver.log),
                onEvent: { event in
                    threads.note("a")
                    receiver.eventHandler(event)
                },
                onReceive: { bytes, kind in
                    receiver.receiveHandler(bytes, kind)
                    let agent = target.withLock { agent in
                        defer { agent = nil }
                        return agent
                    }
                    guard let agent else { return }
                    agent.stop()
                    stopped.withLock { $0.append(agent.state) }
                }
            )
            let peerA = Peer(agent: a, recorder: receiver)
            let b = try Peer(.controlling)
            defer {
                a.stop()
                b.agent.stop()
            }
            try exchange(b, peerA)
            #expect(receiver.waitForState(.ready, seconds: 15))
            let loopOfA = try #require(threads.thread(of: "a"))

            // Agents until one lands on A's loop (the pool has at most four; usually the next).
            var others: [ICEAgent] = []
            defer { others.forEach { $0.stop() } }
            var sameLoop: ICEAgent?
            for index in 0..<12 where sameLoop == nil {
                let name = "other\(index)"
                let agent = try ICEAgent(
                    ICEAgent.Configuration(role: .controlled, localAddresses: ["127.0.0.1"]),
                    onEvent: { _ in threads.note(name) },
                    onReceive: { _, _ in }
                )
                others.append(agent)
                try agent.gather()
                #expect(poll(seconds: 10) { threads.thread(of: name) != nil })
                if threads.thread(of: name) == loopOfA { sameLoop = agent }
            }
            let victim = try #require(sameLoop, "no agent landed on A's loop")
            target.withLock { $0 = victim }

            try b.agent.send([22, 254, 253, 1])
            #expect(receiver.wait(seconds: 5) { stopped.withLock { $0 } == [.closed] })
            #expect(victim.state == .closed)
            #expect(throws: ICEError.self) { try victim.send([22, 254, 253, 9]) }
            try b.agent.send([22, 254, 253, 2])
            let both: [[UInt8]] = [[22, 254, 253, 1], [22, 254, 253, 2]]
            #expect(receiver.wait(seconds: 5) { receiver.received.map(\.bytes) == both })
        }
    }
}

/// Which thread each named agent's handlers ran on.
private final class ThreadLog: Sendable {
    private let threads = Mutex<[String: pthread_t]>([:])

    func note(_ name: String) {
        let me = pthread_self()
        threads.withLock { $0[name] = me }
    }

    func thread(of name: String) -> pthread_t? { threads.withLock { $0[name] } }
}

/// The names of this process's ICE loop threads (`/proc/self/task/*/comm`).
private func iceThreadNames() -> [String] {
    guard let directory = opendir("/proc/self/task") else { return [] }
    defer { closedir(directory) }
    var names: [String] = []
    while let entry = readdir(directory) {
        let tid = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        guard tid.first?.isNumber == true, let file = fopen("/proc/self/task/\(tid)/comm", "r") else { continue }
        defer { fclose(file) }
        var buffer = [CChar](repeating: 0, count: 64)
        guard fgets(&buffer, Int32(buffer.count), file) != nil else { continue }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            .filter { $0 != "\n" }
        if name.hasPrefix("rtc-ice") { names.append(name) }
    }
    return names
}
