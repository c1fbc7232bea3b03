/// A capture timestamp exactly as the capture process sent it: a value and its timescale, like a
/// CMTime (`value / timescale` seconds), so the host's clock rules see what the source reported and
/// can reject it (the seed's `CMTimeMake(frameTime += 1000, 1000)` arrives unchanged).
public struct IngestTimestamp: Sendable, Hashable, CustomStringConvertible {
    public var value: Int64
    /// Units per second; 0 means "no timestamp" (and then the value is 0 too).
    public var timescale: Int32

    public init(value: Int64, timescale: Int32) {
        self.value = value
        self.timescale = timescale
    }

    /// No timestamp: what hello and control messages carry.
    public static let none = IngestTimestamp(value: 0, timescale: 0)

    /// A timestamp in nanoseconds (timescale 10⁹).
    public static func nanoseconds(_ ns: UInt64) -> IngestTimestamp {
        IngestTimestamp(value: Int64(clamping: ns), timescale: 1_000_000_000)
    }

    public var isPresent: Bool { timescale != 0 }

    public var description: String { isPresent ? "\(value)/\(timescale)" : "none" }
}
