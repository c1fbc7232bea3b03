import Testing

@testable import CongestionControl

@Suite("Acknowledged (received) bitrate from feedback")
struct AcknowledgedBitrateEstimatorTests {
    @Test("first sample after a 500 ms window, then Bayesian updates every 150 ms")
    func windows() throws {
        var estimator = try AcknowledgedBitrateEstimator()
        // 1000 bytes every 10 ms for 500 ms: 800 kbit/s.
        for index in 0..<50 { estimator.update(arrivalTimeUs: Int64(index) * 10_000, size: 1_000) }
        #expect(estimator.bitrate == nil)
        // The packet at 500 ms closes the first window (and opens the next).
        estimator.update(arrivalTimeUs: 500_000, size: 1_000)
        #expect(estimator.bitrate == 800_000)
        // Then twice the rate: 1000 bytes every 5 ms, 30 packets in the 150 ms window.
        for index in 1..<30 { estimator.update(arrivalTimeUs: 500_000 + Int64(index) * 5_000, size: 1_000) }
        #expect(estimator.bitrate == 800_000)
        estimator.update(arrivalTimeUs: 650_000, size: 1_000)
        // Sample 1.6 Mbit/s: uncertainty 10 × 0.8 / 0.8 = 10, variance 100 against 50 + 5:
        // (100 × 0.8 + 55 × 1.6) / 155 Mbit/s.
        let expected = (100 * 800_000.0 + 55 * 1_600_000.0) / 155
        #expect(estimator.bitrate == Int(expected))
    }

    @Test("a gap longer than a window drops the partial sum; lost packets count nothing")
    func gapsAndLoss() throws {
        var estimator = try AcknowledgedBitrateEstimator()
        for index in 0...50 { estimator.update(arrivalTimeUs: Int64(index) * 10_000, size: 1_000) }
        #expect(estimator.bitrate == 800_000)
        // 100 ms of packets, then 1 s of silence: the 100 ms are dropped, not averaged in.
        for index in 1...10 { estimator.update(arrivalTimeUs: 500_000 + Int64(index) * 10_000, size: 1_000) }
        estimator.update(arrivalTimeUs: 1_600_000, size: 1_000)
        #expect(estimator.bitrate == 800_000)
        estimator.update(PacketResult(sequenceNumber: 1, sendTimeUs: 0, arrivalTimeUs: nil, size: 100_000))
        #expect(estimator.bitrate == 800_000)
        estimator.reset()
        #expect(estimator.bitrate == nil)
    }
}
