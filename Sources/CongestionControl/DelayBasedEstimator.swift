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
///
/// The standing-queue rules on top of GCC are this project's; each cites its decision (Dn) in
/// Docs/congestion.md, where the measurement that decided it is.
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
        /// Once a standing queue has drained, the estimate resumes at this fraction of the link
        /// rate measured while it drained (`BusyLinkMeter`; this project's).
        /// Decision D10 (Docs/congestion.md): resume at 0.9 × the measured link.
        var drainResumeFactor: Double
        /// β of the decrease a standing queue just above `StandingQueueDetector.backoffLimitUs`
        /// calls for: gentler than the detector's, as it comes earlier (a 25 ms queue, not a deep
        /// one); a deeper queue takes a lower β (`StandingQueueDetector.backoffFactor`; this
        /// project's).
        /// Decision D12 (Docs/congestion.md): the early back-off's β, 0.95 down to 0.85.
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
    /// early back-off (the probe sent above the link on purpose). The standing-queue drain still
    /// applies, and a queue over `probeQueueLimitUs` is not excused.
    /// Decision D16 (Docs/congestion.md): a probe's own queue lowers nothing.
    var probeQueue = false
    /// Early back-offs taken so far (`StandingQueueDetector.takeBackoff`).
    private(set) var queueBackoffs = 0
    /// While a standing queue drains: the rate that drains it, below the controller's.
    private(set) var drainCap: Int?
    /// What the link carried during the current drain, and when the drain began.
    private var drainMeter: BusyLinkMeter?
    /// The highest arrival rate of the drain's messages while the sender was far under its
    /// estimate (`senderLimitedArrival`), bits per second.
    private var drainSenderLimitedRate: Int?
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
        resetAfterSilence(at: nowUs)
        let leastOffsetUs = detectOveruse(at: nowUs)
        let acknowledgedBitrate = acknowledged.bitrate
        let arrivalRate = receivedRate
        let queueMeasured = standingQueue != nil && leastOffsetUs != .max
        if queueMeasured { standingQueue?.update(minimumOffsetUs: leastOffsetUs, at: nowUs) }
        trackApplicationLimited(acknowledgedBitrate, at: nowUs)
        let queueUs = standingQueue?.delayUs ?? 0
        let probeExcuses = probeQueue && queueUs <= Self.probeQueueLimitUs
        let staleTrend = queueMeasured && queueUs <= Self.staleTrendQueueLimitUs
        controlRate(
            excused: probeExcuses || staleTrend,
            acknowledged: acknowledgedBitrate,
            arrival: arrivalRate,
            at: nowUs
        )
        if queueMeasured {
            if !probeExcuses { backOffEarly(acknowledged: acknowledgedBitrate, arrival: arrivalRate, at: nowUs) }
            drainStandingQueue(acknowledged: acknowledgedBitrate, arrival: arrivalRate, at: nowUs)
        }
        return currentUpdate
    }

    /// Deltas across a pause say nothing about queues (libwebrtc kStreamTimeOut): start over.
    private mutating func resetAfterSilence(at nowUs: Int64) {
        if let last = lastFeedbackUs, nowUs - last > configuration.streamTimeoutUs {
            grouping.reset()
            trendline.reset()
            detector.reset()
        }
        lastFeedbackUs = nowUs
    }

    /// §5.1–§5.4 per packet in arrival order; returns the least one-way offset for the queue.
    private mutating func detectOveruse(at nowUs: Int64) -> Int64 {
        var leastOffsetUs = Int64.max
        for packet in received {
            guard let arrival = packet.arrivalTimeUs else { continue }
            leastOffsetUs = min(leastOffsetUs, arrival - packet.sendTimeUs)
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
        return leastOffsetUs
    }

    /// A sender under 80 % of its estimate for long cannot test it: probes may then lower it (D28).
    private mutating func trackApplicationLimited(_ acknowledgedBitrate: Int?, at nowUs: Int64) {
        if let rate = acknowledgedBitrate, Double(rate) < Self.applicationLimitedRatio * rateControl.bitrate {
            if applicationLimitedSinceUs == nil { applicationLimitedSinceUs = nowUs }
        } else {
            applicationLimitedSinceUs = nil
        }
    }

    /// §5.5 on the detector's verdict; an excused over-use (a probe's queue, D16, or a stale trend, D14) holds.
    private mutating func controlRate(
        excused: Bool,
        acknowledged acknowledgedBitrate: Int?,
        arrival arrivalRate: Int?,
        at nowUs: Int64
    ) {
        guard detector.state == .overusing else {
            rateControl.update(detector.state, acknowledgedBitrate: acknowledgedBitrate, at: nowUs)
            return
        }
        if excused {
            rateControl.update(.underusing, acknowledgedBitrate: acknowledgedBitrate, at: nowUs)
        } else if let rate = acknowledgedBitrate {
            if rateControl.mayReduceFurther(at: nowUs, acknowledgedBitrate: Double(rate)) {
                let decreaseFrom = overuseRate(arrival: arrivalRate, acknowledged: rate)
                rateControl.update(.overusing, acknowledgedBitrate: decreaseFrom, at: nowUs)
            }
        } else {
            rateControl.setEstimate(rateControl.bitrate / 2, at: nowUs)
        }
    }

    /// A queue over 25 ms the trend has not shown is over-use already: one gentle decrease (D12, D13).
    private mutating func backOffEarly(
        acknowledged acknowledgedBitrate: Int?,
        arrival arrivalRate: Int?,
        at nowUs: Int64
    ) {
        guard detector.state != .overusing, let acknowledgedBitrate,
            standingQueue?.takeBackoff() == true,
            let factor = standingQueue?.backoffFactor(gentlest: configuration.queueBackoffFactor),
            let rate = earlyBackoffRate(arrival: arrivalRate, acknowledged: acknowledgedBitrate)
        else { return }
        rateControl.update(.overusing, acknowledgedBitrate: rate, at: nowUs, backoffFactor: factor)
        queueBackoffs += 1
    }

    /// A standing queue has no gradient: cap the rate at what drains it, from the link's measured rate (D8, D9).
    private mutating func drainStandingQueue(
        acknowledged acknowledgedBitrate: Int?,
        arrival arrivalRate: Int?,
        at nowUs: Int64
    ) {
        let wasDraining = drainCap != nil
        if standingQueue?.isOverLimit == true {
            var meter = drainMeter ?? BusyLinkMeter()
            meter.add(received, reading: busyLinkRate(arrival: arrivalRate, acknowledged: acknowledgedBitrate))
            if let rate = senderLimitedArrival(arrival: arrivalRate, acknowledged: acknowledgedBitrate) {
                drainSenderLimitedRate = max(drainSenderLimitedRate ?? rate, rate)
            }
            drainMeter = meter
        }
        let linkRate = drainMeter?.linkRate ?? acknowledgedBitrate
        drainCap = linkRate.flatMap { standingQueue?.drainRate(linkRate: $0) }
        if drainCap != nil {
            if !wasDraining { drainStartUs = nowUs }
        } else if wasDraining {
            resumeAfterDrain(at: nowUs)
        }
        if drainCap == nil {
            drainMeter = nil
            drainSenderLimitedRate = nil
        }
    }

    /// Drained: resume just under the link's measured rate, which is its capacity now (D10, D11),
    /// or the arrival rate a sender far under its estimate saw (D32).
    private mutating func resumeAfterDrain(at nowUs: Int64) {
        guard let measured = drainMeter?.resumeRate, let start = drainStartUs else { return }
        let linkRate = max(measured, drainSenderLimitedRate ?? 0)
        let resume = configuration.drainResumeFactor * Double(linkRate)
        let settled = nowUs - start >= Self.minimumResumedDrainUs && detector.state != .overusing
        if settled || resume < rateControl.bitrate {
            rateControl.setEstimate(resume, at: nowUs)
        }
        if let measured = drainMeter?.rate {
            rateControl.setLinkCapacity(Double(measured), heldUntilUs: nowUs + Self.acknowledgedLagUs)
        }
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

    /// The arrival rate of a message when R_hat is the sender's own by D29's test and also under
    /// half the estimate: an encoder that made far less than it may (the first change after a
    /// still period), whose picture queued by itself. A drain's cap still takes the lower reading
    /// (the queue clears sooner), but the resume after it and an over-use take this one: from
    /// R_hat they put the estimate at a quarter of the link for a second after such a change.
    /// A sender that filled its estimate, as before a capacity drop, has R_hat near the estimate
    /// and gets nil (a loaded receiver's batches read its arrival rate far over the link).
    /// Decision D32 (Docs/congestion.md): a sender-limited drain resumes at the arrival rate.
    private func senderLimitedArrival(arrival: Int?, acknowledged: Int?) -> Int? {
        guard let arrival, let acknowledged, isApplicationLimited(arrival: arrival, acknowledged: acknowledged),
            Double(acknowledged) < Self.senderLimitedDrainRatio * rateControl.bitrate
        else { return nil }
        return arrival
    }

    /// R_hat under this fraction of the estimate: the sender did not use it (`senderLimitedArrival`).
    static let senderLimitedDrainRatio = 0.5

    /// The rate the early back-off decreases from: the link's busy rate, or the arrival rate
    /// when R_hat is the sender's own (`isApplicationLimited`).
    private func earlyBackoffRate(arrival: Int?, acknowledged: Int?) -> Int? {
        if let arrival, let acknowledged, isApplicationLimited(arrival: arrival, acknowledged: acknowledged) {
            return arrival
        }
        return busyLinkRate(arrival: arrival, acknowledged: acknowledged)
    }

    /// Whether R_hat measured the sender rather than the link: the packets of a message that met
    /// a queue arrived at more than `applicationLimitedArrivalRatio` × R_hat. A queue keeps the
    /// link busy, so they arrived at the link's rate; an encoder that made less than the link
    /// carries (a screen after a still period, a small change) left R_hat at its own rate, and
    /// a decrease from it would take the estimate far under the link. A sender above the link
    /// cannot look like this: what the link delivers is then what R_hat measures. Only over a
    /// message of at least `applicationLimitedPackets` spanning `applicationLimitedSpanUs`: a
    /// shaper's burst compresses a few arrivals to far above the link's rate, and a decrease
    /// from such a reading would hold a sender above the link. The drain's cap keeps the lower
    /// rate whatever R_hat is; its resume follows this when R_hat is under half the estimate too
    /// (`senderLimitedArrival`, D32).
    /// Decision D29 (Docs/congestion.md): R_hat under half the arrival rate is the sender's.
    private func isApplicationLimited(arrival: Int, acknowledged: Int) -> Bool {
        guard received.count >= Self.applicationLimitedPackets, let first = received.first?.arrivalTimeUs,
            let last = received.last?.arrivalTimeUs, last - first >= Self.applicationLimitedSpanUs
        else { return false }
        return Double(acknowledged) < Self.applicationLimitedArrivalRatio * Double(arrival)
    }

    static let applicationLimitedArrivalRatio = 0.5
    static let applicationLimitedPackets = 5
    static let applicationLimitedSpanUs: Int64 = 20_000

    /// The rate an over-use decreases from: R_hat, or, behind a standing queue (the link busy)
    /// whose packets arrived at under `droppedLinkRatio` × R_hat, their arrival rate. R_hat lags
    /// a capacity drop by about a second, so a decrease from it lowers nothing that matters
    /// until the drain. Only for a drop that large: one message's arrivals vary by ±20 % at a
    /// steady rate, and a decrease from the lower of the two at every over-use leaves the link
    /// underused. Also from the arrival rate when R_hat is the sender's own (`isApplicationLimited`, D29).
    /// Decision D15 (Docs/congestion.md): decrease from the arrival rate under 2/3 of R_hat.
    /// A sender far under its estimate (`senderLimitedArrival`) decreases from the arrival rate
    /// whatever the queue: the trend of its own picture's queue still says over-use after the
    /// drain cleared it, and from R_hat that took the estimate to a quarter of the link (D32).
    private func overuseRate(arrival: Int?, acknowledged: Int) -> Int {
        if let rate = senderLimitedArrival(arrival: arrival, acknowledged: acknowledged) { return rate }
        guard standingQueue?.isOverBackoffLimit == true, let arrival,
            Double(arrival) < Self.droppedLinkRatio * Double(acknowledged)
                || isApplicationLimited(arrival: arrival, acknowledged: acknowledged)
        else { return acknowledged }
        return arrival
    }

    /// A queue deeper than this, µs, is not the probe's own (`probeQueue`), whose bytes above the
    /// link make about 20 ms: a capacity drop during or just after a probe.
    /// Decision D16 (Docs/congestion.md): a probe excuses no queue over 50 ms.
    static let probeQueueLimitUs: Int64 = 50_000

    /// A standing queue at most this deep, µs, says an over-use is a stale trend: the bump that
    /// lifted it has drained. A trend over the detector's 6 ms threshold needs the delay to have
    /// grown by some 15 ms over its window, and a receiver's late stamps only ever raise the
    /// measured queue.
    /// Decision D14 (Docs/congestion.md): over-use from a stale trend holds.
    static let staleTrendQueueLimitUs: Int64 = 5_000

    /// An arrival rate under this fraction of R_hat behind a standing queue is a capacity drop.
    static let droppedLinkRatio = 2.0 / 3.0

    /// How long R_hat may lag the link after a drain, µs: its windows still hold the old rate.
    /// Decision D11 (Docs/congestion.md): the drain's measured capacity is held for 1 s.
    static let acknowledgedLagUs: Int64 = 1_000_000

    /// A drain shorter than this resumes nothing upwards: a queue that stood for a moment kept
    /// the link busy only for that moment, so R_hat is not the link's rate.
    /// Decision D10 (Docs/congestion.md): upwards only after a drain of 500 ms.
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
    /// most the capacity estimate: its rate is read over a few packets, and a token bucket's
    /// burst lets those through faster than the link's rate.
    ///
    /// A probe that found room shows the capacity moved, when a second one right after it
    /// (`ProbeController` sends it at once, at twice the lifted estimate) finds room too: then the
    /// old capacity estimate is dropped. The first alone lifts the estimate no further than one
    /// that found none: a receiver short of CPU stamps a probe's few packets as one batch, and a
    /// token bucket lets them through at its burst.
    ///
    /// Near a known capacity a probe lifts the estimate to at most 95 % of it, as a probe that
    /// saturated the link reads (`ProbeBitrateEstimator.targetUtilization`, libwebrtc's
    /// kTargetUtilizationFraction): at the capacity itself the estimate is the link's, a queue
    /// builds and an over-use takes it down again.
    /// Decision D27 (Docs/congestion.md): 95 % of a known capacity; room beyond it confirmed.
    ///
    /// A probe that found no room lowers the estimate only for a sender application-limited for
    /// `applicationLimitedUs`: an encoder-limited sender's estimate is tested by nothing else.
    /// Decision D28 (Docs/congestion.md): no-room probes lower only after 3 s application-limited.
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
    /// For at least this long, µs: after a step up the encoder takes a second or two to reach
    /// a new target, and R_hat lags that; probes then read low and must not hold the ramp back.
    /// Decision D28 (Docs/congestion.md): 3 s.
    static let applicationLimitedUs: Int64 = 3_000_000
}
