#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Nanoseconds on CLOCK_MONOTONIC: the one timeline capture times, pacing and RTP timestamps
/// are measured on. Wall-clock time can jump (NTP, the user); this cannot.
public enum MonotonicClock {
    public static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }
}
