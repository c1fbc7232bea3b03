#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Turns the detector's verdicts into the delay-based rate A_hat (draft-ietf-rmcat-gcc-02 §5.5,
/// as libwebrtc's `remote_bitrate_estimator/aimd_rate_control.cc` does it on the send side).
///
/// Three states (§5.5): over-use → decrease, under-use → hold (queues drain; growing now would
/// refill them), normal → increase (from hold). A decrease always ends in hold, so the rate
/// only grows again once the detector says normal.
///
/// - Increase, far from convergence (no link capacity estimate): multiplicative, 8 % per second
///   of time since the last change (η = 1.08^min(Δt, 1 s), §5.5), at least 1 kbit/s.
/// - Increase, near convergence (the acknowledged rate is within the link capacity estimate's
///   band, see `LinkCapacityEstimator`): additive, one average packet per response time
///   (round trip + 100 ms for the detector to react), at least 4 kbit/s per second. A frame at
///   30 fps is split into packets of at most 1200 bytes; the average packet is the frame over
///   that count. The draft adds half a packet per response time; libwebrtc a whole one.
/// - Either way the rate grows only while below 1.5 × the acknowledged rate + 10 kbit/s
///   (§5.5 "A_hat(i) < 1.5 * R_hat(i)", libwebrtc's offset for low rates): an estimate the
///   sender never uses cannot be validated. A rate already above that limit is not pulled down;
///   only a decrease does that.
/// - Near a known capacity the rate passes the capacity only as far as the acknowledged rate
///   follows it (`nearCapacityLimitFactor` × acknowledged): an encoder that makes less than its
///   target (x264 under a short VBV buffer, a simple screen) would otherwise let the rate climb
///   to 1.5 × what it sends, far over the link, and the next hard picture spend it into the
///   queue. A sender that fills its rate still climbs past the capacity and finds a larger link
///   by its acknowledged rate; one that does not, by probes.
///   Decision D31 (Docs/congestion.md): near a capacity, 1.1 × acknowledged.
/// - Decrease: to β = 0.85 × the acknowledged rate (§5.5: a bit below what actually got through,
///   to drain the queue we built), or β × the capacity estimate if that is lower than the
///   current rate while β × acknowledged is not; never up.
///
/// All within `minimum`…`maximum`. Rates in bits per second, times monotonic µs.
struct AIMDRateController: Sendable, Hashable {
    enum State: String, Sendable, Hashable, CaseIterable {
        case increase, hold, decrease
    }

    struct Configuration: Sendable, Hashable {
        /// Bits per second the estimate stays within (this project's publisher defaults, as
        /// `LossBasedBitrateController`'s).
        var minimum: Int
        var maximum: Int
        /// The estimate before any feedback.
        var start: Int
        /// β, the fraction of the acknowledged rate a decrease goes to (draft §5.5 and libwebrtc
        /// kDefaultBackoffFactor: 0.85).
        var backoffFactor: Double
        /// Multiplicative growth per second (draft §5.5 η = 1.08; libwebrtc alpha).
        var increasePerSecond: Double
        /// The increase limit: factor × acknowledged + offset (libwebrtc: 1.5 and 10 kbit/s).
        var acknowledgedLimitFactor: Double
        var acknowledgedLimitOffset: Int
        /// Near a known capacity, how far over the acknowledged rate the rate may grow past the
        /// capacity (nil: no such limit, libwebrtc's behaviour).
        var nearCapacityLimitFactor: Double?
        /// Round-trip time until `setRoundTripTime` is called, µs (libwebrtc kDefaultRtt 200 ms).
        var defaultRoundTripUs: Int64
        /// Added to the round trip for the response time, µs: the detector's reaction (draft
        /// §5.5 response_time_ms = 100 + rtt_ms; libwebrtc the same).
        var detectorResponseUs: Int64
        /// Frame rate and packet size the additive step assumes (libwebrtc: 30 fps, 1200 bytes).
        var assumedFramesPerSecond: Double
        var assumedPacketSize: Int
        /// The least additive growth, bits per second per second (libwebrtc: 4000).
        var minimumAdditiveIncreasePerSecond: Double

        init(
            minimum: Int = 150_000,
            maximum: Int = 4_000_000,
            start: Int = 1_800_000,
            backoffFactor: Double = 0.85,
            increasePerSecond: Double = 0.08,
            acknowledgedLimitFactor: Double = 1.5,
            acknowledgedLimitOffset: Int = 10_000,
            nearCapacityLimitFactor: Double? = 1.1,
            defaultRoundTripUs: Int64 = 200_000,
            detectorResponseUs: Int64 = 100_000,
            assumedFramesPerSecond: Double = 30,
            assumedPacketSize: Int = 1200,
            minimumAdditiveIncreasePerSecond: Double = 4000
        ) {
            self.minimum = minimum
            self.maximum = maximum
            self.start = start
            self.backoffFactor = backoffFactor
            self.increasePerSecond = increasePerSecond
            self.acknowledgedLimitFactor = acknowledgedLimitFactor
            self.acknowledgedLimitOffset = acknowledgedLimitOffset
            self.nearCapacityLimitFactor = nearCapacityLimitFactor
            self.defaultRoundTripUs = defaultRoundTripUs
            self.detectorResponseUs = detectorResponseUs
            self.assumedFramesPerSecond = assumedFramesPerSecond
            self.assumedPacketSize = assumedPacketSize
            self.minimumAdditiveIncreasePerSecond = minimumAdditiveIncreasePerSecond
        }

        func validate() throws(CongestionControlError) {
            guard minimum > 0, minimum <= maximum, (minimum...maximum).contains(start) else {
                throw CongestionControlError.invalid(
                    "bitrate bounds need 0 < minimum ≤ start ≤ maximum; got \(minimum), \(start), \(maximum) bit/s"
                )
            }
            guard backoffFactor > 0, backoffFactor < 1, increasePerSecond >= 0, acknowledgedLimitFactor >= 1,
                acknowledgedLimitOffset >= 0, (nearCapacityLimitFactor ?? 1) >= 1
            else {
                throw CongestionControlError.invalid(
                    "rate control needs 0 < β < 1, growth ≥ 0, limit factors ≥ 1 and offset ≥ 0; got \(backoffFactor), "
                        + "\(increasePerSecond), \(acknowledgedLimitFactor), "
                        + "\(nearCapacityLimitFactor.map { "\($0)" } ?? "none"), \(acknowledgedLimitOffset)"
                )
            }
            guard defaultRoundTripUs >= 0, detectorResponseUs >= 0, defaultRoundTripUs + detectorResponseUs > 0,
                assumedFramesPerSecond > 0, assumedPacketSize > 0, minimumAdditiveIncreasePerSecond >= 0
            else {
                throw CongestionControlError.invalid(
                    "additive increase needs a response time > 0, a frame rate and packet size > 0; got "
                        + "\(defaultRoundTripUs) + \(detectorResponseUs) µs, \(assumedFramesPerSecond) fps, "
                        + "\(assumedPacketSize) bytes"
                )
            }
        }
    }

    let configuration: Configuration
    /// A_hat, bits per second.
    private(set) var bitrate: Double
    private(set) var state: State = .hold
    /// The capacity seen at past over-uses.
    private(set) var linkCapacity = LinkCapacityEstimator()
    /// The round-trip time the response time is built on, µs.
    private(set) var roundTripUs: Int64
    /// Until when an acknowledged rate above the capacity's upper bound resets nothing, µs
    /// (`setLinkCapacity`).
    private var capacityHeldUntilUs: Int64 = .min
    private var latestAcknowledged: Double
    private var lastChangeUs: Int64?

    init(configuration: Configuration = Configuration()) throws(CongestionControlError) {
        try configuration.validate()
        self.configuration = configuration
        self.bitrate = Double(configuration.start)
        self.latestAcknowledged = Double(configuration.start)
        self.roundTripUs = configuration.defaultRoundTripUs
    }

    /// Sets the round-trip time (µs) that the response time and the decrease interval use.
    mutating func setRoundTripTime(_ roundTripUs: Int64) {
        self.roundTripUs = max(0, roundTripUs)
    }

    /// Applies one verdict at `nowUs` given the acknowledged rate (bits per second; nil when
    /// none is known yet, then the last known one counts). Returns the new rate. A decrease
    /// uses `backoffFactor` when given, else the configuration's β.
    @discardableResult
    mutating func update(
        _ usage: BandwidthUsage,
        acknowledgedBitrate: Int?,
        at nowUs: Int64,
        backoffFactor: Double? = nil
    ) -> Int {
        if let acknowledged = acknowledgedBitrate { latestAcknowledged = Double(acknowledged) }
        let acknowledged = latestAcknowledged
        switch usage {
        case .normal:
            if state == .hold {
                lastChangeUs = nowUs
                state = .increase
            }
        case .overusing: state = .decrease
        case .underusing: state = .hold
        }
        var newBitrate = bitrate
        switch state {
        case .hold: break
        case .increase:
            if acknowledged > linkCapacity.upperBound, nowUs >= capacityHeldUntilUs { linkCapacity.reset() }
            var limit =
                configuration.acknowledgedLimitFactor * acknowledged + Double(configuration.acknowledgedLimitOffset)
            if let capacity = linkCapacity.estimate, let factor = configuration.nearCapacityLimitFactor {
                limit = min(limit, max(capacity, factor * acknowledged))
            }
            if bitrate < limit {
                let increase =
                    linkCapacity.estimate == nil ? multiplicativeIncrease(at: nowUs) : additiveIncrease(at: nowUs)
                newBitrate = min(bitrate + increase, limit)
            }
            lastChangeUs = nowUs
        case .decrease:
            let beta = backoffFactor ?? configuration.backoffFactor
            var decreased = beta * acknowledged
            if decreased > bitrate, let capacity = linkCapacity.estimate {
                decreased = beta * capacity
            }
            if decreased < bitrate { newBitrate = decreased }
            // Far below the capacity seen before: the path changed, start a new estimate.
            if acknowledged < linkCapacity.lowerBound { linkCapacity.reset() }
            linkCapacity.overuseDetected(acknowledgedBitrate: acknowledged)
            state = .hold
            lastChangeUs = nowUs
        }
        bitrate = clamp(newBitrate)
        return Int(bitrate)
    }

    /// Whether an over-use may decrease the rate again at `nowUs` (libwebrtc
    /// TimeToReduceFurther): once per round trip (10–200 ms) since the last change, or at once
    /// when the acknowledged rate fell below half the estimate.
    func mayReduceFurther(at nowUs: Int64, acknowledgedBitrate: Double) -> Bool {
        let interval = min(max(roundTripUs, 10_000), 200_000)
        guard let last = lastChangeUs else { return true }
        return nowUs - last >= interval || acknowledgedBitrate < 0.5 * bitrate
    }

    /// Sets the estimate outright (a decrease without an acknowledged rate).
    mutating func setEstimate(_ bitsPerSecond: Double, at nowUs: Int64) {
        bitrate = clamp(bitsPerSecond)
        lastChangeUs = nowUs
    }

    /// Forgets the capacity seen at past over-uses (a probe found the link larger).
    mutating func resetLinkCapacity() {
        linkCapacity.reset()
        capacityHeldUntilUs = .min
    }

    /// Starts the capacity estimate over from a rate the link was measured to carry
    /// (bits per second), which an acknowledged rate above it cannot reset before `heldUntilUs`:
    /// R_hat lags a capacity drop by up to a second.
    /// Decision D11 (Docs/congestion.md): a drain's measured rate is the capacity, held 1 s.
    mutating func setLinkCapacity(_ bitsPerSecond: Double, heldUntilUs: Int64) {
        linkCapacity.restart(at: bitsPerSecond)
        capacityHeldUntilUs = heldUntilUs
    }

    /// The additive growth rate near convergence, bits per second per second.
    var additiveIncreasePerSecond: Double {
        let frameBits = bitrate / configuration.assumedFramesPerSecond
        let packetBits = Double(configuration.assumedPacketSize * 8)
        let packetsPerFrame = max((frameBits / packetBits).rounded(.up), 1)
        let averagePacketBits = frameBits / packetsPerFrame
        let responseSeconds = Double(roundTripUs + configuration.detectorResponseUs) / 1e6
        return max(configuration.minimumAdditiveIncreasePerSecond, averagePacketBits / responseSeconds)
    }

    private func multiplicativeIncrease(at nowUs: Int64) -> Double {
        var factor = 1 + configuration.increasePerSecond
        if let last = lastChangeUs {
            factor = pow(factor, min(Double(max(nowUs - last, 0)) / 1e6, 1))
        }
        return max(bitrate * (factor - 1), 1000)
    }

    private func additiveIncrease(at nowUs: Int64) -> Double {
        guard let last = lastChangeUs else { return 0 }
        return additiveIncreasePerSecond * Double(max(nowUs - last, 0)) / 1e6
    }

    private func clamp(_ value: Double) -> Double {
        min(max(value, Double(configuration.minimum)), Double(configuration.maximum))
    }
}
