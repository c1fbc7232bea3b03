/// Estimates whether the one-way queueing delay is growing: the slope of a line fitted through
/// the recent smoothed accumulated delay (libwebrtc's `goog_cc/trendline_estimator.cc`, which
/// replaced the Kalman filter of draft-ietf-rmcat-gcc-02 §5.3 in send-side estimation).
///
/// For each group delta the delay variation d(i) = arrival delta − send delta (§5.1) is summed
/// into the accumulated delay (the queueing delay since the first group, up to a constant),
/// smoothed exponentially (coefficient 0.9), and the point (arrival time, smoothed delay), both
/// in ms, enters a window of the last 20 groups. Once the window is full the least-squares slope
/// through it is the trend: about (send rate − capacity) / capacity, 0 while queues are steady,
/// negative while they drain. The detector compares a scaled "modified trend" with its
/// threshold: slope × min(number of deltas, 60) × 4. The gain 4 makes the slope comparable to
/// the old Kalman estimate's threshold; the count factor keeps the first seconds, when a few
/// deltas make a noisy slope, from reading as over-use.
///
/// The window is a ring buffer allocated once: no allocation per group.
struct TrendlineEstimator: Sendable, Hashable {
    struct Configuration: Sendable, Hashable {
        /// Groups the line is fitted through (libwebrtc kDefaultTrendlineWindowSize = 20).
        var windowSize: Int
        /// Weight of the previous smoothed delay (libwebrtc kDefaultTrendlineSmoothingCoeff).
        var smoothing: Double
        /// Scale from slope to the detector's threshold units (libwebrtc
        /// kDefaultTrendlineThresholdGain = 4).
        var thresholdGain: Double
        /// The delta count at which the modified trend reaches full weight (libwebrtc
        /// kMinNumDeltas = 60).
        var fullWeightDeltaCount: Int
        /// The delta count stops here (libwebrtc kDeltaCounterMax = 1000).
        var maximumDeltaCount: Int

        init(
            windowSize: Int = 20,
            smoothing: Double = 0.9,
            thresholdGain: Double = 4,
            fullWeightDeltaCount: Int = 60,
            maximumDeltaCount: Int = 1000
        ) {
            self.windowSize = windowSize
            self.smoothing = smoothing
            self.thresholdGain = thresholdGain
            self.fullWeightDeltaCount = fullWeightDeltaCount
            self.maximumDeltaCount = maximumDeltaCount
        }

        func validate() throws(CongestionControlError) {
            // libwebrtc accepts windows of 10 to 200 groups; 2 is the least a line needs.
            guard (2...1000).contains(windowSize), smoothing >= 0, smoothing < 1, thresholdGain > 0,
                fullWeightDeltaCount > 0, maximumDeltaCount >= fullWeightDeltaCount
            else {
                throw CongestionControlError.invalid(
                    "trendline needs a window of 2–1000 groups, 0 ≤ smoothing < 1, a gain > 0 and "
                        + "0 < full-weight count ≤ maximum count; got \(windowSize), \(smoothing), "
                        + "\(thresholdGain), \(fullWeightDeltaCount), \(maximumDeltaCount)"
                )
            }
        }
    }

    let configuration: Configuration
    /// The fitted slope (ms of delay per ms of arrival time); 0 until the window first fills,
    /// then the last slope that could be fitted.
    private(set) var slope: Double = 0
    /// slope × min(deltaCount, 60) × gain: what the over-use detector compares with its threshold.
    private(set) var modifiedTrend: Double = 0
    /// Deltas seen since the start or the last reset (at most `maximumDeltaCount`).
    private(set) var deltaCount = 0
    /// Σ d(i), ms.
    private(set) var accumulatedDelay: Double = 0
    /// The exponentially smoothed accumulated delay, ms.
    private(set) var smoothedDelay: Double = 0

    private var firstArrivalUs: Int64?
    private var times: [Double]
    private var delays: [Double]
    private var head = 0
    private var count = 0

    init(configuration: Configuration = Configuration()) throws(CongestionControlError) {
        try configuration.validate()
        self.configuration = configuration
        self.times = Array(repeating: 0, count: configuration.windowSize)
        self.delays = Array(repeating: 0, count: configuration.windowSize)
    }

    /// Adds one group delta (µs) whose closing packet arrived at `arrivalTimeUs` (receiver's
    /// clock). Returns the modified trend, or nil while fewer than 2 deltas were seen, when
    /// libwebrtc's detector gives no verdict but "normal".
    @discardableResult
    mutating func update(sendDeltaUs: Int64, arrivalDeltaUs: Int64, arrivalTimeUs: Int64) -> Double? {
        let delta = Double(arrivalDeltaUs - sendDeltaUs) / 1000
        deltaCount = min(deltaCount + 1, configuration.maximumDeltaCount)
        let first = firstArrivalUs ?? arrivalTimeUs
        firstArrivalUs = first

        accumulatedDelay += delta
        smoothedDelay = configuration.smoothing * smoothedDelay + (1 - configuration.smoothing) * accumulatedDelay

        // The oldest point leaves when the window is full.
        let slot = (head + count) % configuration.windowSize
        times[slot] = Double(arrivalTimeUs - first) / 1000
        delays[slot] = smoothedDelay
        if count < configuration.windowSize {
            count += 1
        } else {
            head = (head + 1) % configuration.windowSize
        }
        if count == configuration.windowSize, let fitted = fittedSlope() { slope = fitted }

        guard deltaCount >= 2 else { return nil }
        modifiedTrend =
            Double(min(deltaCount, configuration.fullWeightDeltaCount)) * slope * configuration.thresholdGain
        return modifiedTrend
    }

    /// Forgets the window and the accumulated delay, as after a stream timeout.
    mutating func reset() {
        slope = 0
        modifiedTrend = 0
        deltaCount = 0
        accumulatedDelay = 0
        smoothedDelay = 0
        firstArrivalUs = nil
        head = 0
        count = 0
    }

    /// Ordinary least squares: Σ(x − x̄)(y − ȳ) / Σ(x − x̄)². Nil when every point has the
    /// same arrival time (no line through them).
    private func fittedSlope() -> Double? {
        var sumX = 0.0
        var sumY = 0.0
        for index in 0..<count {
            let slot = (head + index) % configuration.windowSize
            sumX += times[slot]
            sumY += delays[slot]
        }
        let meanX = sumX / Double(count)
        let meanY = sumY / Double(count)
        var numerator = 0.0
        var denominator = 0.0
        for index in 0..<count {
            let slot = (head + index) % configuration.windowSize
            let dx = times[slot] - meanX
            numerator += dx * (delays[slot] - meanY)
            denominator += dx * dx
        }
        return denominator == 0 ? nil : numerator / denominator
    }
}
