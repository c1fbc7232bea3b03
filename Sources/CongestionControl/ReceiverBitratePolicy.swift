/// How one encoder's bitrate is chosen when several receivers each allow a different one.
///
/// One encoder feeds every destination (a packet is cut once and fanned out), so there is one
/// rate for all. The policy: follow the worst receiver, because a rate above what a receiver's
/// path carries turns into loss and frozen pictures there, but never go below `floor`, so one
/// receiver on a hopeless link cannot starve everyone else (that receiver keeps losing; the
/// others keep their quality). With no receiver reporting, the rate is `idle` (the configured
/// start rate). The result never exceeds `ceiling`.
///
/// With three receivers or more, one far below the rest is an outlier and is not followed
/// (`target(_:)` on an array): a receiver whose rate is under `outlierRatio` (½) of the median
/// receiver's would otherwise set the quality for everyone. It keeps its own pacer and its
/// NACKs; it gets the stream at the others' rate, as before congestion control it would have.
/// Decision D1 (Docs/congestion.md): follow the weakest receiver that is not an outlier.
public struct ReceiverBitratePolicy: Sendable, Hashable {
    /// Bits per second the combined target never goes below.
    var floor: Int
    /// Bits per second the combined target never goes above.
    var ceiling: Int
    /// The target when no receiver has an estimate.
    var idle: Int

    public init(floor: Int, ceiling: Int, idle: Int) throws(CongestionControlError) {
        guard floor > 0, floor <= ceiling, (floor...ceiling).contains(idle) else {
            throw CongestionControlError.invalid(
                "bitrate policy needs 0 < floor ≤ idle ≤ ceiling; got \(floor), \(idle), \(ceiling) bit/s"
            )
        }
        self.floor = floor
        self.ceiling = ceiling
        self.idle = idle
    }

    /// A receiver below this fraction of the median receiver's rate is an outlier (3 or more).
    var outlierRatio = 0.5

    /// The one target for all receivers' `targets` (bits per second each), outliers left out;
    /// sorts `targets` in place (no allocation).
    public func target(_ targets: inout [Int]) -> Int {
        guard let weakest = weakestFollowed(&targets) else { return idle }
        return min(max(weakest, floor), ceiling)
    }

    /// The lowest of `targets` that is not an outlier, unbounded (nil when empty): receivers at
    /// or above it are the ones the encoder follows. Sorts `targets` in place.
    public func weakestFollowed(_ targets: inout [Int]) -> Int? {
        guard !targets.isEmpty else { return nil }
        targets.sort()
        guard targets.count >= 3 else { return targets[0] }
        // The lower median: with [1, 1, 4, 4] the two low receivers are half the room, not
        // outliers.
        let median = targets[(targets.count - 1) / 2]
        return targets.first { Double($0) >= outlierRatio * Double(median) } ?? median
    }

    /// The one target for all receivers' `targets` (bits per second each): the worst, bounded.
    func target(_ targets: some Sequence<Int>) -> Int {
        guard let worst = targets.min() else { return idle }
        return min(max(worst, floor), ceiling)
    }
}
