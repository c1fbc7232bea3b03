#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Maps the monotonic capture clock onto wall-clock NTP time, from one pair of readings taken
/// together at start-up.
///
/// Sender reports must state the NTP time and the RTP time of the *same* instant (RFC 3550
/// §6.4.1), and both must come from the capture clock the media timestamps come from, not
/// from the moment the report is sent; otherwise receivers line audio up against video
/// wrongly. Deriving NTP time from the monotonic clock through this one anchor also keeps a
/// wall-clock step (NTP daemon, user) from shifting the reports against the media.
public struct NTPClock: Sendable, Hashable {
    /// The monotonic reading (ns) of the anchor.
    public let monotonicReference: UInt64
    /// The wall-clock reading of the anchor, in nanoseconds since the Unix epoch.
    public let unixNanosecondsReference: UInt64

    public init(monotonicReference: UInt64, unixNanosecondsReference: UInt64) {
        self.monotonicReference = monotonicReference
        self.unixNanosecondsReference = unixNanosecondsReference
    }

    /// An anchor from CLOCK_MONOTONIC and CLOCK_REALTIME read back to back.
    public static func system() -> NTPClock {
        var monotonic = timespec()
        var realtime = timespec()
        clock_gettime(CLOCK_MONOTONIC, &monotonic)
        clock_gettime(CLOCK_REALTIME, &realtime)
        return NTPClock(
            monotonicReference: UInt64(monotonic.tv_sec) * 1_000_000_000 + UInt64(monotonic.tv_nsec),
            unixNanosecondsReference: UInt64(realtime.tv_sec) * 1_000_000_000 + UInt64(realtime.tv_nsec)
        )
    }

    /// The NTP time of the monotonic instant `monotonic` (ns).
    public func timestamp(atMonotonic monotonic: UInt64) -> NTPTimestamp {
        let unix =
            monotonic >= monotonicReference
            ? unixNanosecondsReference &+ (monotonic - monotonicReference)
            : unixNanosecondsReference &- (monotonicReference - monotonic)
        return NTPTimestamp(unixNanoseconds: unix)
    }
}
