import Testing

@testable import CongestionControl

/// The scenarios and expected rates of libwebrtc's probe_bitrate_estimator_unittest.cc
/// (modules/congestion_controller/goog_cc), with its defaults: a cluster plans 5 packets and
/// 5000 bytes, so 4 packets and 4000 bytes received are enough (80 %). Send rate = bytes but
/// the last sent packet's over the send interval; receive rate = bytes but the first received
/// packet's over the receive interval. Unlike libwebrtc, which updates its estimate with every
/// packet, ours reports a cluster once, the first time it has enough.
@Suite("Probe bitrate estimator (libwebrtc probe_bitrate_estimator_unittest scenarios)")
struct ProbeBitrateEstimatorTests {
    struct Packet: Sendable {
        var cluster: Int
        var size: Int
        var sendMs: Int64
        var arrivalMs: Int64?
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        /// The clusters begun, in order, before any feedback.
        var clusters: [ProbeBitrateEstimator.Cluster]
        var packets: [Packet]
        /// (index of the packet whose feedback completes a cluster, the rate it gives).
        var reports: [(index: Int, bitsPerSecond: Int)]
        var testDescription: String { name }
    }

    static func cluster(_ id: Int, packets: Int = 5, bytes: Int = 5_000) -> ProbeBitrateEstimator.Cluster {
        ProbeBitrateEstimator.Cluster(id: id, minimumPackets: packets, minimumBytes: bytes)
    }

    /// `cluster`'s packets of `size` bytes, (send ms, arrival ms) each.
    static func packets(_ cluster: Int, _ size: Int, _ times: [(Int64, Int64)]) -> [Packet] {
        times.map { Packet(cluster: cluster, size: size, sendMs: $0.0, arrivalMs: $0.1) }
    }

    static let cases: [Case] = [
        Case(
            name: "one cluster, 4 × 1000 bytes 10 ms apart both ways: 800 kbit/s",
            clusters: [cluster(0)],
            packets: packets(0, 1_000, [(0, 10), (10, 20), (20, 30), (30, 40)]),
            reports: [(3, 800_000)]
        ),
        Case(
            name: "too few packets: 3 of 5",
            clusters: [cluster(0)],
            packets: packets(0, 2_000, [(0, 10), (10, 20), (20, 30)]),
            reports: []
        ),
        Case(
            name: "too few bytes: 5 × 800 of 6000",
            clusters: [cluster(0, bytes: 6_000)],
            packets: packets(0, 800, [(0, 10), (10, 20), (20, 30), (30, 40), (40, 50)]),
            reports: []
        ),
        Case(
            name: "small cluster: 6 × 150 bytes for a 1000-byte plan, 120 kbit/s",
            clusters: [cluster(0, bytes: 1_000)],
            packets: packets(0, 150, [(0, 10), (10, 20), (20, 30), (30, 40), (40, 50), (50, 60)]),
            reports: [(5, 120_000)]
        ),
        Case(
            name: "large cluster: 12500-byte packets 1 ms apart, 100 Mbit/s once 24 of 30 arrived",
            clusters: [cluster(0, packets: 30, bytes: 312_500)],
            packets: packets(0, 12_500, (0..<25).map { (Int64($0), Int64($0) + 5) }),
            reports: [(23, 100_000_000)]
        ),
        Case(
            name: "received faster than sent (but under 2×): the send rate, 800 kbit/s",
            clusters: [cluster(0)],
            packets: packets(0, 1_000, [(0, 15), (10, 30), (20, 35), (30, 40)]),
            reports: [(3, 800_000)]
        ),
        Case(
            name: "received more than 2× faster than sent: no result",
            clusters: [cluster(0)],
            packets: packets(0, 1_000, [(0, 19), (10, 22), (20, 25), (40, 27)]),
            reports: []
        ),
        Case(
            name: "received slower than sent (saturated): 0.95 × the 320 kbit/s receive rate",
            clusters: [cluster(0)],
            packets: packets(0, 1_000, [(0, 10), (10, 40), (20, 70), (30, 85)]),
            reports: [(3, 304_000)]
        ),
        Case(
            name: "all received at one instant: no receive interval, no result",
            clusters: [cluster(0)],
            packets: packets(0, 1_000, [(0, 50), (10, 50), (20, 50), (40, 50)]),
            reports: []
        ),
        Case(
            name: "two clusters one after the other: 0.95 × 480 kbit/s once, then 0.95 × 1200 kbit/s",
            clusters: [cluster(0), cluster(1)],
            packets: packets(0, 1_000, [(0, 10), (10, 20), (20, 30), (40, 60), (50, 60)])
                + packets(1, 1_000, [(60, 70), (65, 77), (70, 84), (75, 90)]),
            // libwebrtc updates cluster 0 to 640 kbit/s with its fifth packet; ours reported it.
            reports: [(3, 456_000), (8, 1_140_000)]
        ),
        Case(
            name: "two clusters interleaved: each finds its own rate",
            clusters: [cluster(1), cluster(2, bytes: 8_000)],
            packets: zip(
                packets(1, 1_000, [(0, 10), (10, 20), (20, 30), (30, 40)]),
                packets(2, 2_000, [(5, 15), (15, 25), (25, 35), (35, 45)])
            ).flatMap { [$0.0, $0.1] },
            // 3000 bytes over 30 ms; 6000 bytes over 30 ms.
            reports: [(6, 800_000), (7, 1_600_000)]
        ),
        Case(
            name: "a packet of an old cluster 6 s later: send interval over 1 s, no result",
            clusters: [cluster(0), cluster(1)],
            packets: packets(0, 1_000, [(0, 10), (10, 20), (20, 30)])
                + packets(1, 1_000, [(60, 70), (65, 77), (70, 84), (75, 90)])
                + packets(0, 1_000, [(6_040, 6_060)]),
            reports: [(6, 1_140_000)]
        ),
        Case(
            name: "received over more than 1 s: no result",
            clusters: [cluster(0)],
            packets: packets(0, 1_000, [(0, 10), (10, 400), (20, 800), (30, 1_011)]),
            reports: []
        ),
        Case(
            name: "received over exactly 1 s: still a result, 0.95 × 24 kbit/s",
            clusters: [cluster(0)],
            packets: packets(0, 1_000, [(0, 10), (10, 400), (20, 800), (30, 1_010)]),
            reports: [(3, 22_800)]
        ),
        Case(
            name: "the last sent packet's size is left out of the send rate: 800 kbit/s, not 933",
            clusters: [cluster(0, packets: 6)],
            packets: packets(0, 1_000, [(0, 10), (10, 20), (20, 30), (30, 40)]) + packets(0, 1_500, [(40, 50)]),
            reports: [(4, 800_000)]
        ),
        Case(
            name: "the first received packet's size is left out of the receive rate: 0.95 × 800 kbit/s",
            clusters: [cluster(0)],
            packets: packets(0, 1_500, [(0, 10)]) + packets(0, 1_000, [(10, 20), (20, 30), (30, 40)]),
            reports: [(3, 760_000)]
        ),
        Case(
            name: "packets reported lost do not count toward the 80 %",
            clusters: [cluster(0)],
            packets: packets(0, 1_000, [(0, 10), (10, 20), (20, 30)])
                + [Packet(cluster: 0, size: 1_000, sendMs: 30, arrivalMs: nil)]
                + packets(0, 1_000, [(40, 50)]),
            // 4 received: 3000 bytes (all but the last sent) over 40 ms, and over 40 ms received.
            reports: [(4, 600_000)]
        ),
        Case(
            name: "a cluster never begun, and packets outside any cluster, give nothing",
            clusters: [cluster(0)],
            packets: packets(1, 1_000, [(0, 10), (10, 20), (20, 30), (30, 40)])
                + packets(-1, 1_000, [(0, 10), (10, 20), (20, 30), (30, 40)]),
            reports: []
        ),
        Case(
            name: "a fifth cluster begun replaces the oldest of four",
            clusters: [cluster(1), cluster(2), cluster(3), cluster(4), cluster(5)],
            packets: packets(1, 1_000, [(0, 10), (10, 20), (20, 30), (30, 40)])
                + packets(2, 1_000, [(0, 10), (10, 20), (20, 30), (30, 40)]),
            reports: [(7, 800_000)]
        ),
    ]

    @Test(arguments: cases)
    func estimate(_ scenario: Case) {
        var estimator = ProbeBitrateEstimator()
        for cluster in scenario.clusters { estimator.begin(cluster) }
        var reports: [(index: Int, bitsPerSecond: Int)] = []
        for (index, packet) in scenario.packets.enumerated() {
            let result = PacketResult(
                sequenceNumber: UInt64(index),
                sendTimeUs: 1_000_000_000 + packet.sendMs * 1_000,
                arrivalTimeUs: packet.arrivalMs.map { 7_000_000_000 + $0 * 1_000 },
                size: packet.size
            )
            if let rate = estimator.add(result, cluster: packet.cluster) { reports.append((index, rate)) }
        }
        #expect(reports.map(\.index) == scenario.reports.map(\.index))
        for (got, expected) in zip(reports, scenario.reports) {
            #expect(abs(got.bitsPerSecond - expected.bitsPerSecond) <= 10, "packet \(got.index): \(got.bitsPerSecond)")
        }
    }

    @Test("a cluster is reported once: more of its packets, even at another rate, give nothing")
    func reportedOnce() {
        var estimator = ProbeBitrateEstimator()
        estimator.begin(Self.cluster(9))
        var rates: [Int?] = []
        for (index, times) in [(0, 10), (10, 20), (20, 30), (30, 40), (40, 41), (50, 42)].enumerated() {
            let result = PacketResult(
                sequenceNumber: UInt64(index),
                sendTimeUs: Int64(times.0) * 1_000,
                arrivalTimeUs: Int64(times.1) * 1_000,
                size: 1_000
            )
            rates.append(estimator.add(result, cluster: 9))
        }
        #expect(rates == [nil, nil, nil, 800_000, nil, nil])
    }
}
