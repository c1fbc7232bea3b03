import Testing

@testable import CongestionControl

@Suite("Pacer (libwebrtc PacingController's decisions)")
struct PacerTests {
    struct Arrival {
        var timeUs: Int64
        var handle: Int
        var size: Int
        var kind: Pacer.Kind
    }

    struct Sent: Equatable {
        var timeUs: Int64
        var handle: Int
        var kind: Pacer.Kind
    }

    /// A sender thread in simulated time: queues each arrival at its time, sends whatever `next`
    /// gives, then sleeps until `nextSendTime` or the next arrival, whichever is first.
    /// `wakeIntervalUs` rounds each wake-up up to a multiple of it (a late, coarse timer).
    static func run(
        _ pacer: inout Pacer,
        _ arrivals: [Arrival],
        wakeIntervalUs: Int64 = 1,
        sizes: inout [Int: Int]
    ) -> [Sent] {
        var sent: [Sent] = []
        var index = 0
        var now: Int64 = arrivals.first?.timeUs ?? 0
        while true {
            while index < arrivals.count, arrivals[index].timeUs <= now {
                let arrival = arrivals[index]
                sizes[arrival.handle] = arrival.size
                let accepted1 = pacer.enqueue(handle: arrival.handle, size: arrival.size, kind: arrival.kind, at: now)
                #expect(accepted1)
                index += 1
            }
            while let packet = pacer.next(at: now) {
                sent.append(Sent(timeUs: now, handle: packet.handle, kind: packet.kind))
            }
            let wake = pacer.nextSendTime(at: now)
            let arrival = index < arrivals.count ? arrivals[index].timeUs : nil
            guard var next = [wake, arrival].compactMap({ $0 }).min() else { break }
            next = max(next, now + 1)
            next = (next + wakeIntervalUs - 1) / wakeIntervalUs * wakeIntervalUs
            now = next
        }
        return sent
    }

    static func keyFrame(at timeUs: Int64 = 0, first: Int = 0) -> [Arrival] {
        (0..<84).map { Arrival(timeUs: timeUs, handle: first + $0, size: 1200, kind: .video) }
    }

    static func pacer(target: Int = 1_800_000, _ configuration: Pacer.Configuration = .init()) throws -> Pacer {
        var pacer = try Pacer(configuration: configuration)
        pacer.setTargetRate(target)
        return pacer
    }

    /// The most bytes sent in any window [t, t + length) starting at a send.
    static func maximumBytes(in sent: [Sent], sizes: [Int: Int], windowUs: Int64) -> Int {
        var most = 0
        for (start, first) in sent.enumerated() {
            var bytes = 0
            for packet in sent[start...] where packet.timeUs < first.timeUs + windowUs {
                bytes += sizes[packet.handle] ?? 0
            }
            most = max(most, bytes)
        }
        return most
    }

    @Test("a 100 kB key frame at 1.8 Mbit/s leaves over ≈ 178 ms, ≤ 5 ms of pacing rate + 1 packet per 5 ms")
    func keyFrameSpread() throws {
        var pacer = try Self.pacer()
        #expect(pacer.pacingRate == 4_500_000, "2.5 × 1.8 Mbit/s")
        var sizes: [Int: Int] = [:]
        let sent = Self.run(&pacer, Self.keyFrame(), sizes: &sizes)
        #expect(sent.count == 84)
        #expect(sent.first?.timeUs == 0)
        // Packet k goes when 4.5 Mbit/s has paid for k × 9600 bits: ⌈83 × 2133.3 µs⌉.
        #expect(sent.last?.timeUs == 177_067)
        // 5 ms at 4.5 Mbit/s is 2812 bytes; plus one packet of debt.
        #expect(Self.maximumBytes(in: sent, sizes: sizes, windowUs: 5_000) <= 2_812 + 1200)
        #expect(pacer.queuedPackets == 0)
        #expect(pacer.nextSendTime(at: 200_000) == nil)
    }

    @Test("a sender waking only every 5 ms sends small bursts, still ≤ 5 ms of pacing rate + 1 packet")
    func coarseTimer() throws {
        var pacer = try Self.pacer()
        var sizes: [Int: Int] = [:]
        let sent = Self.run(&pacer, Self.keyFrame(), wakeIntervalUs: 5_000, sizes: &sizes)
        #expect(sent.count == 84)
        #expect(Self.maximumBytes(in: sent, sizes: sizes, windowUs: 5_000) <= 2_812 + 1200)
        #expect(sent.allSatisfy { $0.timeUs % 5_000 == 0 })
        #expect((170_000...185_000).contains(sent.last?.timeUs ?? 0))
    }

    @Test("audio queued behind a key frame leaves at once, and its size is charged")
    func audioFirst() throws {
        var pacer = try Self.pacer()
        for arrival in Self.keyFrame() {
            let accepted2 = pacer.enqueue(handle: arrival.handle, size: arrival.size, kind: .video, at: 0)
            #expect(accepted2)
        }
        let packet3 = pacer.next(at: 0)
        #expect(packet3?.handle == 0)
        let packet4 = pacer.next(at: 0)
        #expect(packet4 == nil, "budget spent")
        #expect(pacer.nextSendTime(at: 0) == 2_134)
        let accepted5 = pacer.enqueue(handle: 1000, size: 160, kind: .audio, at: 1_000)
        #expect(accepted5)
        #expect(pacer.nextSendTime(at: 1_000) == 1_000)
        let audio = pacer.next(at: 1_000)
        #expect(audio?.handle == 1000)
        #expect(audio?.kind == .audio)
        let packet6 = pacer.next(at: 1_000)
        #expect(packet6 == nil)
        // 160 bytes more to pay for: 10 880 bits at 4.5 Mbit/s.
        #expect(pacer.nextSendTime(at: 1_000) == 2_418)
    }

    @Test("a retransmission queued behind video leaves before the remaining video; FIFO within a kind")
    func priorities() throws {
        var pacer = try Self.pacer()
        var sizes: [Int: Int] = [:]
        var arrivals = (0..<10).map { Arrival(timeUs: 0, handle: $0, size: 1200, kind: .video) }
        arrivals.append(Arrival(timeUs: 500, handle: 100, size: 1200, kind: .retransmission))
        arrivals.append(Arrival(timeUs: 600, handle: 101, size: 1200, kind: .retransmission))
        arrivals.append(Arrival(timeUs: 700, handle: 200, size: 100, kind: .padding))
        arrivals.append(Arrival(timeUs: 800, handle: 10, size: 1200, kind: .video))
        let sent = Self.run(&pacer, arrivals, sizes: &sizes)
        #expect(sent.map(\.handle) == [0, 100, 101, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 200])
        #expect(sent[1].kind == .retransmission)
        #expect(sent.last?.kind == .padding, "padding only when nothing else waits")
    }

    @Test("a 2.5 s backlog at a low target raises the pacing rate so the oldest waits ≤ 2 s")
    func queueTimeBound() throws {
        // 100 kbit/s target: 250 kbit/s pacing; 65 × 1200 B = 624 000 bits = 2.5 s of it.
        let backlog = (0..<65).map { Arrival(timeUs: 0, handle: $0, size: 1200, kind: .video) }
        var pacer = try Self.pacer(target: 100_000)
        var sizes: [Int: Int] = [:]
        for arrival in backlog {
            let accepted7 = pacer.enqueue(handle: arrival.handle, size: arrival.size, kind: arrival.kind, at: 0)
            #expect(accepted7)
        }
        #expect(pacer.pacingRate == 312_000, "624 000 bits in 2 s")
        #expect(pacer.oldestQueueTimeUs(at: 0) == 0)
        #expect(pacer.queuedBytes == 78_000)
        pacer = try Self.pacer(target: 100_000)
        let sent = Self.run(&pacer, backlog, sizes: &sizes)
        #expect(sent.count == 65)
        #expect(sent.allSatisfy { $0.timeUs <= 2_000_000 })
        #expect((sent.last?.timeUs ?? 0) > 1_900_000, "drained just in time, not at once")

        // Without the bound (20 s) the last packet waits 64 × 9600 / 250 000 s.
        var unbounded = try Self.pacer(target: 100_000, .init(maximumQueueTimeUs: 20_000_000))
        let slow = Self.run(&unbounded, backlog, sizes: &sizes)
        #expect(slow.last?.timeUs == 2_457_600)
    }

    @Test("a full ring refuses the packet; other kinds and freed slots still accept")
    func ringFull() throws {
        var pacer = try Self.pacer(.init(capacity: 4))
        for handle in 0..<4 {
            let accepted8 = pacer.enqueue(handle: handle, size: 1000, kind: .video, at: 0)
            #expect(accepted8)
        }
        let accepted9 = pacer.enqueue(handle: 4, size: 1000, kind: .video, at: 0)
        #expect(!accepted9)
        let accepted10 = pacer.enqueue(handle: 5, size: 100, kind: .audio, at: 0)
        #expect(accepted10)
        #expect(pacer.queuedPackets == 5)
        #expect(pacer.queuedBytes == 4_100)
        let packet11 = pacer.next(at: 0)
        #expect(packet11?.kind == .audio)
        let packet12 = pacer.next(at: 0)
        #expect(packet12 == nil, "audio's 800 bits are debt")
        let packet13 = pacer.next(at: 1_000)
        #expect(packet13?.handle == 0)
        let accepted14 = pacer.enqueue(handle: 6, size: 1000, kind: .video, at: 1_000)
        #expect(accepted14, "the ring wraps")
        var handles: [Int] = []
        var now: Int64 = 1_000
        while let wake = pacer.nextSendTime(at: now) {
            now = max(wake, now + 1)
            while let packet = pacer.next(at: now) { handles.append(packet.handle) }
        }
        #expect(handles == [1, 2, 3, 6])
        #expect(pacer.queuedBytes == 0)
    }

    @Test("steady 30 fps P frames of 5 kB at 1.8 Mbit/s: every frame leaves within 10 ms")
    func steadyFrames() throws {
        var pacer = try Self.pacer()
        var sizes: [Int: Int] = [:]
        var arrivals: [Arrival] = []
        var frameOf: [Int: Int64] = [:]
        for frame in 0..<300 {
            let time = Int64(frame) * 1_000_000 / 30
            for (index, size) in [1200, 1200, 1200, 1200, 200].enumerated() {
                let handle = frame * 5 + index
                frameOf[handle] = time
                arrivals.append(Arrival(timeUs: time, handle: handle, size: size, kind: .video))
            }
        }
        let sent = Self.run(&pacer, arrivals, sizes: &sizes)
        #expect(sent.count == 1500)
        #expect(sent.map(\.handle) == Array(0..<1500))
        let worst = sent.map { $0.timeUs - (frameOf[$0.handle] ?? 0) }.max() ?? 0
        // 5000 B at 4.5 Mbit/s is 8.9 ms; the last packet starts before that.
        #expect(worst <= 10_000)
        #expect(worst == 8_534)
    }

    @Test("configuration is validated")
    func validation() {
        #expect(throws: CongestionControlError.self) { try Pacer(configuration: .init(pacingFactor: 0.5)) }
        #expect(throws: CongestionControlError.self) { try Pacer(configuration: .init(burstIntervalUs: 0)) }
        #expect(throws: CongestionControlError.self) { try Pacer(configuration: .init(maximumQueueTimeUs: 0)) }
        #expect(throws: CongestionControlError.self) { try Pacer(configuration: .init(capacity: 0)) }
        #expect(throws: CongestionControlError.self) { try Pacer(configuration: .init(minimumRate: 0)) }
        #expect(throws: CongestionControlError.self) { try Pacer(configuration: .init(burstAllowanceUs: -1)) }
        #expect(throws: CongestionControlError.self) { try Pacer(configuration: .init(maximumBurstBytes: -1)) }
        #expect(throws: Never.self) { try Pacer() }
    }
}
