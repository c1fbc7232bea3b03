#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The loss-based half of Google Congestion Control (draft-ietf-rmcat-gcc-02 §6): the video
/// bitrate one receiver's reports allow.
///
/// Each receiver report carries the fraction of packets lost since the previous one (RFC 3550
/// §6.4.1). §6 of the draft turns it into a sending rate As:
///
/// - loss above 10 %: As ← As × (1 − 0.5 × loss), the path is congested;
/// - loss from 2 % to 10 %: As holds, that much loss may not be congestion;
/// - loss below 2 %: As grows. The draft grows it 5 % per report; this controller grows it
///   8 % per second of elapsed time instead (compounded), so the ramp does not depend on how
///   often a receiver happens to report.
///
/// Two guards the draft leaves to implementations: a decrease happens at most once per
/// `decreaseInterval` (several reports about one loss burst must not compound), and the time
/// an increase is credited for is capped by `maximumIncreaseInterval` (a receiver silent for a
/// minute must not unlock a jump). A receiver's REMB (draft-alvestrand-rmcat-remb) caps the
/// result, as Ar caps As in the draft; the estimate is pulled down to the cap too, so it climbs
/// from there when the cap lifts instead of jumping. Times are monotonic nanoseconds.
/// Decision D4 (Docs/congestion.md): the increase is per second of elapsed time, not per report.
struct LossBasedBitrateController: Sendable, Hashable {
    typealias Configuration = CongestionConfiguration.LossBased

    let configuration: Configuration
    /// The loss-based estimate As, bits per second, within the configured bounds.
    private(set) var estimate: Double
    /// The receiver's latest REMB, bits per second, or nil if it sent none.
    private(set) var receiverCap: UInt64?
    private var lastReport: UInt64?
    private var lastDecrease: UInt64?

    init(configuration: Configuration = Configuration()) throws(CongestionControlError) {
        try configuration.validate()
        self.configuration = configuration
        self.estimate = Double(configuration.start)
    }

    /// What this receiver allows, bits per second: the estimate under the REMB cap, never
    /// below the minimum.
    var target: Int {
        let capped = receiverCap.map { min(estimate, Double($0)) } ?? estimate
        return Int(max(capped, Double(configuration.minimum)))
    }

    /// Feeds one report's fraction lost (0…1, `fractionLost / 256` of a report block) that
    /// arrived at `now`.
    mutating func reportLoss(_ fractionLost: Double, at now: UInt64) {
        let loss = min(max(fractionLost, 0), 1)
        let elapsed = lastReport.map { now > $0 ? now - $0 : 0 } ?? 0
        lastReport = now
        if loss > configuration.highLoss {
            if let last = lastDecrease, now >= last, now - last < configuration.decreaseInterval { return }
            estimate *= 1 - 0.5 * loss
            lastDecrease = now
        } else if loss < configuration.lowLoss {
            let seconds = Double(min(elapsed, configuration.maximumIncreaseInterval)) / 1e9
            estimate *= pow(1 + configuration.increasePerSecond, seconds)
        }
        clamp()
    }

    /// Applies a REMB: the estimate will not exceed `bitsPerSecond` until a higher one arrives.
    mutating func reportReceiverEstimate(_ bitsPerSecond: UInt64) {
        receiverCap = bitsPerSecond
        clamp()
    }

    /// A probe measured `bitsPerSecond` on the path: the estimate rises to it at once instead
    /// of growing there at 8 %/s (libwebrtc's `SetSendBitrate` on a probe result), under the
    /// REMB cap and the bounds as always. Never lowers the estimate.
    mutating func raise(to bitsPerSecond: Int) {
        estimate = max(estimate, Double(bitsPerSecond))
        clamp()
    }

    private mutating func clamp() {
        if let cap = receiverCap { estimate = min(estimate, Double(cap)) }
        estimate = min(max(estimate, Double(configuration.minimum)), Double(configuration.maximum))
    }
}

extension CongestionConfiguration {
    /// The bounds both estimates keep, the start rate, and the loss-based controller's thresholds
    /// (draft-ietf-rmcat-gcc-02 §6; `FeedbackConfiguration.bitrate` in the publisher).
    public struct LossBased: Sendable, Hashable {
        /// Bits per second the estimate never goes below or above.
        public var minimum: Int
        public var maximum: Int
        /// The estimate before any report.
        public var start: Int
        /// Below this fraction lost the rate grows (draft: 2 %).
        public var lowLoss: Double
        /// Above this fraction lost the rate drops (draft: 10 %).
        public var highLoss: Double
        /// Growth per second below `lowLoss` (0.08 = 8 %/s).
        public var increasePerSecond: Double
        /// Shortest time between two decreases, ns.
        public var decreaseInterval: UInt64
        /// Longest time one increase is credited for, ns.
        public var maximumIncreaseInterval: UInt64

        public init(
            minimum: Int = 150_000,
            maximum: Int = 4_000_000,
            start: Int = 1_800_000,
            lowLoss: Double = 0.02,
            highLoss: Double = 0.10,
            increasePerSecond: Double = 0.08,
            decreaseInterval: UInt64 = 300_000_000,
            maximumIncreaseInterval: UInt64 = 2_000_000_000
        ) {
            self.minimum = minimum
            self.maximum = maximum
            self.start = start
            self.lowLoss = lowLoss
            self.highLoss = highLoss
            self.increasePerSecond = increasePerSecond
            self.decreaseInterval = decreaseInterval
            self.maximumIncreaseInterval = maximumIncreaseInterval
        }

        func validate() throws(CongestionControlError) {
            guard minimum > 0, minimum <= maximum, (minimum...maximum).contains(start) else {
                throw CongestionControlError.invalid(
                    "bitrate bounds need 0 < minimum ≤ start ≤ maximum; got \(minimum), \(start), \(maximum) bit/s"
                )
            }
            guard lowLoss >= 0, lowLoss <= highLoss, highLoss <= 1, increasePerSecond >= 0 else {
                throw CongestionControlError.invalid(
                    "loss thresholds need 0 ≤ low ≤ high ≤ 1 and a growth ≥ 0; got \(lowLoss), \(highLoss), \(increasePerSecond)"
                )
            }
        }
    }
}
