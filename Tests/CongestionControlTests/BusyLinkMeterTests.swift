import Testing

@testable import CongestionControl

@Suite("Busy-link meter")
struct BusyLinkMeterTests {
    /// `count` packets of `size` bytes arriving `spacingUs` apart from `startUs` (a 1 Mbit/s link
    /// spaces 1250-byte packets 10 ms apart).
    static func arrivals(from startUs: Int64, count: Int, spacingUs: Int64, size: Int = 1250) -> [PacketResult] {
        (0..<count).map { index in
            let arrival = startUs + Int64(index) * spacingUs
            return PacketResult(sequenceNumber: UInt64(index), sendTimeUs: 0, arrivalTimeUs: arrival, size: size)
        }
    }

    @Test("the drain's bytes over their span are the link's rate; the first message only marks the start")
    func measuresTheSpan() {
        var meter = BusyLinkMeter()
        // The first message crossed during a token bucket's burst: 5 packets 2 ms apart.
        meter.add(Self.arrivals(from: 0, count: 5, spacingUs: 2_000), reading: 5_000_000)
        #expect(meter.rate == nil)
        #expect(meter.linkRate == 5_000_000)
        // Then 1 Mbit/s: 6 messages of 5 packets, 10 ms apart, from 18 ms.
        var start: Int64 = 18_000
        for _ in 0..<6 {
            meter.add(Self.arrivals(from: start, count: 5, spacingUs: 10_000), reading: 1_000_000)
            start += 50_000
        }
        // 30 packets × 10 000 bits over 8 → 308 ms, not 37 packets over 0 → 308 ms (1.2 Mbit/s).
        #expect(meter.rate == 1_000_000)
        #expect(meter.linkRate == 1_000_000)
        #expect(meter.resumeRate == 1_000_000)
        #expect(meter.highestReading == 5_000_000)
    }

    @Test("before the span is long enough, the cap takes the lowest reading and a resume the highest")
    func shortDrain() {
        var meter = BusyLinkMeter()
        // Messages of 5 packets at 1 Mbit/s; the drain starts at the first one's last, 40 ms.
        let table: [(arrivalsFromUs: Int64, reading: Int?, linkRate: Int?, resumeRate: Int?)] = [
            (0, 2_400_000, 2_400_000, 2_400_000),
            (50_000, 1_100_000, 1_100_000, 2_400_000),
            // 100 ms measured: 1 Mbit/s, under every reading; a message too short to read.
            (100_000, nil, 1_000_000, 2_400_000),
            (150_000, 1_600_000, 1_000_000, 2_400_000),
        ]
        for row in table {
            meter.add(Self.arrivals(from: row.arrivalsFromUs, count: 5, spacingUs: 10_000), reading: row.reading)
            #expect(meter.rate == nil, "\(row)")
            #expect(meter.linkRate == row.linkRate, "\(row)")
            #expect(meter.resumeRate == row.resumeRate, "\(row)")
        }
    }

    @Test("a batch stamped at once costs the measured rate little")
    func batchedStamps() {
        var meter = BusyLinkMeter()
        meter.add(Self.arrivals(from: 0, count: 5, spacingUs: 10_000), reading: 1_000_000)
        // 500 ms at 1 Mbit/s, but every 5 packets stamped together at the last one's time.
        for batch in 0..<10 {
            let stamp = Int64(batch + 1) * 50_000 + 40_000
            meter.add(Self.arrivals(from: stamp, count: 5, spacingUs: 0), reading: nil)
        }
        let rate = meter.rate ?? 0
        #expect(rate >= 1_000_000 && rate <= 1_150_000, "\(rate)")
    }

    @Test("lost packets and packets from before the start count nothing")
    func lossAndReorder() {
        var meter = BusyLinkMeter()
        meter.add(Self.arrivals(from: 100_000, count: 2, spacingUs: 10_000), reading: nil)
        var late = Self.arrivals(from: 120_000, count: 30, spacingUs: 10_000)
        late.append(PacketResult(sequenceNumber: 99, sendTimeUs: 0, arrivalTimeUs: nil, size: 1250))
        late.append(PacketResult(sequenceNumber: 98, sendTimeUs: 0, arrivalTimeUs: 50_000, size: 1250))
        meter.add(late, reading: nil)
        // 30 packets from 120 to 410 ms after the start at 110 ms: 300 ms.
        #expect(meter.rate == 1_000_000)
        #expect(meter.lowestReading == nil && meter.linkRate == 1_000_000)
    }
}
