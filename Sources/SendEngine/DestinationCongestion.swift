import CongestionControl
import RTP

/// One destination's send-side congestion control (Docs/congestion.md): its transport-wide
/// sequence numbers, what it sent under them, the delay-based estimator its transport feedback
/// feeds, probing, and its pacer. Only the sender's thread (under the sender's lock) touches it.
///
/// Every destination has its own numbers and estimate, although one encode feeds them all: the
/// paths differ, and the encoder follows the weakest receiver that is not an outlier
/// (`ReceiverBitratePolicy`), while each destination's pacer spreads what the encoder makes at a
/// multiple of what its own path takes.
public final class DestinationCongestion {
    /// The RFC 8285 one-byte element id this receiver agreed for transport-wide sequence numbers
    /// (nil: none, and the element in our packets is blanked to padding for it).
    let transportWideID: UInt8?
    /// Whether its audio carries the number too (its audio section agreed the same id).
    let stampsAudio: Bool
    private var nextSequenceNumber: UInt16 = 1
    private(set) var sent: SentPacketHistory
    private(set) var delayBased: DelayBasedEstimator
    private var probeEstimator = ProbeBitrateEstimator()
    var probes: ProbeController
    /// nil when pacing is off: packets leave as the encoder makes them.
    var pacer: Pacer?
    /// The cluster every packet sent now belongs to, while a probe is being sent.
    private(set) var activeProbe: Int?
    private var results: [PacketResult] = []
    private var clusters: [Int] = []
    var statistics = CongestionStatistics()

    /// Where the transport-wide element sits in our packets: right after the 12-byte header (no
    /// CSRCs) and the 4-byte RFC 8285 preamble; it is the template's first element.
    static let elementOffset = 16

    init(
        transportWideID: UInt8?,
        stampsAudio: Bool,
        rateControl: AIMDRateController.Configuration,
        pacing: Pacer.Configuration?
    ) throws {
        self.transportWideID = transportWideID.flatMap { (1...14).contains($0) ? $0 : nil }
        self.stampsAudio = stampsAudio && self.transportWideID != nil
        sent = try SentPacketHistory()
        delayBased = try DelayBasedEstimator(configuration: .init(rateControl: rateControl))
        delayBased.standingQueue = StandingQueueDetector()
        probes = ProbeController(maximum: rateControl.maximum)
        pacer = try pacing.map { try Pacer(configuration: $0) }
        results.reserveCapacity(1024)
        clusters.reserveCapacity(1024)
        statistics.transportWide = self.transportWideID != nil
    }

    /// Writes this destination's next transport-wide number into the clear packet at `base`
    /// (before SRTP; the header is authenticated, not encrypted), or blanks the element when this
    /// receiver did not agree on it, so it never sees an id it did not negotiate. Returns the
    /// number written. A packet without our template (no extension) is left alone.
    func stamp(_ base: UnsafeMutableRawPointer, length: Int, audio: Bool) -> UInt16? {
        let bytes = base.assumingMemoryBound(to: UInt8.self)
        guard length >= Self.elementOffset + 4, bytes[0] & 0x1F == 0x10, bytes[12] == 0xBE, bytes[13] == 0xDE,
            bytes[Self.elementOffset] & 0x0F == 1
        else { return nil }
        guard let id = transportWideID, !audio || stampsAudio else {
            bytes[Self.elementOffset] = 0
            bytes[Self.elementOffset + 1] = 0
            bytes[Self.elementOffset + 2] = 0
            return nil
        }
        let number = nextSequenceNumber
        nextSequenceNumber &+= 1
        bytes[Self.elementOffset] = id << 4 | 1
        bytes[Self.elementOffset + 1] = UInt8(truncatingIfNeeded: number >> 8)
        bytes[Self.elementOffset + 2] = UInt8(truncatingIfNeeded: number)
        return number
    }

    /// Remembers a stamped packet as it leaves (`size`: the protected datagram).
    func recordSent(_ number: UInt16, size: Int, at nowUs: Int64) {
        sent.record(sequenceNumber: number, sendTimeUs: nowUs, size: size, cluster: activeProbe ?? -1)
    }

    /// A transport feedback message: the delay-based estimate, probe results. Returns the rate
    /// a probe cluster found, when this message completed one.
    @discardableResult
    func receive(_ feedback: RTCPTransportFeedback, roundTripUs: Int64?, at nowUs: Int64) -> Int? {
        guard transportWideID != nil else { return nil }
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
        if let roundTripUs { delayBased.setRoundTripTime(roundTripUs) }
        delayBased.probeQueue = activeProbe != nil || probeEndedUs.map({ nowUs - $0 < Self.probeQueueUs }) == true
        let before = delayBased.bitrate
        let update = delayBased.update(with: results, at: nowUs)
        var probed: Int?
        for (result, cluster) in zip(results, clusters) where cluster >= 0 {
            guard let rate = probeEstimator.add(result, cluster: cluster) else { continue }
            statistics.lastProbeBitrate = rate
            delayBased.applyProbeResult(rate, foundRoom: probes.foundRoom(rate, cluster: cluster), at: nowUs)
            probes.record(result: rate, cluster: cluster, at: nowUs)
            if update.state != .overusing { probed = rate }
        }
        if delayBased.drainCap != nil { probes.recordDecrease(at: nowUs) }
        if delayBased.queueBackoffs != statistics.queueBackoffs {
            statistics.queueBackoffs = delayBased.queueBackoffs
            probes.recordDecrease(at: nowUs)
        }
        if update.state == .overusing && delayBased.bitrate < before {
            statistics.overuseEvents += 1
            probes.recordDecrease(at: nowUs)
        }
        statistics.delayBasedBitrate = delayBased.bitrate
        statistics.linkCapacityBitrate = delayBased.rateControl.linkCapacity.estimate.map { Int($0) }
        statistics.acknowledgedBitrate = update.acknowledgedBitrate
        statistics.delayState = "\(update.state)"
        statistics.delayTrendMilliseconds = update.trend
        statistics.thresholdMilliseconds = update.threshold
        statistics.queueDelayMilliseconds = Double(delayBased.standingQueue?.delayUs ?? 0) / 1000
        return probed
    }

    /// Whether the pacer sends at the allowed rate itself rather than at the pacing factor ×:
    /// while a standing queue drains (`DelayBasedEstimator.drainCap`) or stands above the early
    /// back-off's limit (25 ms), and after it, until what the pacer held back meanwhile has left.
    /// Released at 2.5× at once, that backlog would fill the bottleneck's queue again (measured:
    /// a second drain 2 s after the first). From 25 ms, not only from the drain's 100 ms: after
    /// a decrease x264 goes on making pictures at the old rate for a second or so, and at 2.5×
    /// they went straight into the bottleneck's queue, which went on growing for 1.3 s under an
    /// estimate already below the link (at 1080p and 3 Mbit/s; queue p95 ≈ 70 → 45 ms,
    /// Docs/congestion.md). Once no queue stands, the backlog leaves on top of the allowed rate
    /// (`pacingRate(allowed:)`).
    private(set) var pacesAtAllowedRate = false

    /// Video and retransmission bytes waiting in the pacer (audio and padding leave first).
    var pacedBacklogBytes: Int {
        guard let pacer else { return 0 }
        return pacer.queuedBytes(.video) + pacer.queuedBytes(.retransmission)
    }

    /// Enters or leaves `pacesAtAllowedRate`: left once no queue stands or is drained and the
    /// backlog leaves within `settledBacklogUs` at the pacing rate.
    func updateDrainPacing() {
        if queueStands {
            pacesAtAllowedRate = true
        } else if pacesAtAllowedRate, let pacer {
            pacesAtAllowedRate = Int64(pacedBacklogBytes) * 8_000_000 > Self.settledBacklogUs * Int64(pacer.pacingRate)
        } else {
            pacesAtAllowedRate = false
        }
    }

    /// A backlog that leaves within this long is no longer one, µs: about a picture's worth.
    static let settledBacklogUs: Int64 = 50_000

    /// The rate the pacer sends at while `pacesAtAllowedRate`: the allowed rate itself while a
    /// queue stands or drains; once none does, the link has room and the backlog leaves on top
    /// of the allowed rate within `backlogReleaseUs` (at most the pacing factor × allowed). Held
    /// at the allowed rate alone, the backlog never left: after a decrease to 2.3 Mbit/s on a
    /// 3 Mbit/s link x264 went on making 2.8 Mbit/s for a second, the pacer held 86 kB (300 ms)
    /// with no queue in the bottleneck, and the 1 → 3 Mbit/s step took 12 s to track.
    func pacingRate(allowed: Int) -> Int {
        guard let factor = pacer?.configuration.pacingFactor, !queueStands else { return allowed }
        let release = Int(Int64(pacedBacklogBytes) * 8_000_000 / Self.backlogReleaseUs)
        return min(allowed + release, Int(factor * Double(allowed)))
    }

    /// A second: at 2.5 × at once the backlog filled the bottleneck's queue again (a second
    /// drain 2 s after the first); spread over a second it adds as much as x264's overshoot
    /// after a decrease took away.
    static let backlogReleaseUs: Int64 = 1_000_000

    /// Whether a queue stands over the early back-off's limit or is being drained.
    private var queueStands: Bool {
        delayBased.drainCap != nil || delayBased.standingQueue?.isOverBackoffLimit == true
    }

    /// Whether transport feedback has arrived, so the delay-based estimate counts.
    var hasEstimate: Bool { statistics.feedbackMessages > 0 }

    /// Whether a probe can say anything yet: once transport feedback gave an acknowledged rate
    /// (half a second of it). Sent at the first feedback, the probe followed the first key frame
    /// through the pacer and the link, and at 1080p read 1.4–1.6 Mbit/s off an empty 3 Mbit/s
    /// link in every run: no room, and the next probe 2 s later (the ramp took 3.5–5 s).
    var mayProbe: Bool { delayBased.acknowledged.bitrate != nil }

    /// Starts probe cluster `id`: every packet sent until `endProbe` belongs to it, and the
    /// pacer sends it without its burst allowance (a probe measures the rate it is sent at).
    func beginProbe(id: Int, packets: Int, bytes: Int) {
        activeProbe = id
        pacer?.burstAllowed = false
        probeEstimator.begin(.init(id: id, minimumPackets: packets, minimumBytes: bytes))
        statistics.probesSent += 1
    }

    /// Ends the probe; the caller sets the pacer's rate and burst allowance again
    /// (`MediaSender.applyPacingRate`).
    func endProbe(at nowUs: Int64) {
        activeProbe = nil
        probeEndedUs = nowUs
    }

    /// When the last probe's padding left, µs.
    private var probeEndedUs: Int64?
    /// How long after a probe the queue it made may still show in feedback, µs: its bytes above
    /// the link (about 20 ms of queue) drain at what the link has spare, slowly near capacity.
    /// Meanwhile over-use holds the estimate and a standing queue is no reason for the early
    /// back-off (`DelayBasedEstimator.probeQueue`): measured at 1 Mbit/s, probes every 2 s that
    /// each lowered the estimate kept utilisation at 79–83 %.
    static let probeQueueUs: Int64 = 300_000

    /// The rate a probe doubles: the allowed rate, or the link's capacity estimate when that is
    /// higher. After a back-off the estimate sits under the link; a probe at twice it (1.4 ×
    /// a 1 Mbit/s link) read the link's token-bucket burst as room often enough (1.26–1.47 Mbit/s,
    /// over 80 % of the probe's rate) that the next probe went out at once at twice that and the
    /// estimate jumped: 80–140 ms of queue each time. At twice the capacity a full link reads
    /// far under 80 %.
    func probeBase(_ allowed: Int) -> Int {
        max(allowed, Int(delayBased.rateControl.linkCapacity.estimate ?? 0))
    }

    /// Whether the pacer may let its burst allowance leave at once: not during a probe, and not
    /// once the path's capacity is known (the delay-based controller has seen over-use near it
    /// and increases additively). Through a bottleneck near our rate the link spreads a picture
    /// over its size ÷ capacity whatever the pacer does, so the receiver sees the same arrival
    /// spread, and a picture sent at once only waits in the bottleneck's queue instead (measured
    /// at 1 Mbit/s: queue delay p95 80–100 ms with the burst, 23–36 ms without; Docs/congestion.md).
    /// Far from capacity the allowance keeps a picture whole for the receiver's jitter buffer.
    var allowsBursts: Bool {
        activeProbe == nil && delayBased.rateControl.linkCapacity.estimate == nil
    }
}

extension DestinationCongestion {
    /// The header extension every packet carries when transport-wide numbers are on: RFC 8285
    /// one-byte form, one element (id 3, 2 bytes) and a byte of padding; each destination's copy
    /// gets its own id and number or the element blanked.
    static let template = RTPHeaderExtension(
        profile: 0xBEDE,
        data: [templateID << 4 | 1, 0, 0, 0]
    )
    /// The id in the template, and the one our SDP files and WHIP offer give the extension.
    public static let templateID: UInt8 = 3
}
