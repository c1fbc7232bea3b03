/// How one encoder's bitrate is chosen when several receivers each allow a different one.
///
/// One encoder feeds every destination (a packet is cut once and fanned out), so there is one
/// rate for all. The policy: follow the worst receiver, because a rate above what a receiver's
/// path carries turns into loss and frozen pictures there, but never go below `floor`, so one
/// receiver on a hopeless link cannot starve everyone else (that receiver keeps losing; the
/// others keep their quality). With no receiver reporting, the rate is `idle` (the configured
/// start rate). The result never exceeds `ceiling`.
public struct ReceiverBitratePolicy: Sendable, Hashable {
    /// Bits per second the combined target never goes below.
    public var floor: Int
    /// Bits per second the combined target never goes above.
    public var ceiling: Int
    /// The target when no receiver has an estimate.
    public var idle: Int

    public init(floor: Int, ceiling: Int, idle: Int) throws(RTPError) {
        guard floor > 0, floor <= ceiling, (floor...ceiling).contains(idle) else {
            throw RTPError(
                .invalidConfiguration,
                "bitrate policy needs 0 < floor ≤ idle ≤ ceiling; got \(floor), \(idle), \(ceiling) bit/s"
            )
        }
        self.floor = floor
        self.ceiling = ceiling
        self.idle = idle
    }

    /// The one target for all receivers' `targets` (bits per second each).
    public func target(_ targets: some Sequence<Int>) -> Int {
        guard let worst = targets.min() else { return idle }
        return min(max(worst, floor), ceiling)
    }
}
