import Testing

@testable import CongestionControl

@Suite("Sent-packet history (transport-wide numbers → send time, size, probe cluster)")
struct SentPacketHistoryTests {
    typealias Entry = SentPacketHistory.Entry

    struct Lookup: Sendable, CustomTestStringConvertible {
        var name: String
        var capacity: Int
        /// (16-bit number, send time µs, size, cluster) in the order recorded.
        var recorded: [(UInt16, Int64, Int, Int)]
        /// The number asked for and the entry expected (nil: no result).
        var query: UInt16
        var expected: Entry?
        var testDescription: String { name }
    }

    static let lookups: [Lookup] = [
        Lookup(
            name: "a recorded number gives its entry back",
            capacity: 16,
            recorded: [(1, 1_000, 1_200, -1), (2, 1_500, 1_100, -1), (3, 2_000, 300, 7)],
            query: 2,
            expected: Entry(sequenceNumber: 2, sendTimeUs: 1_500, size: 1_100, cluster: -1)
        ),
        Lookup(
            name: "the cluster id is kept",
            capacity: 16,
            recorded: [(1, 1_000, 1_200, -1), (2, 1_500, 1_100, -1), (3, 2_000, 300, 7)],
            query: 3,
            expected: Entry(sequenceNumber: 3, sendTimeUs: 2_000, size: 300, cluster: 7)
        ),
        Lookup(
            name: "across 65535 → 0 the numbers unwrap to 65536, 65537",
            capacity: 16,
            recorded: [(65_534, 10, 100, -1), (65_535, 20, 101, -1), (0, 30, 102, -1), (1, 40, 103, -1)],
            query: 0,
            expected: Entry(sequenceNumber: 65_536, sendTimeUs: 30, size: 102, cluster: -1)
        ),
        Lookup(
            name: "after the wrap, 65535 is still the one before 0",
            capacity: 16,
            recorded: [(65_534, 10, 100, -1), (65_535, 20, 101, -1), (0, 30, 102, -1), (1, 40, 103, -1)],
            query: 65_535,
            expected: Entry(sequenceNumber: 65_535, sendTimeUs: 20, size: 101, cluster: -1)
        ),
        Lookup(
            name: "a number older than the ring (its slot reused 4 later) has no entry",
            capacity: 4,
            recorded: (10...15).map { (UInt16($0), Int64($0) * 1_000, 1_000 + $0, -1) },
            query: 11,
            expected: nil
        ),
        Lookup(
            name: "the oldest number still in the ring has its entry",
            capacity: 4,
            recorded: (10...15).map { (UInt16($0), Int64($0) * 1_000, 1_000 + $0, -1) },
            query: 12,
            expected: Entry(sequenceNumber: 12, sendTimeUs: 12_000, size: 1_012, cluster: -1)
        ),
        Lookup(
            name: "a number never recorded, ahead of the newest, has no entry",
            capacity: 16,
            recorded: [(1, 1_000, 1_200, -1), (2, 1_500, 1_100, -1)],
            query: 9,
            expected: nil
        ),
        Lookup(
            name: "a number never recorded whose slot holds another number has no entry",
            capacity: 4,
            recorded: [(1, 1_000, 1_200, -1), (2, 1_500, 1_100, -1)],
            query: 5,
            expected: nil
        ),
        Lookup(
            name: "a number never recorded, just behind the first, has no entry",
            capacity: 16,
            recorded: [(5, 1_000, 1_200, -1)],
            query: 3,
            expected: nil
        ),
    ]

    @Test(arguments: lookups)
    func lookup(_ lookup: Lookup) throws {
        var history = try SentPacketHistory(capacity: lookup.capacity)
        for (number, sendTime, size, cluster) in lookup.recorded {
            history.record(sequenceNumber: number, sendTimeUs: sendTime, size: size, cluster: cluster)
        }
        #expect(history.entry(lookup.query) == lookup.expected)
        #expect(history.result(lookup.query, arrivalTimeUs: 0)?.cluster == lookup.expected?.cluster)
    }

    @Test("unwrapping follows the newest number: forward and backward across the wrap, 32768 behind is older")
    func unwrap() throws {
        var history = try SentPacketHistory()
        #expect(history.newest == nil)
        #expect(history.unwrap(40_000) == 40_000, "the first number unwraps to itself")
        history.record(sequenceNumber: 65_530, sendTimeUs: 0, size: 1)
        #expect(history.newest == 65_530)
        #expect(history.unwrap(3) == 65_539)
        #expect(history.unwrap(65_500) == 65_500)
        history.record(sequenceNumber: 3, sendTimeUs: 1, size: 1)
        #expect(history.newest == 65_539)
        // An older number recorded late (a retransmission's order) does not move the newest.
        history.record(sequenceNumber: 65_531, sendTimeUs: 2, size: 1)
        #expect(history.newest == 65_539)
        #expect(history.unwrap(65_535) == 65_535)
        // Exactly half the space away counts as behind; one less as ahead.
        #expect(history.unwrap(3 &+ 32_768) == 65_539 - 32_768)
        #expect(history.unwrap(3 &+ 32_767) == 65_539 + 32_767)
        // Many wraps: 200,000 numbers later the unwrapped value is still exact.
        for step in 1...200_000 {
            history.record(sequenceNumber: UInt16(truncatingIfNeeded: 3 + step), sendTimeUs: Int64(step), size: 1)
        }
        #expect(history.newest == Int64(265_539))
        let entry = try #require(history.entry(UInt16(truncatingIfNeeded: 3 + 200_000)))
        #expect(entry.sequenceNumber == 265_539 && entry.sendTimeUs == 200_000)
    }

    @Test("result() joins the send record with the feedback's arrival (nil: reported lost)")
    func result() throws {
        var history = try SentPacketHistory(capacity: 8)
        history.record(sequenceNumber: 65_535, sendTimeUs: 5_000_000, size: 1_216, cluster: 3)
        history.record(sequenceNumber: 0, sendTimeUs: 5_002_500, size: 640)

        let probe = try #require(history.result(65_535, arrivalTimeUs: 9_000_250))
        #expect(probe.cluster == 3)
        #expect(
            probe.result
                == PacketResult(sequenceNumber: 65_535, sendTimeUs: 5_000_000, arrivalTimeUs: 9_000_250, size: 1_216)
        )
        let lost = try #require(history.result(0, arrivalTimeUs: nil))
        #expect(lost.cluster == -1)
        #expect(
            lost.result == PacketResult(sequenceNumber: 65_536, sendTimeUs: 5_002_500, arrivalTimeUs: nil, size: 640)
        )
        #expect(!lost.result.isReceived)
        #expect(history.result(1, arrivalTimeUs: 9_001_000) == nil)
    }

    @Test("a number one behind the first recorded one is not a phantom entry")
    func noPhantomBeforeFirst() throws {
        // SendSideBandwidthEstimator numbers from 1, so 0 unwraps to 0; a forged or stale feedback
        // naming 65535 after a first packet numbered 0 unwraps to −1, which no empty slot holds.
        var history = try SentPacketHistory(capacity: 16)
        history.record(sequenceNumber: 0, sendTimeUs: 1_000, size: 1_200)
        #expect(history.entry(65_535) == nil)
        #expect(history.result(65_535, arrivalTimeUs: 5) == nil)
    }

    @Test("capacity 0 is refused")
    func capacity() {
        #expect(throws: CongestionControlError.self) { try SentPacketHistory(capacity: 0) }
    }
}
