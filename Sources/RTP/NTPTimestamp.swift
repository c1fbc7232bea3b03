/// A 64-bit NTP timestamp (RFC 3550 §4, RFC 5905): seconds since 1 January 1900 in the high 32
/// bits, the fraction of a second in the low 32 bits.
public struct NTPTimestamp: RawRepresentable, Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Seconds from the NTP epoch (1900) to the Unix epoch (1970).
    public static let unixEpochOffset: UInt64 = 2_208_988_800

    public var rawValue: UInt64

    public init(rawValue: UInt64) { self.rawValue = rawValue }

    public init(seconds: UInt32, fraction: UInt32) {
        self.rawValue = UInt64(seconds) << 32 | UInt64(fraction)
    }

    /// The NTP time of a wall-clock reading in nanoseconds since the Unix epoch. Seconds wrap
    /// modulo 2³² (NTP era 1 begins in 2036), as on the wire.
    public init(unixNanoseconds: UInt64) {
        let seconds = unixNanoseconds / 1_000_000_000 + Self.unixEpochOffset
        let fraction = ((unixNanoseconds % 1_000_000_000) << 32) / 1_000_000_000
        self.rawValue = seconds << 32 | fraction
    }

    public var seconds: UInt32 { UInt32(truncatingIfNeeded: rawValue >> 32) }
    public var fraction: UInt32 { UInt32(truncatingIfNeeded: rawValue) }

    /// The middle 32 bits (16.16 fixed point seconds): the compact form used for LSR in
    /// reception reports (RFC 3550 §6.4.1) and for round-trip computations.
    public var middle32: UInt32 { UInt32(truncatingIfNeeded: rawValue >> 16) }

    public static func < (lhs: NTPTimestamp, rhs: NTPTimestamp) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String { "NTP \(seconds).\(fraction)" }
}
