import Testing

@testable import CongestionControl

@Suite("Grouping packets into send bursts (draft-ietf-rmcat-gcc-02 §5.2)")
struct InterArrivalGroupingTests {
    static func packet(_ sequence: UInt64, send: Int64, arrival: Int64?, size: Int = 1000) -> PacketResult {
        PacketResult(sequenceNumber: sequence, sendTimeUs: send, arrivalTimeUs: arrival, size: size)
    }

    @Test("a packet sent exactly 5 ms after the group's first joins it; 1 µs later opens the next")
    func fiveMillisecondEdge() throws {
        var grouping = try InterArrivalGrouping()
        // Group A: sent at 0, 2 and 5 ms (5 ms is not more than the group length).
        #expect(grouping.add(Self.packet(1, send: 0, arrival: 20_000), at: 0) == nil)
        #expect(grouping.add(Self.packet(2, send: 2_000, arrival: 22_000), at: 0) == nil)
        #expect(grouping.add(Self.packet(3, send: 5_000, arrival: 25_000), at: 0) == nil)
        // Group B opens at 5.001 ms: it arrived 1 ms after A's last, sent 1 µs after it, so the
        // delay variation is positive and the burst rule does not hold it in A.
        #expect(grouping.add(Self.packet(4, send: 5_001, arrival: 26_000, size: 500), at: 0) == nil)
        #expect(grouping.add(Self.packet(5, send: 9_000, arrival: 30_000, size: 700), at: 0) == nil)
        // Group C opens at 10.002 ms (5.001 ms after B's first) and completes B against A.
        let deltaResult = grouping.add(Self.packet(6, send: 10_002, arrival: 31_500), at: 0)
        let delta = try #require(deltaResult)
        #expect(delta.sendDeltaUs == 4_000, "B's last send 9 ms − A's last send 5 ms")
        #expect(delta.arrivalDeltaUs == 5_000, "B complete at 30 ms − A complete at 25 ms")
        #expect(delta.sizeDelta == 1_200 - 3_000)
        #expect(delta.delayVariationUs == 1_000)
        #expect(delta.arrivalTimeUs == 31_500, "the time axis is the closing packet's arrival")
    }

    @Test("burst rule: a late-sent packet arriving right behind the group (negative variation) joins it")
    func burstRule() throws {
        var grouping = try InterArrivalGrouping()
        #expect(grouping.add(Self.packet(1, send: 0, arrival: 50_000), at: 0) == nil)
        // Sent 8 ms later but arrived 1 ms after: a queue released both together.
        #expect(grouping.add(Self.packet(2, send: 8_000, arrival: 51_000), at: 0) == nil)
        // Same send instant as the group's last packet: joins whatever its arrival.
        #expect(grouping.add(Self.packet(3, send: 8_000, arrival: 60_000), at: 0) == nil)
        #expect(grouping.add(Self.packet(4, send: 20_000, arrival: 70_000), at: 0) == nil)
        let deltaResult = grouping.add(Self.packet(5, send: 40_000, arrival: 90_000), at: 0)
        let delta = try #require(deltaResult)
        #expect(delta.sendDeltaUs == 20_000 - 8_000)
        #expect(delta.arrivalDeltaUs == 70_000 - 60_000)
        #expect(delta.sizeDelta == 1_000 - 3_000)
    }

    @Test("lost packets (nil arrival) are skipped; a packet sent before the current group is ignored")
    func lostAndReordered() throws {
        var clean = try InterArrivalGrouping()
        var lossy = try InterArrivalGrouping()
        let sends: [Int64] = [0, 10_000, 20_000, 30_000, 40_000]
        var cleanDeltas: [InterArrivalGrouping.Delta] = []
        var lossyDeltas: [InterArrivalGrouping.Delta] = []
        for (index, send) in sends.enumerated() {
            let sequence = UInt64(index * 2)
            if let delta = clean.add(Self.packet(sequence, send: send, arrival: send + 20_000), at: send) {
                cleanDeltas.append(delta)
            }
            if let delta = lossy.add(Self.packet(sequence, send: send, arrival: send + 20_000), at: send) {
                lossyDeltas.append(delta)
            }
            #expect(lossy.add(Self.packet(sequence + 1, send: send + 1_000, arrival: nil), at: send) == nil)
        }
        #expect(cleanDeltas == lossyDeltas)
        #expect(cleanDeltas.count == 3)
        #expect(cleanDeltas.allSatisfy { $0.sendDeltaUs == 10_000 && $0.arrivalDeltaUs == 10_000 })
        // Sent at 35 ms, before the current group's first packet (40 ms): ignored.
        #expect(clean.add(Self.packet(99, send: 35_000, arrival: 55_000, size: 99_999), at: 0) == nil)
        let nextResult = clean.add(Self.packet(100, send: 50_000, arrival: 70_000), at: 0)
        let next = try #require(nextResult)
        #expect(next.sizeDelta == 0, "the reordered packet's bytes were not added")
    }

    @Test("a group completing before its predecessor yields nothing; three in a row reset")
    func negativeArrivalDelta() throws {
        var grouping = try InterArrivalGrouping()
        #expect(grouping.add(Self.packet(1, send: 0, arrival: 100_000), at: 0) == nil)
        #expect(grouping.add(Self.packet(2, send: 10_000, arrival: 150_000), at: 0) == nil)
        // Arrives before everything so far: the burst rule puts it in the second group, which
        // now completes at 60 ms, before the first (100 ms).
        #expect(grouping.add(Self.packet(3, send: 12_000, arrival: 60_000), at: 0) == nil)
        // Each next group would complete the second against the first: negative, no delta.
        #expect(grouping.add(Self.packet(4, send: 30_000, arrival: 200_000), at: 0) == nil)
        #expect(grouping.add(Self.packet(5, send: 40_000, arrival: 210_000), at: 0) == nil)
        // The third in a row resets: the grouping starts again from the next packet.
        #expect(grouping.add(Self.packet(6, send: 50_000, arrival: 220_000), at: 0) == nil)
        #expect(grouping.add(Self.packet(7, send: 60_000, arrival: 230_000), at: 0) == nil)
        #expect(grouping.add(Self.packet(8, send: 70_000, arrival: 240_000), at: 0) == nil)
        let deltaResult = grouping.add(Self.packet(9, send: 80_000, arrival: 250_000), at: 0)
        let delta = try #require(deltaResult)
        #expect(delta.sendDeltaUs == 10_000 && delta.arrivalDeltaUs == 10_000 && delta.sizeDelta == 0)
    }

    @Test("an arrival delta 3 s beyond the sender's clock delta (receiver clock jump) resets")
    func clockJump() throws {
        var grouping = try InterArrivalGrouping()
        _ = grouping.add(Self.packet(1, send: 0, arrival: 20_000), at: 100_000)
        _ = grouping.add(Self.packet(2, send: 10_000, arrival: 30_000), at: 100_000)
        // Group 2 against group 1 is fine (10 ms apart on both clocks) ...
        #expect(grouping.add(Self.packet(3, send: 20_000, arrival: 3_040_000), at: 100_000) != nil)
        // ... group 3 completed 3.01 s after group 2 on the receiver's clock, 0 s later on ours.
        #expect(grouping.add(Self.packet(4, send: 30_000, arrival: 3_050_000), at: 100_000) == nil)
        #expect(grouping.add(Self.packet(5, send: 40_000, arrival: 3_060_000), at: 100_000) == nil, "reset")
    }
}
