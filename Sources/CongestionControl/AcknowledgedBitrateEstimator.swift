/// The rate the receiver actually got, from transport-wide feedback: R_hat of
/// draft-ietf-rmcat-gcc-02 §5.5, estimated as libwebrtc's `goog_cc/bitrate_estimator.cc` does
/// (the Bayesian one, not a plain windowed rate).
///
/// Received bytes are summed in back-to-back windows of the receiver's arrival clock: 500 ms
/// for the first sample (a stable start), 150 ms after. Each full window gives a sample; the
/// estimate is a precision-weighted mean of the old estimate and the sample. The sample's
/// variance grows with its distance from the estimate ((10 × |estimate − sample| / estimate)²),
/// so one odd window (a burst released by a queue, a pause in the encoder) moves the estimate
/// little, while the estimate's own variance grows by 5 per window, so a lasting change is
/// followed within a few windows. A gap longer than a window drops the partial sum: silence is
/// no sample (the sender was idle, not the path slow).
///
/// Which estimator: the draft measures R_hat over a 0.5–1 s window, Pion's `gcc` over a plain
/// 500 ms window, and newer libwebrtc releases default to a `RobustThroughputEstimator` (the
/// last ≥ 20 packets and ≥ 1 s of arrivals, minus the largest arrival gap). This is the
/// estimator libwebrtc's delay-based controller long ran with; it keeps no per-packet history
/// (a running sum and two numbers) and follows a drop about as fast as a 1 s window.
/// Decision D5 (Docs/congestion.md): libwebrtc's Bayesian estimator for R_hat.
struct AcknowledgedBitrateEstimator: Sendable, Hashable {
    struct Configuration: Sendable, Hashable {
        /// The first window, µs (libwebrtc kInitialRateWindowMs = 500).
        var initialWindowUs: Int64
        /// Every later window, µs (libwebrtc kRateWindowMs = 150).
        var windowUs: Int64
        /// Scale of a sample's uncertainty by its relative distance (libwebrtc: 10).
        var uncertaintyScale: Double
        /// The estimate's variance after the first sample (libwebrtc: 50).
        var initialVariance: Double
        /// Variance added to the estimate per window, as the rate may have moved (libwebrtc: 5).
        var variancePerWindow: Double

        init(
            initialWindowUs: Int64 = 500_000,
            windowUs: Int64 = 150_000,
            uncertaintyScale: Double = 10,
            initialVariance: Double = 50,
            variancePerWindow: Double = 5
        ) {
            self.initialWindowUs = initialWindowUs
            self.windowUs = windowUs
            self.uncertaintyScale = uncertaintyScale
            self.initialVariance = initialVariance
            self.variancePerWindow = variancePerWindow
        }

        func validate() throws(CongestionControlError) {
            guard initialWindowUs > 0, windowUs > 0, uncertaintyScale > 0, initialVariance > 0, variancePerWindow >= 0
            else {
                throw CongestionControlError.invalid(
                    "acknowledged rate needs windows, scale and variance > 0; got \(initialWindowUs) µs, "
                        + "\(windowUs) µs, \(uncertaintyScale), \(initialVariance), \(variancePerWindow)"
                )
            }
        }
    }

    let configuration: Configuration
    private var estimate: Double?
    private var variance: Double
    private var windowBytes = 0
    private var windowElapsedUs: Int64 = 0
    private var lastArrivalUs: Int64?

    init(configuration: Configuration = Configuration()) throws(CongestionControlError) {
        try configuration.validate()
        self.configuration = configuration
        self.variance = configuration.initialVariance
    }

    /// The acknowledged rate, bits per second; nil until the first window has filled.
    var bitrate: Int? { estimate.map { Int($0) } }

    /// Adds a received packet: its arrival time (receiver's clock, µs, in arrival order) and size.
    mutating func update(arrivalTimeUs: Int64, size: Int) {
        let window = estimate == nil ? configuration.initialWindowUs : configuration.windowUs
        guard let sample = addToWindow(arrivalTimeUs: arrivalTimeUs, size: size, windowUs: window) else { return }
        guard let current = estimate else {
            estimate = sample
            return
        }
        let uncertainty = configuration.uncertaintyScale * abs(current - sample) / max(current, 1)
        let sampleVariance = uncertainty * uncertainty
        let predictedVariance = variance + configuration.variancePerWindow
        estimate = (sampleVariance * current + predictedVariance * sample) / (sampleVariance + predictedVariance)
        variance = sampleVariance * predictedVariance / (sampleVariance + predictedVariance)
    }

    /// Adds a received packet; a lost one (no arrival) is no data.
    mutating func update(_ packet: PacketResult) {
        guard let arrival = packet.arrivalTimeUs else { return }
        update(arrivalTimeUs: arrival, size: packet.size)
    }

    /// Forgets everything.
    mutating func reset() {
        estimate = nil
        variance = configuration.initialVariance
        windowBytes = 0
        windowElapsedUs = 0
        lastArrivalUs = nil
    }

    /// Sums bytes into the window; returns the window's rate (bits per second) when this packet
    /// falls after its end. The packet itself opens the next window.
    private mutating func addToWindow(arrivalTimeUs: Int64, size: Int, windowUs: Int64) -> Double? {
        if let last = lastArrivalUs, arrivalTimeUs < last {
            // The receiver's clock went back: start over.
            lastArrivalUs = nil
            windowBytes = 0
            windowElapsedUs = 0
        }
        if let last = lastArrivalUs {
            windowElapsedUs += arrivalTimeUs - last
            if arrivalTimeUs - last > windowUs {
                windowBytes = 0
                windowElapsedUs %= windowUs
            }
        }
        lastArrivalUs = arrivalTimeUs
        var sample: Double?
        if windowElapsedUs >= windowUs {
            sample = Double(windowBytes * 8) * 1e6 / Double(windowUs)
            windowElapsedUs -= windowUs
            windowBytes = 0
        }
        windowBytes += size
        return sample
    }
}
