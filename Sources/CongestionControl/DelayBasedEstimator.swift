/// The delay-based half of Google Congestion Control on the send side
/// (draft-ietf-rmcat-gcc-02 §5, laid out as libwebrtc's `goog_cc/delay_based_bwe.cc`): feedback
/// in, a rate the path carries without building a queue out.
///
/// Per feedback message: the received packets, in arrival order, go to the acknowledged-rate
/// estimator (R_hat) and to the grouping (§5.2); each completed group pair goes through the
/// trendline (§5.3's role) and the over-use detector (§5.4). Then the rate controller (§5.5)
/// acts on the detector's last verdict:
///
/// - over-use: a decrease to β × R_hat, at most once per round trip (10–200 ms) unless R_hat
///   fell below half the estimate. Before any R_hat exists the estimate halves instead, at every
///   message that ends in over-use: libwebrtc's InitialTimeToReduceFurther tests half the
///   estimate minus 1 bit/s against "below half the estimate", which always passes;
/// - otherwise: hold or increase.
///
/// With the standing-queue detector on (`standingQueue`), an over-use while no queue stands
/// (at most `staleTrendQueueLimitUs`) holds instead: the trend is a slope over the last 20
/// groups, and the bump that lifted it has drained.
///
/// A gap of more than 2 s between feedback messages (libwebrtc kStreamTimeOut) resets the
/// grouping, trendline and detector: deltas across a pause say nothing about queues.
///
/// The sort into arrival order works in a buffer reserved at init (`maximumFeedbackPackets`),
/// so steady-state updates allocate nothing; a larger message grows it once.
struct DelayBasedEstimator: Sendable, Hashable {
    struct Configuration: Sendable, Hashable {
        var rateControl: AIMDRateController.Configuration
        var grouping: InterArrivalGrouping.Configuration
        var trendline: TrendlineEstimator.Configuration
        var detector: OveruseDetector.Configuration
        var acknowledged: AcknowledgedBitrateEstimator.Configuration
        /// Feedback this much later than the previous resets the delay state, µs (libwebrtc
        /// kStreamTimeOut = 2 s).
        var streamTimeoutUs: Int64
        /// Packets per feedback message the sort buffer is reserved for (a transport-cc message
        /// covers at most a few hundred at these rates).
        var maximumFeedbackPackets: Int
        /// Once a standing queue has drained, the estimate resumes at this fraction of the
        /// highest link rate seen while it drained (the lower of R_hat and the arrival rate: the
        /// link's own, as the queue kept it busy; this project's, Docs/congestion.md "After a
        /// capacity drop").
        var drainResumeFactor: Double
        /// β of the decrease a standing queue just above `StandingQueueDetector.backoffLimitUs`
        /// calls for: gentler than the detector's, as it comes earlier (a 25 ms queue, not a deep
        /// one); a deeper queue takes a lower β (`StandingQueueDetector.backoffFactor`; this
        /// project's, Docs/congestion.md "Early back-off").
        var queueBackoffFactor: Double

        init(
            rateControl: AIMDRateController.Configuration = .init(),
            grouping: InterArrivalGrouping.Configuration = .init(),
            trendline: TrendlineEstimator.Configuration = .init(),
            detector: OveruseDetector.Configuration = .init(),
            acknowledged: AcknowledgedBitrateEstimator.Configuration = .init(),
            streamTimeoutUs: Int64 = 2_000_000,
            maximumFeedbackPackets: Int = 1024,
            drainResumeFactor: Double = 0.9,
            queueBackoffFactor: Double = 0.95
        ) {
            self.rateControl = rateControl
            self.grouping = grouping
            self.trendline = trendline
            self.detector = detector
            self.acknowledged = acknowledged
            self.streamTimeoutUs = streamTimeoutUs
            self.maximumFeedbackPackets = maximumFeedbackPackets
            self.drainResumeFactor = drainResumeFactor
            self.queueBackoffFactor = queueBackoffFactor
        }
    }

    /// What one feedback message led to.
    struct Update: Sendable, Hashable {
        /// The delay-based estimate A_hat, bits per second.
        var bitrate: Int
        /// The detector's verdict after this message.
        var state: BandwidthUsage
        /// The modified trend the detector last judged (0 before it judged any).
        var trend: Double
        /// The detector's adaptive threshold γ.
        var threshold: Double
        /// R_hat, bits per second; nil until the first window filled.
        var acknowledgedBitrate: Int?

        init(bitrate: Int, state: BandwidthUsage, trend: Double, threshold: Double, acknowledgedBitrate: Int?) {
            self.bitrate = bitrate
            self.state = state
            self.trend = trend
            self.threshold = threshold
            self.acknowledgedBitrate = acknowledgedBitrate
        }
    }

    let configuration: Configuration
    private(set) var rateControl: AIMDRateController
    private(set) var grouping: InterArrivalGrouping
    private(set) var trendline: TrendlineEstimator
    private(set) var detector: OveruseDetector
    private(set) var acknowledged: AcknowledgedBitrateEstimator
    /// nil: GCC alone; set: the standing-queue drain (`StandingQueueDetector`) on top.
    var standingQueue: StandingQueueDetector?
    /// Set by the sender while the queue its latest probe built may show in feedback: over-use
    /// then holds the estimate instead of lowering it, and a standing queue is no reason for the
    /// early back-off (the probe sent above the link on purpose; measured at 1 Mbit/s, a decrease
    /// after every probe every 2 s, from an R_hat that lagged the last one, held the link at
    /// 79–83 %). The standing-queue drain still applies, and a queue over `probeQueueLimitUs` is
    /// not excused.
    var probeQueue = false
    /// Early back-offs taken so far (`StandingQueueDetector.takeBackoff`).
    private(set) var queueBackoffs = 0
    /// While a standing queue drains: the rate that drains it, below the controller's.
    private(set) var drainCap: Int?
    /// What the link carried during the current drain, and when the drain began.
    private var drainMeter: BusyLinkMeter?
    private var drainStartUs: Int64?
    /// Since when the acknowledged rate has stayed under `applicationLimitedRatio` × the
    /// estimate (the sender sends less than it may), µs; nil while it does not.
    private(set) var applicationLimitedSinceUs: Int64?
    /// When a probe last found room beyond the known capacity, unconfirmed yet
    /// (`applyProbeResult`).
    private var roomFoundUs: Int64?
    private var lastFeedbackUs: Int64?
    private var received: [PacketResult] = []

    init(configuration: Configuration = Configuration()) throws(CongestionControlError) {
        guard configuration.streamTimeoutUs > 0, configuration.maximumFeedbackPackets > 0,
            configuration.drainResumeFactor > 0, configuration.drainResumeFactor <= 1,
            configuration.queueBackoffFactor > 0, configuration.queueBackoffFactor <= 1
        else {
            throw CongestionControlError.invalid(
                "estimator needs a stream timeout and a feedback size > 0, a drain resume factor and a queue back-off "
                    + "factor in (0, 1]; got \(configuration.streamTimeoutUs) µs, "
                    + "\(configuration.maximumFeedbackPackets), \(configuration.drainResumeFactor), "
                    + "\(configuration.queueBackoffFactor)"
            )
        }
        self.configuration = configuration
        self.rateControl = try AIMDRateController(configuration: configuration.rateControl)
        self.grouping = try InterArrivalGrouping(configuration: configuration.grouping)
        self.trendline = try TrendlineEstimator(configuration: configuration.trendline)
        self.detector = try OveruseDetector(configuration: configuration.detector)
        self.acknowledged = try AcknowledgedBitrateEstimator(configuration: configuration.acknowledged)
        received.reserveCapacity(configuration.maximumFeedbackPackets)
    }

    /// The current estimate, bits per second (under the drain cap while a queue drains).
    var bitrate: Int { min(Int(rateControl.bitrate), drainCap ?? .max) }

    /// Sets the round-trip time (µs) the rate controller paces its decreases and additive
    /// increase by (default 200 ms until called).
    mutating func setRoundTripTime(_ roundTripUs: Int64) {
        rateControl.setRoundTripTime(roundTripUs)
    }

    /// Feeds one transport-wide feedback message that arrived at `nowUs` (sender's clock, µs).
    /// Lost packets (nil arrival) are skipped; a message with nothing received changes nothing.
    mutating func update(with results: some Collection<PacketResult>, at nowUs: Int64) -> Update {
        sortReceived(results)
        guard !received.isEmpty else { return currentUpdate }
        if let last = lastFeedbackUs, nowUs - last > configuration.streamTimeoutUs {
            grouping.reset()
            trendline.reset()
            detector.reset()
        }
        lastFeedbackUs = nowUs

        var leastOffset = Int64.max
        for packet in received {
            guard let arrival = packet.arrivalTimeUs else { continue }
            leastOffset = min(leastOffset, arrival - packet.sendTimeUs)
            acknowledged.update(arrivalTimeUs: arrival, size: packet.size)
            guard let delta = grouping.add(packet, at: nowUs) else { continue }
            guard
                let modified = trendline.update(
                    sendDeltaUs: delta.sendDeltaUs,
                    arrivalDeltaUs: delta.arrivalDeltaUs,
                    arrivalTimeUs: delta.arrivalTimeUs
                )
            else { continue }
            detector.detect(
                modifiedTrend: modified,
                slope: trendline.slope,
                sendDeltaUs: delta.sendDeltaUs,
                arrivalTimeUs: delta.arrivalTimeUs
            )
        }

        let acknowledgedBitrate = acknowledged.bitrate
        let arrivalRate = receivedRate
        let queueMeasured = standingQueue != nil && leastOffset != .max
        if queueMeasured { standingQueue?.update(minimumOffsetUs: leastOffset, at: nowUs) }
        if let rate = acknowledgedBitrate, Double(rate) < Self.applicationLimitedRatio * rateControl.bitrate {
            if applicationLimitedSinceUs == nil { applicationLimitedSinceUs = nowUs }
        } else {
            applicationLimitedSinceUs = nil
        }
        let queueUs = standingQueue?.delayUs ?? 0
        let probeExcuses = probeQueue && queueUs <= Self.probeQueueLimitUs
        // The trend is a slope over the last 20 groups (about 0.7 s); the standing queue is now.
        let staleTrend = queueMeasured && queueUs <= Self.staleTrendQueueLimitUs
        if detector.state == .overusing && (probeExcuses || staleTrend) {
            // The sender's own probe built this queue on purpose, or no queue stands any more:
            // hold, as for under-use.
            rateControl.update(.underusing, acknowledgedBitrate: acknowledgedBitrate, at: nowUs)
        } else if detector.state == .overusing {
            if let rate = acknowledgedBitrate {
                if rateControl.mayReduceFurther(at: nowUs, acknowledgedBitrate: Double(rate)) {
                    let decreaseFrom = overuseRate(arrival: arrivalRate, acknowledged: rate)
                    rateControl.update(.overusing, acknowledgedBitrate: decreaseFrom, at: nowUs)
                }
            } else {
                rateControl.setEstimate(rateControl.bitrate / 2, at: nowUs)
            }
        } else {
            rateControl.update(detector.state, acknowledgedBitrate: acknowledgedBitrate, at: nowUs)
        }
        if queueMeasured {
            // A queue that stands above its back-off limit is over-use the trend has not shown
            // yet: one gentle decrease per such queue (`StandingQueueDetector.takeBackoff`), from
            // the link's rate: the lower of R_hat and the rate this message's packets arrived at
            // (the queue never emptied while they crossed). One message's arrivals alone read
            // 5.4 Mbit/s on a 3 Mbit/s link (a receiver stamping a batch at once), and the
            // back-off then lowered nothing. Not before R_hat exists, and the back-off stays armed
            // until then: the decrease records its rate as the link's capacity, and the first key
            // frame's queue, read off one batch-stamped message, once recorded 4.18 Mbit/s for a
            // 3 Mbit/s link. Above the estimate that lowered nothing, but it made the increase
            // additive and stopped probing (twice that capacity is past the ceiling): the first
            // phase ran at 78 % of the link, and the ramp took 16.5 s.
            if !probeExcuses, detector.state != .overusing, let acknowledgedBitrate,
                standingQueue?.takeBackoff() == true,
                let factor = standingQueue?.backoffFactor(gentlest: configuration.queueBackoffFactor),
                let rate = busyLinkRate(arrival: arrivalRate, acknowledged: acknowledgedBitrate)
            {
                rateControl.update(.overusing, acknowledgedBitrate: rate, at: nowUs, backoffFactor: factor)
                queueBackoffs += 1
            }
            // A cap while the queue stands, not a new estimate: the drain rate is far below what
            // the link carries, and climbing back from it at the additive pace near a known
            // capacity would take tens of seconds.
            let wasDraining = drainCap != nil
            // R_hat lags a drop by about a second; the rate the packets arrive at behind a
            // standing queue does not: it is the link's. Draining from 0.5 × a lagging 2.7 Mbit/s
            // let a 1 Mbit/s bottleneck's queue grow to its limit. Read over the whole drain
            // (`BusyLinkMeter`), not per message: one message's reading is spoilt by a receiver
            // stamping a batch at once, and resuming from the drain's highest such reading sent
            // 2.4 Mbit/s into a 1 Mbit/s link after the step (a second queue of 270 ms).
            if standingQueue?.isOverLimit == true {
                var meter = drainMeter ?? BusyLinkMeter()
                meter.add(received, reading: busyLinkRate(arrival: arrivalRate, acknowledged: acknowledgedBitrate))
                drainMeter = meter
            }
            let linkRate = drainMeter?.linkRate ?? acknowledgedBitrate
            drainCap = linkRate.flatMap { standingQueue?.drainRate(linkRate: $0) }
            if drainCap != nil {
                if !wasDraining { drainStartUs = nowUs }
            } else if wasDraining, let linkRate = drainMeter?.resumeRate, let start = drainStartUs {
                // Drained: resume just under the rate the link carried, not at the
                // controller's 0.85 × the acknowledged rate of a moment of over-use (measured:
                // 75–80 % of a 1 Mbit/s link for seconds after a 3 → 1 Mbit/s step). Upwards
                // only after a drain long enough for R_hat to be the link's, and not while
                // over-using; downwards always (a controller still at the old rate).
                let resume = configuration.drainResumeFactor * Double(linkRate)
                let settled = nowUs - start >= Self.minimumResumedDrainUs && detector.state != .overusing
                if settled || resume < rateControl.bitrate {
                    rateControl.setEstimate(resume, at: nowUs)
                }
                // The link was measured, not guessed: that is its capacity now. Left to R_hat,
                // which still read 1.06 Mbit/s, the capacity after a 3 → 1 Mbit/s step was
                // dropped as the drain ended, and the next probe, through a token bucket's
                // burst, lifted the estimate to 1.74 Mbit/s unconfirmed (a 77 ms queue, then a
                // decrease to 0.78 Mbit/s: the step tracked in 4.5 s, not 2).
                if let measured = drainMeter?.rate {
                    rateControl.setLinkCapacity(Double(measured), heldUntilUs: nowUs + Self.acknowledgedLagUs)
                }
            }
            if drainCap == nil { drainMeter = nil }
        }
        return currentUpdate
    }

    /// The rate the received packets of this message arrived at, bits per second: their bytes
    /// after the first over the time from the first arrival to the last; nil over fewer than
    /// 3 packets or 10 ms (a transport-cc message covers 50–100 ms of arrivals).
    private var receivedRate: Int? {
        guard received.count >= 3, let first = received.first?.arrivalTimeUs,
            let last = received.last?.arrivalTimeUs, last - first >= 10_000
        else { return nil }
        var bytes = 0
        for packet in received.dropFirst() { bytes += packet.size }
        return Int(Int64(bytes) * 8_000_000 / (last - first))
    }

    /// The link's rate while a queue keeps it busy: the lower of R_hat (`acknowledged`) and the
    /// rate this message's packets arrived at (`arrival`, `receivedRate`); R_hat alone when that
    /// is unknown.
    private func busyLinkRate(arrival: Int?, acknowledged: Int?) -> Int? {
        arrival.map { min($0, acknowledged ?? $0) } ?? acknowledged
    }

    /// The rate an over-use decreases from: R_hat, or, behind a standing queue (the link busy)
    /// whose packets arrived at under `droppedLinkRatio` × R_hat, their arrival rate. R_hat lags
    /// a capacity drop by about a second: 0.9 × its 2.8 Mbit/s after a 3 → 1 Mbit/s step lowered
    /// nothing that mattered, and the drain at 100 ms of queue was the first real decrease (a
    /// fresh clone's CI run overflowed the 750 ms bottleneck). Only for a drop that large: one
    /// message's arrivals vary by ±20 % at a steady 1 Mbit/s, and decreasing from the lower of
    /// the two at every over-use held the rate under 85 % of the link for the whole phase once.
    private func overuseRate(arrival: Int?, acknowledged: Int) -> Int {
        guard standingQueue?.isOverBackoffLimit == true, let arrival,
            Double(arrival) < Self.droppedLinkRatio * Double(acknowledged)
        else { return acknowledged }
        return arrival
    }

    /// A queue deeper than this, µs, is not the probe's own (`probeQueue`), whose bytes above the
    /// link make about 20 ms: a capacity drop during or just after a probe. Excused whatever its
    /// depth, an over-use at a 3 → 1 Mbit/s step waited out the probe's 300 ms (queue 35 → 90 ms)
    /// before the drain, at 100 ms, made the first decrease.
    static let probeQueueLimitUs: Int64 = 50_000

    /// A standing queue at most this deep, µs, says an over-use is a stale trend: the bump that
    /// lifted it has drained. A trend over the detector's 6 ms threshold needs the delay to have
    /// grown by some 15 ms over its window, and a receiver's late stamps only ever raise the
    /// measured queue. Measured: after a 1 → 3 Mbit/s step a train of probes lifted the trend,
    /// and 310 ms after the last, with no queue left, over-use decreased to 0.9 × an R_hat still
    /// lagging at 1.7 Mbit/s (the step took 7 s to track); a 57 ms queue that had drained 1.3 s
    /// before cost the first 3 Mbit/s phase a decrease to 1.9 Mbit/s and 3 s under 85 %.
    static let staleTrendQueueLimitUs: Int64 = 5_000

    /// An arrival rate under this fraction of R_hat behind a standing queue is a capacity drop.
    static let droppedLinkRatio = 2.0 / 3.0

    /// How long R_hat may lag the link after a drain, µs: its windows still held the old rate
    /// (1.06 Mbit/s on a 1 Mbit/s link at the drain's end, 0.93 Mbit/s 200 ms later).
    static let acknowledgedLagUs: Int64 = 1_000_000

    /// A drain shorter than this resumes nothing: a queue that stood for a moment kept the link
    /// busy only for that moment, so R_hat is not the link's rate (measured: a 200 ms drain
    /// while the encoder was still coming back resumed at 680 kbit/s on a 1 Mbit/s link).
    static let minimumResumedDrainUs: Int64 = 500_000

    private var currentUpdate: Update {
        Update(
            bitrate: bitrate,
            state: detector.state,
            trend: trendline.modifiedTrend,
            threshold: detector.threshold,
            acknowledgedBitrate: acknowledged.bitrate
        )
    }

    /// Copies the received packets into `received` in arrival order (then sequence order):
    /// feedback is nearly sorted already, so an insertion sort is about one pass.
    private mutating func sortReceived(_ results: some Collection<PacketResult>) {
        received.removeAll(keepingCapacity: true)
        for packet in results {
            guard let arrival = packet.arrivalTimeUs else { continue }
            received.append(packet)
            var index = received.count - 1
            while index > 0, let before = received[index - 1].arrivalTimeUs,
                before > arrival || (before == arrival && received[index - 1].sequenceNumber > packet.sequenceNumber)
            {
                received.swapAt(index, index - 1)
                index -= 1
            }
        }
    }
}

extension DelayBasedEstimator {
    /// A probe cluster measured `bitsPerSecond` (`ProbeBitrateEstimator`): the estimate jumps to
    /// it when that is higher and the detector does not see over-use (libwebrtc's
    /// `DelayBasedBwe` takes a probe result the same way).
    ///
    /// Near a known capacity (`LinkCapacityEstimator`) a probe that found no room (`foundRoom`
    /// false: it came back under 80 % of its rate, the link was full) lifts the estimate to at
    /// most the capacity estimate itself: its rate is read over a few packets, and a token
    /// bucket's burst lets those through faster than the link's rate (measured: 1.14 Mbit/s
    /// from a 1 Mbit/s tbf, an over-use a second later). Lifted to the capacity's upper bound
    /// (mean + 3 σ, 1.08 Mbit/s on a 1 Mbit/s link) every 2 s, the estimate stood above the link
    /// for a second after each probe: 60–100 ms of queue each time.
    ///
    /// A probe that found room shows the capacity moved, when a second one right after it
    /// (`ProbeController` sends it at once, at twice the lifted estimate) finds room too: then the
    /// old capacity estimate is dropped. The first alone lifts the estimate no further than one
    /// that found none: a receiver short of CPU stamps a probe's few packets as one batch, and a
    /// token bucket lets them through at its burst (on a 1 Mbit/s link probes at 1.5–1.7 Mbit/s
    /// came back "at their rate"). Each such probe resetting the capacity cost a decrease
    /// (utilisation 76 % in one phase); lifted to the capacity's upper bound (1.06 × a measured
    /// 0.95 Mbit/s), the estimate stood above the link until the early back-off took it to
    /// 0.82 Mbit/s, 2 s under the band after a 3 → 1 Mbit/s step.
    ///
    /// Near a known capacity a probe lifts the estimate to at most 95 % of it, as a probe that
    /// saturated the link reads (`ProbeBitrateEstimator.targetUtilization`, libwebrtc's
    /// kTargetUtilizationFraction): at the capacity itself the estimate is the link's, a queue
    /// builds and an over-use takes it to 0.9 × R_hat (0.95 → 0.82 Mbit/s every 2 s).
    mutating func applyProbeResult(_ bitsPerSecond: Int, foundRoom: Bool = true, at nowUs: Int64) {
        guard detector.state != .overusing else { return }
        var rate = Double(bitsPerSecond)
        if let capacity = rateControl.linkCapacity.estimate {
            let beyond = rate > rateControl.linkCapacity.upperBound
            if beyond, foundRoom, let first = roomFoundUs, nowUs - first <= Self.roomConfirmationUs {
                rateControl.resetLinkCapacity()
                roomFoundUs = nil
            } else {
                if beyond, foundRoom { roomFoundUs = nowUs }
                rate = min(rate, ProbeBitrateEstimator.targetUtilization * capacity)
            }
        }
        if !foundRoom { roomFoundUs = nil }
        if !foundRoom, rate < rateControl.bitrate, let since = applicationLimitedSinceUs,
            nowUs - since >= Self.applicationLimitedUs
        {
            rateControl.setEstimate(rate, at: nowUs)
            return
        }
        guard rate > rateControl.bitrate else { return }
        rateControl.setEstimate(rate, at: nowUs)
    }

    /// How soon after a probe that found room beyond a known capacity a second one must find
    /// room too to count, µs: the second goes at once, and its result is back within a round
    /// trip and its feedback interval.
    static let roomConfirmationUs: Int64 = 1_000_000

    /// Below this fraction of the estimate the acknowledged rate is the sender's, not the
    /// link's: the encoder makes less than it may (libwebrtc's ALR detector starts at 65–80 %).
    static let applicationLimitedRatio = 0.8
    /// For at least this long, µs: after a step up x264 takes a second or two to reach a new
    /// target, and R_hat lags that; probes then read low and must not hold the ramp back
    /// (measured at 1080p with no such wait: the 1 → 3 Mbit/s step tracked in 6.5–11 s, not
    /// 2–4 s).
    static let applicationLimitedUs: Int64 = 3_000_000
}
