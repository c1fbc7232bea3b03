/// Turns a capture time on the monotonic clock (nanoseconds) into an RTP timestamp:
///
///     ts = base + (capture − origin) × clockRate / 10⁹   (mod 2³²)
///
/// Audio (48 kHz) and video (90 kHz) clocks built with the same `origin` share one timeline,
/// so a receiver can line them up through the sender reports.
///
/// The product `(capture − origin) × clockRate` overflows 64 bits after about 2.3 days at
/// 90 kHz, so it is never formed: the elapsed time is split into whole seconds and the
/// nanosecond remainder, `q × rate + ⌊(r × rate + 10⁹/2) / 10⁹⌋`, where `r × rate < 10⁹ × 10⁹`
/// fits in 64 bits and `q × rate` may wrap because only its value mod 2³² matters. The result is
/// the real quotient rounded to the nearest tick (not floored): a 30 fps source stamped in whole
/// nanoseconds (33 333 333 ns apart) steps by exactly 3000 every frame rather than 2999/3000/3001.
/// Two capture times at least `nanosecondsPerTick` apart still always map to different timestamps.
public struct RTPClock: Sendable, Hashable {
    public let clockRate: UInt32
    /// The session's time origin (t0) on the monotonic clock, in nanoseconds.
    public let origin: UInt64
    /// The RTP timestamp at `origin`.
    public let timestampBase: UInt32

    public init(clockRate: UInt32, origin: UInt64, timestampBase: UInt32) throws(RTPError) {
        guard (1...RTPStreamState.maximumClockRate).contains(clockRate) else {
            throw RTPError(
                .invalidConfiguration,
                "clock rate \(clockRate) Hz is outside 1–\(RTPStreamState.maximumClockRate) Hz"
            )
        }
        self.init(checkedClockRate: clockRate, origin: origin, timestampBase: timestampBase)
    }

    init(checkedClockRate: UInt32, origin: UInt64, timestampBase: UInt32) {
        self.clockRate = checkedClockRate
        self.origin = origin
        self.timestampBase = timestampBase
    }

    /// The smallest spacing in nanoseconds that always advances the timestamp by at least one
    /// tick: ⌈10⁹ / clockRate⌉ (11,112 ns at 90 kHz).
    public var nanosecondsPerTick: UInt64 {
        let rate = UInt64(clockRate)
        return (1_000_000_000 + rate - 1) / rate
    }

    /// The RTP timestamp of a capture at `captureTime`. Captures before the origin count
    /// backwards from the base (floor division, so the mapping stays monotonic across t0).
    public func timestamp(at captureTime: UInt64) -> UInt32 {
        if captureTime >= origin {
            let ticks = Self.nearestTicks(captureTime - origin, rate: UInt64(clockRate))
            return timestampBase &+ UInt32(truncatingIfNeeded: ticks)
        }
        // Before the origin, symmetric: the same distance counts back by the same ticks.
        let ticks = Self.nearestTicks(origin - captureTime, rate: UInt64(clockRate))
        return timestampBase &- UInt32(truncatingIfNeeded: ticks)
    }

    /// Ticks in `nanoseconds` (mod 2⁶⁴), rounded to the nearest (halves up).
    static func nearestTicks(_ nanoseconds: UInt64, rate: UInt64) -> UInt64 {
        let seconds = nanoseconds / 1_000_000_000
        let remainder = nanoseconds % 1_000_000_000
        let scaled = remainder * rate + 500_000_000  // < 10⁹ × 10⁹ + 10⁹ < 2⁶⁴
        return seconds &* rate &+ scaled / 1_000_000_000
    }
}
