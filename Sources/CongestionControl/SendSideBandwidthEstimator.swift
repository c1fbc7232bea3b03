import RTP

/// One destination's send-side congestion control (Docs/congestion.md), the module's front
/// door, after Pion's `gcc.SendSideBWE`: the publisher feeds it what it sends and what the
/// receiver says, and asks it what rate the receiver allows, when a packet may leave and when
/// to probe.
///
/// - Sent packets: `stamp` gives each packet this receiver's transport-wide sequence number
///   (draft-holmer-rmcat-transport-wide-cc-extensions-01) and `recordSent` remembers it.
/// - Feedback: transport-wide feedback (`receive`) drives the delay-based estimate
///   (draft-ietf-rmcat-gcc-02 §5) and probing; receiver reports' loss (`reportLoss`, RFC 3550
///   §6.4.1) the loss-based one (§6); a REMB (`reportReceiverEstimate`) caps it.
/// - Decisions: `targetBitrate` and `allowedBitrate` (the rate this receiver allows),
///   `encoderVote` (what it lets the encoder make), the pacer's next packet and send time, the
///   pacing rate, whether a picture should wait (`holdsVideo`), and when to probe.
///
/// Every destination has its own numbers and estimate, although one encode feeds them all: the
/// paths differ, and the encoder follows the weakest receiver that is not an outlier
/// (`ReceiverBitratePolicy`), while each destination's pacer spreads what the encoder makes at a
/// multiple of what its own path takes.
///
/// Times are monotonic nanoseconds, as the publisher's clock gives them; the estimators inside
/// count in microseconds. Not thread-safe: only the sender's thread (under the sender's lock)
/// touches it.
public final class SendSideBandwidthEstimator {
    /// The RFC 8285 one-byte element id this receiver agreed for transport-wide sequence numbers
    /// (nil: none, and the element in our packets is blanked to padding for it).
    public let transportWideID: UInt8?
    /// Whether its audio carries the number too (its audio section agreed the same id).
    let stampsAudio: Bool
    let configuration: CongestionConfiguration
    private var nextSequenceNumber: UInt16 = 1
    private(set) var sent: SentPacketHistory
    private(set) var delayBased: DelayBasedEstimator
    private(set) var lossBased: LossBasedBitrateController
    /// Whether an RR or REMB about our video arrived: the loss-based estimate then counts.
    private(set) var hasReceiverReports = false
    var probeEstimator = ProbeBitrateEstimator()
    var probes: ProbeController
    /// nil when pacing is off: packets leave as the encoder makes them.
    var pacer: Pacer?
    /// The cluster every packet sent now belongs to, while a probe is being sent.
    var activeProbe: Int?
    /// When the last probe's padding left, µs.
    var probeEndedUs: Int64?
    private var results: [PacketResult] = []
    private var clusters: [Int] = []
    var statistics = CongestionStatistics()
    /// Whether the pacer sends at the allowed rate itself rather than at the pacing factor ×
    /// (`updateDrainPacing`).
    var pacesAtAllowedRate = false
    /// A receiver that agreed on transport feedback in an offer/answer and has the number: its
    /// estimate starts at `CongestionConfiguration.unknownPathStart`, and it votes it (`startVote`).
    let pathUnknown: Bool
    /// When a probe last found room (its result at 80 % of its rate or more, no over-use), µs:
    /// a viewer of simulcast may move up a layer without waiting out the hold
    /// (`probeFoundRoom(within:at:)`).
    private var lastProbeWithRoomUs: Int64?
    /// When the first stamped packet left, µs (`startVote`).
    private var firstSentUs: Int64?

    /// A receiver that agreed on `transportWideID` (one-byte ids 1–14 only; nil or any other
    /// turns transport-wide numbers off for it), whose audio carries them too when
    /// `stampsAudio`. `bitrate` bounds both estimates and holds the loss-based thresholds;
    /// `configuration` the rest. `pathUnknown`: it agreed on transport feedback in an
    /// offer/answer, so it starts at the unknown path's rate (D33).
    public init(
        configuration: CongestionConfiguration,
        bitrate: CongestionConfiguration.LossBased,
        transportWideID: UInt8?,
        stampsAudio: Bool,
        pathUnknown: Bool = false
    ) throws {
        self.configuration = configuration
        self.transportWideID = transportWideID.flatMap { (1...14).contains($0) ? $0 : nil }
        self.stampsAudio = stampsAudio && self.transportWideID != nil
        self.pathUnknown = pathUnknown && self.transportWideID != nil && configuration.unknownPathStart != nil
        let bitrate = configuration.receiverBitrate(bitrate, pathUnknown: self.pathUnknown)
        let rateControl = configuration.rateControl(bitrate)
        sent = try SentPacketHistory()
        delayBased = try DelayBasedEstimator(configuration: .init(rateControl: rateControl))
        delayBased.standingQueue = StandingQueueDetector()
        lossBased = try LossBasedBitrateController(configuration: bitrate)
        probes = ProbeController(maximum: rateControl.maximum)
        if self.pathUnknown { probes.firstScale = 3 }
        pacer = try configuration.pacing.map { try Pacer(configuration: $0) }
        results.reserveCapacity(1024)
        clusters.reserveCapacity(1024)
        statistics.transportWide = self.transportWideID != nil
    }

    // MARK: - Sent packets

    /// Writes this destination's next transport-wide number into the clear packet of `length`
    /// bytes at `base` (before SRTP; the header is authenticated, not encrypted), or blanks the
    /// element when this receiver did not agree on it, so it never sees an id it did not
    /// negotiate (`RTPTransportSequenceNumber`). Returns the number written. A packet without
    /// our template's element is left alone.
    /// Decision D3 (Docs/congestion.md): each destination's own numbers in a copy of one template.
    public func stamp(_ base: UnsafeMutableRawPointer, length: Int, audio: Bool) -> UInt16? {
        let packet = UnsafeMutableRawBufferPointer(start: base, count: length)
        guard let id = transportWideID, !audio || stampsAudio else {
            _ = try? RTPTransportSequenceNumber.blank(id: Self.templateID, inPacket: packet)
            return nil
        }
        let number = nextSequenceNumber
        guard (try? RTPTransportSequenceNumber.stamp(number, id: Self.templateID, as: id, inPacket: packet)) == true
        else { return nil }
        nextSequenceNumber &+= 1
        return number
    }

    /// Remembers a stamped packet as it leaves at `now` (`size`: the protected datagram).
    public func recordSent(_ number: UInt16, size: Int, at now: UInt64) {
        if firstSentUs == nil { firstSentUs = Int64(now / 1000) }
        sent.record(
            sequenceNumber: number,
            sendTimeUs: Int64(now / 1000),
            size: size,
            cluster: activeProbe ?? Self.unmeasuredProbe
        )
    }

    // MARK: - What the receiver says

    /// A transport feedback message that arrived at `now`, with the video round trip the
    /// receiver reports last measured (µs; nil before one): the delay-based estimate and probe
    /// results. A probe result lifts the loss-based estimate too, which would otherwise climb
    /// there at 8 %/s (libwebrtc's `SetSendBitrate` on a probe result).
    public func receive(_ feedback: RTCPTransportFeedback, roundTripUs: Int64?, at now: UInt64) {
        guard let probed = receiveTransportFeedback(feedback, roundTripUs: roundTripUs, at: Int64(now / 1000)) else {
            return
        }
        lossBased.raise(to: min(probed, delayBased.bitrate))
    }

    /// One receiver report's fraction lost about our video (0…1) that arrived at `now`.
    public func reportLoss(_ fractionLost: Double, at now: UInt64) {
        lossBased.reportLoss(fractionLost, at: now)
        hasReceiverReports = true
    }

    /// A REMB about our video: the loss-based estimate stays under `bitsPerSecond` until a higher
    /// one arrives.
    public func reportReceiverEstimate(_ bitsPerSecond: UInt64) {
        lossBased.reportReceiverEstimate(bitsPerSecond)
        hasReceiverReports = true
    }

    // MARK: - The rate

    /// What this receiver allows, bits per second: the loss-based estimate under its REMB, and
    /// under the delay-based estimate once transport feedback arrives (libwebrtc caps the
    /// loss-based estimate by the delay-based one the same way).
    /// Decision D2 (Docs/congestion.md): loss-based under REMB, capped by delay-based.
    public var targetBitrate: Int {
        guard hasTransportFeedback else { return lossBased.target }
        return min(lossBased.target, delayBased.bitrate)
    }

    /// `targetBitrate` once this receiver has said anything about the path (an RR or REMB about
    /// our video, or transport feedback); nil before: it has no vote on the encoder's rate yet.
    public var allowedBitrate: Int? {
        hasReceiverReports || hasTransportFeedback ? targetBitrate : nil
    }

    /// What this receiver votes for the encoder before it reported, bits per second: its start
    /// estimate, while its path is unknown (`pathUnknown`), it has not reported and its first
    /// packet left less than `CongestionConfiguration.startVoteUs` before `now`; else nil.
    /// Decision D33 (Docs/congestion.md): an unknown path starts at 300 kbit/s.
    public func startVote(at now: UInt64) -> Int? {
        guard pathUnknown, allowedBitrate == nil else { return nil }
        if let first = firstSentUs, Int64(now / 1000) - first > configuration.startVoteUs { return nil }
        return targetBitrate
    }

    /// Whether a probe found room within `windowNs` before `now` (monotonic ns).
    public func probeFoundRoom(within windowNs: UInt64, at now: UInt64) -> Bool {
        guard let found = lastProbeWithRoomUs else { return false }
        return Int64(now / 1000) - found <= Int64(windowNs / 1000)
    }

    /// Whether transport feedback has arrived, so the delay-based estimate counts.
    public var hasTransportFeedback: Bool { statistics.feedbackMessages > 0 }

    /// What this receiver lets the encoder make when it allows `allowed` bits per second on the
    /// wire: the video share of it (`CongestionConfiguration.videoTarget`), less the pacer's
    /// backlog spread over `CongestionConfiguration.backlogPushbackUs` while the pacer sends at
    /// the allowed rate (after a capacity drop; libwebrtc's congestion window pushback lowers
    /// the encoder's target for the same reason): a link that is full carries the backlog only
    /// in place of new pictures. At least a quarter of the share.
    /// Decisions D20 and D23 (Docs/congestion.md): the pushback; the video share.
    public func encoderVote(allowed: Int) -> Int {
        let share = configuration.videoTarget(forWireRate: allowed)
        let window = configuration.backlogPushbackUs
        guard pacesAtAllowedRate, window > 0 else { return share }
        let pushback = Int(Int64(pacedBacklogBytes) * 8_000_000 / window)
        return max(share - pushback, share / 4)
    }

    // MARK: - Statistics

    /// The counters and estimates for the status line and `--stats-json`, with the pacer's
    /// state at `now`.
    public func statistics(at now: UInt64) -> CongestionStatistics {
        var result = statistics
        if let pacer {
            let nowUs = Int64(now / 1000)
            result.pacingBitrate = pacer.pacingRate
            result.pacerQueuePackets = pacer.queuedPackets
            result.pacerQueueMilliseconds = Double(pacer.oldestQueueTimeUs(at: nowUs) ?? 0) / 1000
        }
        return result
    }

    /// A packet the pacer held was lost before its turn (gone from the sender's history) or
    /// refused (its ring full).
    public func countPacerDrop() {
        statistics.pacerDropped += 1
    }
}

extension SendSideBandwidthEstimator {
    /// The header extension every packet carries when transport-wide numbers are on: RFC 8285
    /// one-byte form, one element (id 3, 2 bytes) and a byte of padding; each destination's copy
    /// gets its own id and number or the element blanked (`stamp`).
    public static let template = RTPHeaderExtension(
        profile: 0xBEDE,
        data: [templateID << 4 | 1, 0, 0, 0]
    )
    /// The id in the template, and the one our SDP files and WHIP offer give the extension.
    public static let templateID: UInt8 = 3
}

// MARK: - Transport feedback, step by step

extension SendSideBandwidthEstimator {
    /// A transport feedback message at `nowUs`: the delay-based estimate, probe results. Returns
    /// the rate a probe cluster found, when this message completed one and no over-use stands.
    @discardableResult
    func receiveTransportFeedback(_ feedback: RTCPTransportFeedback, roundTripUs: Int64?, at nowUs: Int64) -> Int? {
        guard transportWideID != nil else { return nil }
        joinWithSent(feedback)
        if let roundTripUs { delayBased.setRoundTripTime(roundTripUs) }
        delayBased.probeQueue = activeProbe != nil || probeEndedUs.map({ nowUs - $0 < Self.probeQueueUs }) == true
        let before = delayBased.bitrate
        let update = delayBased.update(with: results, at: nowUs)
        let probed = applyProbeResults(overusing: update.state == .overusing, at: nowUs)
        holdProbingAfterDecrease(overusing: update.state == .overusing, from: before, at: nowUs)
        record(update)
        return probed
    }

    /// Turns the message's statuses into `results` (and their probe clusters), from what was
    /// sent under each number, and counts the lost and the unknown.
    private func joinWithSent(_ feedback: RTCPTransportFeedback) {
        results.removeAll(keepingCapacity: true)
        clusters.removeAll(keepingCapacity: true)
        var lost = 0
        var unknown = 0
        feedback.forEachStatus { status in
            guard let found = sent.result(status.sequenceNumber, arrivalTimeUs: status.arrivalTime) else {
                unknown += 1
                return
            }
            if status.arrivalTime == nil { lost += 1 }
            results.append(found.result)
            clusters.append(found.cluster)
        }
        statistics.feedbackMessages += 1
        statistics.reportedLost += lost
        statistics.unknownPackets += unknown
    }

    /// Feeds the received packets of probe clusters to the probe estimator; a completed cluster
    /// lifts the delay-based estimate and tells the probe controller. Returns the last rate
    /// found, unless the detector sees over-use.
    private func applyProbeResults(overusing: Bool, at nowUs: Int64) -> Int? {
        var probed: Int?
        for (result, cluster) in zip(results, clusters) where cluster >= 0 {
            guard let rate = probeEstimator.add(result, cluster: cluster) else { continue }
            statistics.lastProbeBitrate = rate
            let room = probes.foundRoom(rate, cluster: cluster)
            if room && !overusing { lastProbeWithRoomUs = nowUs }
            delayBased.applyProbeResult(rate, foundRoom: room, at: nowUs)
            probes.record(result: rate, cluster: cluster, at: nowUs)
            if !overusing { probed = rate }
        }
        return probed
    }

    /// A drain, an early back-off or an over-use that lowered the estimate holds the next probe
    /// off (`ProbeController.recordDecrease`).
    private func holdProbingAfterDecrease(overusing: Bool, from before: Int, at nowUs: Int64) {
        if delayBased.drainCap != nil { probes.recordDecrease(at: nowUs) }
        if delayBased.queueBackoffs != statistics.queueBackoffs {
            statistics.queueBackoffs = delayBased.queueBackoffs
            probes.recordDecrease(at: nowUs)
        }
        if overusing && delayBased.bitrate < before {
            statistics.overuseEvents += 1
            probes.recordDecrease(at: nowUs)
        }
    }

    /// The estimate and its parts after a message, for `statistics`.
    private func record(_ update: DelayBasedEstimator.Update) {
        statistics.delayBasedBitrate = delayBased.bitrate
        statistics.linkCapacityBitrate = delayBased.rateControl.linkCapacity.estimate.map { Int($0) }
        statistics.acknowledgedBitrate = update.acknowledgedBitrate
        statistics.delayState = "\(update.state)"
        statistics.delayTrendMilliseconds = update.trend
        statistics.thresholdMilliseconds = update.threshold
        statistics.queueDelayMilliseconds = Double(delayBased.standingQueue?.delayUs ?? 0) / 1000
    }
}
