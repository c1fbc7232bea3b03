/// Probing (Docs/congestion.md): the caller fills a due probe with padding (RTX copies of its
/// newest video packets), queued in the pacer while it runs at the probe's rate; every packet
/// sent meanwhile belongs to the probe's cluster, and transport feedback about them says what
/// rate the path carried (`ProbeBitrateEstimator`, `ProbeController`).
extension SendSideBandwidthEstimator {
    /// A probe to send at `now`, (cluster id, rate in bits per second), or nil: probing is on,
    /// the destination is paced, no probe is in flight, one may say anything yet (`mayProbe`)
    /// and the probe controller wants one.
    public func dueProbe(at now: UInt64) -> (id: Int, rate: Int)? {
        guard configuration.probing, mayProbe, activeProbe == nil, pacer != nil else { return nil }
        let estimate = targetBitrate
        return probes.probe(at: Int64(now / 1000), estimate: estimate, base: probeBase(estimate))
    }

    /// Starts probe cluster `id` at `rate`, the caller having queued `packets` packets of `bytes`
    /// as padding: the pacer runs at the probe's rate, without its burst allowance (a probe
    /// measures the rate it is sent at), and every packet sent until the padding has left
    /// belongs to the cluster.
    /// `unmeasuredProbe` as `id`: a probe that transport feedback does not measure (the caller
    /// judges it another way).
    public func beginProbe(id: Int, rate: Int, packets: Int, bytes: Int) {
        pacer?.setPacingRate(rate)
        activeProbe = id
        pacer?.burstAllowed = false
        if id != Self.unmeasuredProbe {
            probeEstimator.begin(.init(id: id, minimumPackets: packets, minimumBytes: bytes))
        }
        statistics.probesSent += 1
    }

    /// The cluster id of a probe no transport feedback measures; packets outside probes carry it too.
    public static let unmeasuredProbe = -1

    /// Whether a probe's padding is still being sent.
    public var isProbing: Bool { activeProbe != nil }

    /// Ends the probe at `now` once its padding has left; true when it did, and the caller then
    /// sets the pacing rate again (`updatePacingRate`).
    public func endProbeIfSent(at now: UInt64) -> Bool {
        guard activeProbe != nil, pacer?.queued(.padding) == 0 else { return false }
        endProbe(at: Int64(now / 1000))
        return true
    }

    /// Ends the probe at `nowUs`.
    func endProbe(at nowUs: Int64) {
        activeProbe = nil
        probeEndedUs = nowUs
    }

    /// How long after a probe the queue it made may still show in feedback, µs: its bytes above
    /// the link (about 20 ms of queue) drain at what the link has spare, slowly near capacity.
    /// Meanwhile over-use holds the estimate and a standing queue is no reason for the early
    /// back-off (`DelayBasedEstimator.probeQueue`).
    /// Decision D16 (Docs/congestion.md): a probe's own queue lowers nothing for 300 ms.
    static let probeQueueUs: Int64 = 300_000

    /// Whether a probe can say anything yet: once transport feedback gave an acknowledged rate
    /// (half a second of it). Sent at the first feedback, the probe would follow the first key
    /// frame through the pacer and the link and read the key frame's queue, not the link.
    /// Decision D24 (Docs/congestion.md): the first probe waits for R_hat.
    var mayProbe: Bool { delayBased.acknowledged.bitrate != nil }

    /// The rate a probe doubles: the allowed rate, or the link's capacity estimate when that is
    /// higher. After a back-off the estimate sits under the link, and a probe at twice it can
    /// read a token bucket's burst as room; at twice the capacity a full link reads far under
    /// the 80 % that counts as room.
    /// Decision D25 (Docs/congestion.md): probes double the larger of estimate and capacity.
    func probeBase(_ allowed: Int) -> Int {
        max(allowed, Int(delayBased.rateControl.linkCapacity.estimate ?? 0))
    }
}
