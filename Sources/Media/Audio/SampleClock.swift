/// Maps monotonic nanoseconds to positions counted in 48 kHz samples from an epoch (the first
/// time it sees), and back. The mixer aligns its sources and its output on these positions.
///
/// All arithmetic wraps or splits before multiplying, so any `UInt64` capture time a source
/// hands in maps to a position without trapping. 48000 / 10⁹ = 3 / 62500.
struct SampleClock {
    private(set) var epoch: UInt64?

    mutating func position(of time: UInt64) -> Int64 {
        let origin: UInt64
        if let epoch {
            origin = epoch
        } else {
            epoch = time
            origin = time
        }
        let nanoseconds = Int64(bitPattern: time &- origin)
        let whole = nanoseconds / 62_500
        let rest = nanoseconds % 62_500
        // Round half away from zero.
        let rounding: Int64 = rest >= 0 ? 31_250 : -31_250
        return whole * 3 + (rest * 3 + rounding) / 62_500
    }

    /// Wrapping arithmetic: a position derived from an absurd timestamp maps to an absurd time,
    /// never to a trap.
    func time(of position: Int64) -> UInt64 {
        let nanoseconds = (position / 3) &* 62_500 &+ position % 3 * 62_500 / 3
        return (epoch ?? 0) &+ UInt64(bitPattern: nanoseconds)
    }

    mutating func reset() {
        epoch = nil
    }
}
