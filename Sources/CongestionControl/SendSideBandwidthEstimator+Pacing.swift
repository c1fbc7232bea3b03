/// The destination's pacer (Docs/congestion.md): the caller queues packets as handles (their
/// RTP sequence numbers; the bytes stay in its history) and sends what `nextPacket` returns;
/// this decides the order, the rate and the bursts.
extension SendSideBandwidthEstimator {
    /// What a paced packet is, in the order the pacer sends them: audio, then retransmissions,
    /// video, probe padding.
    public enum PacketKind: Int, Sendable, Hashable, CaseIterable {
        case audio, retransmission, video, padding
    }

    /// Whether packets wait in a pacer (`CongestionConfiguration.pacing`); otherwise they leave
    /// as the encoder makes them.
    public var isPaced: Bool { pacer != nil }

    /// Queues one packet at `now`; false when its ring is full or nothing is paced (the caller
    /// drops it and, unless it is probe padding, counts it: `countPacerDrop`).
    public func enqueue(handle: Int, size: Int, kind: PacketKind, at now: UInt64) -> Bool {
        pacer?.enqueue(handle: handle, size: size, kind: kind, at: Int64(now / 1000)) ?? false
    }

    /// The next packet to send at `now`, or nil (budget spent or nothing queued).
    public func nextPacket(at now: UInt64) -> (handle: Int, kind: PacketKind)? {
        pacer?.next(at: Int64(now / 1000))
    }

    /// When `nextPacket` will have something again, nil when nothing waits; `now` when
    /// something may go now.
    public func nextSendTime(at now: UInt64) -> UInt64? {
        pacer?.nextSendTime(at: Int64(now / 1000)).map { UInt64(max(0, $0)) * 1000 }
    }

    /// Whether any packet waits in the pacer.
    /// Forgets the video waiting in the pacer (a viewer moved to another simulcast layer:
    /// the old layer's pictures would only delay the new one's key frame); how many packets.
    public func dropQueuedVideo() -> Int { pacer?.removeAll(.video) ?? 0 }

    public var hasQueuedPackets: Bool { (pacer?.queuedPackets ?? 0) > 0 }

    /// Charges a packet sent at once outside the pacer (audio: never held back, libwebrtc's
    /// choice too) against its budget, so paced video yields the room it took.
    public func charge(size: Int, at now: UInt64) {
        pacer?.charge(size: size, at: Int64(now / 1000))
    }

    /// Video and retransmission bytes waiting in the pacer (audio and padding leave first).
    var pacedBacklogBytes: Int {
        guard let pacer else { return 0 }
        return pacer.queuedBytes(.video) + pacer.queuedBytes(.retransmission)
    }

    /// Enters or leaves `pacesAtAllowedRate`: entered while a queue stands over the early
    /// back-off's limit (25 ms) or is being drained (`DelayBasedEstimator.drainCap`), left
    /// once none does and the backlog leaves within `settledBacklogUs` at the pacing rate.
    /// Released at 2.5× at once, that backlog would fill the bottleneck's queue again. From
    /// 25 ms, not only from the drain's 100 ms: after a decrease the encoder goes on making
    /// pictures at the old rate for a second or so, and at 2.5× they go straight into the
    /// bottleneck's queue. Once no queue stands, the backlog leaves on top of the allowed rate
    /// (`pacingRate(allowed:)`).
    /// Decision D19 (Docs/congestion.md): after a capacity drop, pace at the allowed rate.
    public func updateDrainPacing() {
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

    /// Sets the pacer's rate: the pacing factor × the larger of this destination's allowed rate
    /// and the encoder's target (`encoderTarget`: a receiver below the encoder's rate, an
    /// outlier the policy left behind, must still drain what the encoder makes). While
    /// `pacesAtAllowedRate`, a receiver the encoder follows (`followed`) is paced at its allowed
    /// rate itself (`pacingRate(allowed:)`): the link is full, so what the pacer holds back
    /// would only wait in the bottleneck's queue instead, where audio and retransmissions can no
    /// longer overtake it; an outlier's link cannot carry the encoder's rate at all, and pacing
    /// it at its own rate would only grow its backlog to the queue-age limit. The burst
    /// allowance applies only while the path has room (`allowsBursts`). Nothing changes while a
    /// probe is sent: it runs at the probe's rate.
    /// `shownRate`: what the path has shown it carries, when the caller knows better than the
    /// estimate (a loss-only receiver of a fixed-rate simulcast layer); the target rate stays
    /// under it, never under `encoderTarget`.
    public func updatePacingRate(encoderTarget: Int, followed: Bool, shownRate: Int? = nil) {
        guard activeProbe == nil else { return }
        pacer?.burstAllowed = allowsBursts
        if pacesAtAllowedRate, followed, let allowed = allowedBitrate {
            // Read before the pacer is modified (`pacingRate` reads it).
            let rate = pacingRate(allowed: allowed)
            pacer?.setPacingRate(rate)
        } else {
            let allowed = min(allowedBitrate ?? 0, shownRate ?? .max)
            pacer?.setTargetRate(max(allowed, encoderTarget))
        }
    }

    /// The rate the pacer sends at while `pacesAtAllowedRate`: the allowed rate itself while a
    /// queue stands or drains; once none does, the link has room and the backlog leaves on top
    /// of the allowed rate within `backlogReleaseUs` (at most the pacing factor × allowed). Held
    /// at the allowed rate alone, the backlog of an encoder's overshoot would never leave.
    /// Decision D19 (Docs/congestion.md): the backlog leaves over 1 s once no queue stands.
    func pacingRate(allowed: Int) -> Int {
        guard let factor = pacer?.configuration.pacingFactor, !queueStands else { return allowed }
        let release = Int(Int64(pacedBacklogBytes) * 8_000_000 / Self.backlogReleaseUs)
        return min(allowed + release, Int(factor * Double(allowed)))
    }

    /// A second: at 2.5 × at once the backlog would fill the bottleneck's queue again; spread
    /// over a second it adds about as much as the encoder's overshoot after a decrease took away.
    static let backlogReleaseUs: Int64 = 1_000_000

    /// Whether a queue stands over the early back-off's limit or is being drained.
    private var queueStands: Bool {
        delayBased.drainCap != nil || delayBased.standingQueue?.isOverBackoffLimit == true
    }

    /// Whether the next picture should not be encoded yet: this pacer holds more video and
    /// retransmissions than leave in `CongestionConfiguration.maximumPacedBacklogUs` at its
    /// rate (not while a probe is sent). libwebrtc drops frames while its congestion window is
    /// full for the same reason: after the capacity fell, what the encoder made at the old rate
    /// waits in the pacer, and a new picture would only wait behind it, adding its delay to
    /// every later one. The caller asks only of receivers the encoder follows.
    /// Decision D21 (Docs/congestion.md): pictures wait at 1.5 s of paced backlog.
    public var holdsVideo: Bool {
        let limit = configuration.maximumPacedBacklogUs
        guard limit > 0, let pacer, activeProbe == nil else { return false }
        let bytes = pacedBacklogBytes
        guard bytes > 0 else { return false }
        return Int64(bytes) * 8_000_000 / Int64(pacer.pacingRate) > limit
    }

    /// Whether the pacer may let its burst allowance leave at once: not during a probe, and not
    /// once the path's capacity is known (the delay-based controller has seen over-use near it
    /// and increases additively). Through a bottleneck near our rate the link spreads a picture
    /// over its size ÷ capacity whatever the pacer does, so the receiver sees the same arrival
    /// spread, and a picture sent at once only waits in the bottleneck's queue instead. Far from
    /// capacity the allowance keeps a picture whole for the receiver's jitter buffer.
    /// Decision D18 (Docs/congestion.md): no burst allowance once the link's capacity is known.
    var allowsBursts: Bool {
        activeProbe == nil && delayBased.rateControl.linkCapacity.estimate == nil
    }
}
