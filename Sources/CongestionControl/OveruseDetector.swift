/// Compares the modified delay trend with an adaptive threshold γ and says whether the path is
/// over-used, under-used or neither (draft-ietf-rmcat-gcc-02 §5.4, with the constants of
/// libwebrtc's `goog_cc/trendline_estimator.cc`, where detection lives next to the trendline).
///
/// - Above γ: over-use is signalled only once the trend has stayed above γ for more than
///   `overusingTimeThreshold` (10 ms, §5.4 overuse_time_th) of send time, over at least
///   `minimumOveruseCount` (2) consecutive groups, and the slope is not falling: a single
///   delayed group is jitter, and a queue that already drains needs no further decrease. The
///   first group above γ is credited with half of its send delta (it was above for about half
///   of the time since the previous one). Until then the previous verdict stands.
/// - Below −γ: under-use at once (the rate controller holds while queues drain).
/// - Otherwise: normal.
///
/// γ itself follows |m| (§5.4): γ(i) = γ(i−1) + Δt · K · (|m(i)| − γ(i−1)), Δt the arrival time
/// since the last adaptation in ms (at most 100), K = k_up when |m| ≥ γ, else k_down. A γ that
/// rises with the trend keeps a concurrent TCP flow from starving us (it grows the queue
/// without our help); one that falls keeps detection sensitive on a quiet path. Samples with
/// |m| more than 15 ms above γ do not move it (a sudden capacity drop must not raise it). γ
/// stays within 6–600 ms.
///
/// k_up = 0.0087 and k_down = 0.039 are libwebrtc's values for the trendline's modified trend.
/// The draft's (k_u = 0.01, k_d = 0.00018) were tuned for the Kalman filter's m(i) of §5.3;
/// with the trendline's scale they let γ fall far too slowly after a burst of cross traffic.
/// Decision D6 (Docs/congestion.md): libwebrtc's gains, not the draft's.
struct OveruseDetector: Sendable, Hashable {
    struct Configuration: Sendable, Hashable {
        /// γ before any adaptation, ms (draft §5.4 and libwebrtc: 12.5).
        var initialThreshold: Double
        /// γ's bounds, ms (draft §5.4 and libwebrtc: 6 and 600).
        var minimumThreshold: Double
        var maximumThreshold: Double
        /// Adaptation gains per ms when |m| ≥ γ and when |m| < γ (libwebrtc k_up_, k_down_).
        var increaseGain: Double
        var decreaseGain: Double
        /// |m| more than this above γ does not adapt it, ms (libwebrtc kMaxAdaptOffsetMs; §5.4).
        var maximumAdaptOffset: Double
        /// The longest time one adaptation is credited for, µs (libwebrtc kMaxTimeDeltaMs = 100).
        var maximumAdaptIntervalUs: Int64
        /// How long the trend must stay above γ before over-use is signalled, µs (draft §5.4
        /// overuse_time_th = 10 ms; libwebrtc kOverUsingTimeThreshold).
        var overusingTimeThresholdUs: Int64
        /// Consecutive groups above γ needed as well (libwebrtc: overuse_counter_ > 1).
        var minimumOveruseCount: Int

        init(
            initialThreshold: Double = 12.5,
            minimumThreshold: Double = 6,
            maximumThreshold: Double = 600,
            increaseGain: Double = 0.0087,
            decreaseGain: Double = 0.039,
            maximumAdaptOffset: Double = 15,
            maximumAdaptIntervalUs: Int64 = 100_000,
            overusingTimeThresholdUs: Int64 = 10_000,
            minimumOveruseCount: Int = 2
        ) {
            self.initialThreshold = initialThreshold
            self.minimumThreshold = minimumThreshold
            self.maximumThreshold = maximumThreshold
            self.increaseGain = increaseGain
            self.decreaseGain = decreaseGain
            self.maximumAdaptOffset = maximumAdaptOffset
            self.maximumAdaptIntervalUs = maximumAdaptIntervalUs
            self.overusingTimeThresholdUs = overusingTimeThresholdUs
            self.minimumOveruseCount = minimumOveruseCount
        }

        func validate() throws(CongestionControlError) {
            guard minimumThreshold > 0, minimumThreshold <= initialThreshold, initialThreshold <= maximumThreshold
            else {
                throw CongestionControlError.invalid(
                    "threshold bounds need 0 < minimum ≤ initial ≤ maximum; got \(minimumThreshold), "
                        + "\(initialThreshold), \(maximumThreshold)"
                )
            }
            guard increaseGain >= 0, decreaseGain >= 0, maximumAdaptOffset >= 0, maximumAdaptIntervalUs >= 0,
                overusingTimeThresholdUs >= 0, minimumOveruseCount >= 1
            else {
                throw CongestionControlError.invalid(
                    "detector needs gains, offset and times ≥ 0 and an over-use count ≥ 1; got \(increaseGain), "
                        + "\(decreaseGain), \(maximumAdaptOffset), \(maximumAdaptIntervalUs) µs, "
                        + "\(overusingTimeThresholdUs) µs, \(minimumOveruseCount)"
                )
            }
        }
    }

    let configuration: Configuration
    /// The current verdict.
    private(set) var state: BandwidthUsage = .normal
    /// γ, in the modified trend's units (ms).
    private(set) var threshold: Double

    /// Send time the trend has been above γ, µs; nil when it is not.
    private var overusingTimeUs: Int64?
    private var overuseCount = 0
    private var previousSlope = 0.0
    private var lastAdaptationUs: Int64?

    init(configuration: Configuration = Configuration()) throws(CongestionControlError) {
        try configuration.validate()
        self.configuration = configuration
        self.threshold = configuration.initialThreshold
    }

    /// Judges one group: its modified trend and raw slope (from `TrendlineEstimator`), its send
    /// delta (µs, the time it stands for) and its arrival time (receiver's clock, µs, the clock
    /// γ adapts by).
    @discardableResult
    mutating func detect(
        modifiedTrend: Double,
        slope: Double,
        sendDeltaUs: Int64,
        arrivalTimeUs: Int64
    ) -> BandwidthUsage {
        if modifiedTrend > threshold {
            let over = overusingTimeUs.map { $0 + sendDeltaUs } ?? sendDeltaUs / 2
            overusingTimeUs = over
            overuseCount += 1
            if over > configuration.overusingTimeThresholdUs, overuseCount >= configuration.minimumOveruseCount,
                slope >= previousSlope
            {
                overusingTimeUs = 0
                overuseCount = 0
                state = .overusing
            }
        } else if modifiedTrend < -threshold {
            overusingTimeUs = nil
            overuseCount = 0
            state = .underusing
        } else {
            overusingTimeUs = nil
            overuseCount = 0
            state = .normal
        }
        previousSlope = slope
        adaptThreshold(to: modifiedTrend, at: arrivalTimeUs)
        return state
    }

    /// Back to the initial verdict and threshold, as after a stream timeout.
    mutating func reset() {
        state = .normal
        threshold = configuration.initialThreshold
        overusingTimeUs = nil
        overuseCount = 0
        previousSlope = 0
        lastAdaptationUs = nil
    }

    private mutating func adaptThreshold(to modifiedTrend: Double, at nowUs: Int64) {
        let last = lastAdaptationUs ?? nowUs
        lastAdaptationUs = nowUs
        let magnitude = abs(modifiedTrend)
        // A latency spike (a sudden capacity drop) must not teach γ to ignore the next one.
        if magnitude > threshold + configuration.maximumAdaptOffset { return }
        let gain = magnitude < threshold ? configuration.decreaseGain : configuration.increaseGain
        let elapsedMs = Double(min(max(nowUs - last, 0), configuration.maximumAdaptIntervalUs)) / 1000
        threshold += gain * (magnitude - threshold) * elapsedMs
        threshold = min(max(threshold, configuration.minimumThreshold), configuration.maximumThreshold)
    }
}
