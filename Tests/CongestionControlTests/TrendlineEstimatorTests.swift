import Testing

@testable import CongestionControl

@Suite("Trendline: slope of the smoothed accumulated delay")
struct TrendlineEstimatorTests {
    @Test("least-squares slope on a known series, then as the window slides")
    func knownSlope() throws {
        // No smoothing and a window of 3, so the points are the accumulated delays themselves.
        var trendline = try TrendlineEstimator(configuration: .init(windowSize: 3, smoothing: 0))
        // d = 2, −1, 4, 0 ms at arrival times 100, 110, 130, 140 ms.
        #expect(trendline.update(sendDeltaUs: 10_000, arrivalDeltaUs: 12_000, arrivalTimeUs: 100_000) == nil)
        #expect(trendline.update(sendDeltaUs: 10_000, arrivalDeltaUs: 9_000, arrivalTimeUs: 110_000) == 0)
        // Points (0, 2), (10, 1), (30, 5): x̄ = 40/3, ȳ = 8/3, Σdxdy = 160/3, Σdx² = 1400/3.
        let thirdResult = trendline.update(sendDeltaUs: 10_000, arrivalDeltaUs: 14_000, arrivalTimeUs: 130_000)
        let third = try #require(thirdResult)
        #expect(abs(trendline.slope - 4.0 / 35) < 1e-12)
        #expect(abs(third - 3 * 4.0 / 35 * 4) < 1e-12, "min(3 deltas, 60) × slope × gain 4")
        // The window drops (0, 2): (10, 1), (30, 5), (40, 5): Σdxdy = 200/3, Σdx² = 1400/3.
        let fourthResult = trendline.update(sendDeltaUs: 10_000, arrivalDeltaUs: 10_000, arrivalTimeUs: 140_000)
        let fourth = try #require(fourthResult)
        #expect(abs(trendline.slope - 1.0 / 7) < 1e-12)
        #expect(abs(fourth - 4 * 1.0 / 7 * 4) < 1e-12)
        #expect(trendline.accumulatedDelay == 5)
    }

    @Test("smoothing 0.9 of the accumulated delay; the default window of 20 leaves the slope at 0 until full")
    func smoothingAndWindow() throws {
        var trendline = try TrendlineEstimator()
        trendline.update(sendDeltaUs: 5_000, arrivalDeltaUs: 15_000, arrivalTimeUs: 0)
        #expect(trendline.accumulatedDelay == 10)
        #expect(abs(trendline.smoothedDelay - 1.0) < 1e-12, "0.9 × 0 + 0.1 × 10")
        trendline.update(sendDeltaUs: 5_000, arrivalDeltaUs: 15_000, arrivalTimeUs: 10_000)
        #expect(abs(trendline.smoothedDelay - 2.9) < 1e-12, "0.9 × 1 + 0.1 × 20")
        for index in 2..<19 {
            trendline.update(sendDeltaUs: 5_000, arrivalDeltaUs: 15_000, arrivalTimeUs: Int64(index) * 10_000)
        }
        #expect(trendline.slope == 0, "19 points: the window of 20 is not full")
        let modifiedResult = trendline.update(sendDeltaUs: 5_000, arrivalDeltaUs: 15_000, arrivalTimeUs: 190_000)
        let modified = try #require(modifiedResult)
        #expect(trendline.slope > 0 && trendline.slope < 1, "a queue growing 10 ms per 10 ms, smoothed")
        #expect(abs(modified - 20 * trendline.slope * 4) < 1e-12)
        trendline.reset()
        #expect(trendline.deltaCount == 0 && trendline.accumulatedDelay == 0 && trendline.slope == 0)
    }

    @Test("configuration is validated")
    func validation() {
        let error = #expect(throws: CongestionControlError.self) {
            try TrendlineEstimator(configuration: .init(windowSize: 1))
        }
        #expect(error?.code == .invalidConfiguration)
    }
}
