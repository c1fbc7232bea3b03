/// What the link carried when it last became congested: a running mean and normalised variance
/// of the acknowledged rate at each over-use (draft-ietf-rmcat-gcc-02 §5.5's "average max
/// bitrate", as libwebrtc's `goog_cc/link_capacity_estimator.cc` keeps it).
///
/// The rate controller uses it to tell "far from convergence" from "near it": while an
/// estimate exists and the acknowledged rate stays under mean + 3 deviations, the capacity is
/// probably where it was at the last decrease, so the rate grows additively (carefully) toward
/// it; once the acknowledged rate rises above that band, or falls below mean − 3 deviations at
/// a decrease, the path has changed, the estimate is dropped and the rate grows
/// multiplicatively again (§5.5: "If R_hat(i) increases above three standard deviations of the
/// average max bitrate, we assume that the current congestion level has changed").
///
/// libwebrtc keeps the numbers in kbit/s, and the variance is normalised by the mean in those
/// units (0.4 ≈ 14 kbit/s of deviation at 500 kbit/s); so does this type, to keep its bounds.
struct LinkCapacityEstimator: Sendable, Hashable {
    /// Weight of a new sample at an over-use (libwebrtc OnOveruseDetected: 0.05).
    static let overuseSampleWeight = 0.05
    /// The normalised variance's bounds (libwebrtc: 0.4 and 2.5).
    static let minimumNormalizedVariance = 0.4
    static let maximumNormalizedVariance = 2.5

    /// The mean capacity, kbit/s; nil when there is no estimate (at the start, after a reset).
    private(set) var estimateKbps: Double?
    /// Variance normalised by the mean, kbit/s.
    private(set) var normalizedVariance = LinkCapacityEstimator.minimumNormalizedVariance

    init() {}

    /// The estimate in bits per second, if any.
    var estimate: Double? { estimateKbps.map { $0 * 1000 } }

    /// Mean + 3 standard deviations, bits per second; infinite without an estimate.
    var upperBound: Double {
        guard let mean = estimateKbps else { return .infinity }
        return (mean + 3 * deviationKbps(mean)) * 1000
    }

    /// Mean − 3 standard deviations (at least 0), bits per second; 0 without an estimate.
    var lowerBound: Double {
        guard let mean = estimateKbps else { return 0 }
        return max(0, mean - 3 * deviationKbps(mean)) * 1000
    }

    /// Records the acknowledged rate (bits per second) at an over-use.
    mutating func overuseDetected(acknowledgedBitrate: Double) {
        update(sampleKbps: acknowledgedBitrate / 1000, weight: Self.overuseSampleWeight)
    }

    /// Drops the estimate: the path changed.
    mutating func reset() {
        estimateKbps = nil
    }

    /// Starts the estimate over from a rate the link was measured to carry, bits per second.
    mutating func restart(at bitsPerSecond: Double) {
        estimateKbps = bitsPerSecond / 1000
        normalizedVariance = Self.minimumNormalizedVariance
    }

    private mutating func update(sampleKbps: Double, weight: Double) {
        let mean = estimateKbps.map { (1 - weight) * $0 + weight * sampleKbps } ?? sampleKbps
        estimateKbps = mean
        let error = mean - sampleKbps
        normalizedVariance = (1 - weight) * normalizedVariance + weight * error * error / max(mean, 1)
        normalizedVariance = min(
            max(normalizedVariance, Self.minimumNormalizedVariance),
            Self.maximumNormalizedVariance
        )
    }

    private func deviationKbps(_ mean: Double) -> Double {
        (normalizedVariance * mean).squareRoot()
    }
}
