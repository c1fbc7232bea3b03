import Testing

@testable import CongestionControl

@Suite("Over-use detector with the adaptive threshold (draft-ietf-rmcat-gcc-02 §5.4)")
struct OveruseDetectorTests {
    @Test("γ adapts by k_up above it and k_down below it, ignores spikes, stays within 6–600 ms")
    func thresholdAdaptation() throws {
        var detector = try OveruseDetector()
        #expect(detector.threshold == 12.5)
        // The first sample only starts the clock.
        detector.detect(modifiedTrend: 20, slope: 0, sendDeltaUs: 5_000, arrivalTimeUs: 1_000_000)
        #expect(detector.threshold == 12.5)
        // 10 ms later, |m| = 20 ≥ γ: 12.5 + 0.0087 × (20 − 12.5) × 10 = 13.1525.
        detector.detect(modifiedTrend: 20, slope: 0, sendDeltaUs: 5_000, arrivalTimeUs: 1_010_000)
        #expect(abs(detector.threshold - 13.1525) < 1e-12)
        // 10 ms later, |m| = 5 < γ: 13.1525 + 0.039 × (5 − 13.1525) × 10 = 9.973025.
        detector.detect(modifiedTrend: -5, slope: 0, sendDeltaUs: 5_000, arrivalTimeUs: 1_020_000)
        #expect(abs(detector.threshold - 9.973025) < 1e-12)
        // |m| = 50 is more than 15 above γ: a spike, γ does not move.
        detector.detect(modifiedTrend: 50, slope: 0, sendDeltaUs: 5_000, arrivalTimeUs: 1_030_000)
        #expect(abs(detector.threshold - 9.973025) < 1e-12)
        // 200 ms later (credited as 100 ms), |m| = 0: the step overshoots and γ stops at 6.
        detector.detect(modifiedTrend: 0, slope: 0, sendDeltaUs: 5_000, arrivalTimeUs: 1_230_000)
        #expect(detector.threshold == 6)
        // Large trends for a long time: γ stops at 600.
        for step in 1...200 {
            let trend = detector.threshold + 14
            detector.detect(
                modifiedTrend: trend,
                slope: 0,
                sendDeltaUs: 5_000,
                arrivalTimeUs: 1_230_000 + Int64(step) * 100_000
            )
        }
        #expect(detector.threshold == 600)
    }

    @Test("over-use needs more than 10 ms above γ, 2 groups in a row, and a slope that is not falling")
    func overuseTiming() throws {
        // The same arrival time throughout, so γ stays at 12.5.
        var detector = try OveruseDetector()
        // 5 ms groups: above for 2.5 ms (half the first), then 7.5, then 12.5 ms > 10.
        #expect(detector.detect(modifiedTrend: 20, slope: 0.01, sendDeltaUs: 5_000, arrivalTimeUs: 0) == .normal)
        #expect(detector.detect(modifiedTrend: 20, slope: 0.02, sendDeltaUs: 5_000, arrivalTimeUs: 0) == .normal)
        #expect(detector.detect(modifiedTrend: 20, slope: 0.03, sendDeltaUs: 5_000, arrivalTimeUs: 0) == .overusing)
        // After signalling, the count restarts: a single group above γ keeps the verdict.
        #expect(detector.detect(modifiedTrend: 20, slope: 0.03, sendDeltaUs: 5_000, arrivalTimeUs: 0) == .overusing)
        #expect(detector.detect(modifiedTrend: 0, slope: 0, sendDeltaUs: 5_000, arrivalTimeUs: 0) == .normal)

        // 25 ms groups: the first is credited 12.5 ms (> 10) but is alone; the second signals.
        var long = try OveruseDetector()
        #expect(long.detect(modifiedTrend: 20, slope: 0.01, sendDeltaUs: 25_000, arrivalTimeUs: 0) == .normal)
        #expect(long.detect(modifiedTrend: 20, slope: 0.01, sendDeltaUs: 25_000, arrivalTimeUs: 0) == .overusing)

        // A falling slope (the queue already drains) signals nothing, whatever the time above γ.
        var falling = try OveruseDetector()
        for slope in [0.05, 0.04, 0.03, 0.02] {
            #expect(falling.detect(modifiedTrend: 20, slope: slope, sendDeltaUs: 25_000, arrivalTimeUs: 0) == .normal)
        }
    }

    @Test("below −γ is under-use at once; reset restores the initial state")
    func underuse() throws {
        var detector = try OveruseDetector()
        #expect(detector.detect(modifiedTrend: -13, slope: -0.1, sendDeltaUs: 5_000, arrivalTimeUs: 0) == .underusing)
        #expect(detector.detect(modifiedTrend: -12, slope: -0.1, sendDeltaUs: 5_000, arrivalTimeUs: 0) == .normal)
        detector.detect(modifiedTrend: 20, slope: 0, sendDeltaUs: 5_000, arrivalTimeUs: 0)
        detector.detect(modifiedTrend: 20, slope: 0, sendDeltaUs: 5_000, arrivalTimeUs: 50_000)
        detector.reset()
        #expect(detector.state == .normal && detector.threshold == 12.5)
        let error = #expect(throws: CongestionControlError.self) {
            try OveruseDetector(configuration: .init(initialThreshold: 5))
        }
        #expect(error?.message == "threshold bounds need 0 < minimum ≤ initial ≤ maximum; got 6.0, 5.0, 600.0")
    }
}
