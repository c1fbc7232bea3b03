/// Durations of a per-frame step (frame in → last packet out, the encoder call) in fixed
/// 10 µs buckets up to 100 ms, so percentiles cost nothing on the media path: one increment per
/// frame, 40 KB allocated once, whatever the run's length. Longer samples land in the last
/// bucket; the exact maximum is kept beside it.
public struct LatencyHistogram: Sendable {
    static let bucketNanoseconds: UInt64 = 10_000
    static let bucketCount = 10_000

    private var buckets = [UInt32](repeating: 0, count: bucketCount)
    private(set) var count = 0
    private(set) var maximum: UInt64 = 0

    mutating func record(nanoseconds: UInt64) {
        let index = min(Int(nanoseconds / Self.bucketNanoseconds), Self.bucketCount - 1)
        buckets[index] &+= 1
        count += 1
        maximum = max(maximum, nanoseconds)
    }

    /// Adds `other`'s samples (frames the media thread sent itself beside those the sender
    /// thread sent).
    public mutating func merge(_ other: LatencyHistogram) {
        guard other.count > 0 else { return }
        for index in buckets.indices { buckets[index] &+= other.buckets[index] }
        count += other.count
        maximum = max(maximum, other.maximum)
    }

    /// The upper edge of the bucket holding the `fraction` quantile (nearest-rank), in ms; nil
    /// before the first sample. The maximum caps it, so a tiny sample set reports real values.
    public func quantileMilliseconds(_ fraction: Double) -> Double? {
        guard count > 0 else { return nil }
        let rank = max(1, Int((fraction * Double(count)).rounded(.up)))
        var seen = 0
        for (index, n) in buckets.enumerated() {
            seen += Int(n)
            if seen >= rank {
                let edge = UInt64(index + 1) * Self.bucketNanoseconds
                return Double(min(edge, maximum)) / 1e6
            }
        }
        return Double(maximum) / 1e6
    }

    /// p50, p99 and max in ms, for the final statistics.
    public var summary: LatencySummary? {
        guard let p50 = quantileMilliseconds(0.5), let p99 = quantileMilliseconds(0.99) else { return nil }
        return LatencySummary(p50: p50, p99: p99, max: Double(maximum) / 1e6)
    }
}

/// Percentiles of a per-frame duration, in milliseconds.
public struct LatencySummary: Sendable, Codable, Equatable {
    public var p50: Double
    public var p99: Double
    public var max: Double
}
