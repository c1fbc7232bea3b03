/// Sender-wide settings of send-side congestion control (Docs/congestion.md). Off in a bare
/// `MediaSender` (every packet leaves as it is cut, headers as RFC 3550 alone makes them);
/// `rtc-publish` turns all of it on (`CongestionConfiguration.enabled`).
public struct CongestionConfiguration: Sendable, Hashable {
    /// Put a transport-wide sequence number slot in every packet and stamp it for receivers
    /// that agreed on `transport-cc`; their feedback drives a delay-based estimate.
    public var transportWide = false
    /// Pace every destination's packets (`Pacer`); nil sends each picture as one burst.
    public var pacing: Pacing?
    /// Probe for capacity above the estimate (RTX copies of recent packets as padding) for
    /// receivers with transport feedback and RTX.
    public var probing = true
    /// How long a probe cluster's padding lasts at its rate at least, µs (libwebrtc: 15 ms),
    /// and its fewest packets (libwebrtc: 5).
    public var probeDurationUs: Int64 = 20_000
    public var probeMinimumPackets = 5
    /// What of a receiver's allowed rate is not the encoder's: the estimates count every byte on
    /// the wire (audio, RTX, RTP/SRTP/UDP/IP headers), the encoder's target only the video
    /// payload. The video target is `videoShare` × the allowed rate − `reservedBitrate`
    /// (libwebrtc allocates the audio's rate first and subtracts the packet overhead the same
    /// way). 1 and 0 leave the allowed rate as the video target.
    /// Decision D23 (Docs/congestion.md): rtc-publish gives video 95 % less the audio's share.
    public var videoShare = 1.0
    public var reservedBitrate = 0
    /// Pictures are not encoded while a followed receiver's pacer holds more video than leaves
    /// in this long, µs (`SendSideBandwidthEstimator.holdsVideo`); 0 never holds. A held picture
    /// is a freeze the viewer sees, so only a backlog the pushback (`backlogPushbackUs`) does
    /// not clear is worth one.
    /// Decision D21 (Docs/congestion.md): pictures wait at 1.5 s of paced backlog.
    public var maximumPacedBacklogUs: Int64 = 1_500_000
    /// While a receiver's pacer sends at its allowed rate with a backlog (after a capacity
    /// drop), the encoder's vote for it is lowered by that backlog spread over this long, µs
    /// (`SendSideBandwidthEstimator.encoderVote`); 0 never lowers it.
    /// Decision D20 (Docs/congestion.md): the encoder's pushback.
    public var backlogPushbackUs: Int64 = 1_000_000
    /// β of the delay-based decrease (draft-ietf-rmcat-gcc-02 §5.5 allows 0.8–0.95 and
    /// recommends 0.85). 0.85 drains the queue an over-use built before it was seen; here a
    /// standing queue has its own drain (`StandingQueueDetector`), so the back-off only has to end
    /// the growth.
    /// Decision D7 (Docs/congestion.md): β = 0.9 keeps the sawtooth's trough inside 85 % of the link.
    public var backoffFactor = 0.9
    /// Where the estimate of a receiver with transport-wide feedback starts, bits per second
    /// (libwebrtc's default start, 300 kbit/s): its path is unknown, and the room's encoder may
    /// run far above what it carries. It votes this rate from the moment it is added, so the key
    /// frame it joins on is made for it, until it reports or `startVoteUs` after its first
    /// packet; probing finds the rest within about a second of its first acknowledged rate.
    /// nil starts it at the configured start rate, as receivers without that feedback do.
    /// Decision D33 (Docs/congestion.md): an unknown path starts at 300 kbit/s.
    public var unknownPathStart: Int? = 300_000
    /// How long after its first packet a receiver that never reported still votes its start,
    /// µs: one that negotiated feedback and sends none must not hold the room's encoder down.
    public var startVoteUs: Int64 = 2_000_000

    public init() {}

    /// Transport-wide numbers, pacing and probing all on: what `rtc-publish` runs.
    public static var enabled: CongestionConfiguration {
        var configuration = CongestionConfiguration()
        configuration.transportWide = true
        // Chromium's pacer lets 40 ms of data leave at once: pictures arrive whole, and the
        // receiver's jitter buffer does not grow to the spread of a paced picture.
        // Decision D17 (Docs/congestion.md): a 40 ms burst allowance.
        configuration.pacing = Pacing(burstAllowanceUs: 40_000)
        return configuration
    }

    /// The encoder's target for a receiver that allows `bitsPerSecond` on the wire.
    func videoTarget(forWireRate bitsPerSecond: Int) -> Int {
        Int(Double(bitsPerSecond) * videoShare) - reservedBitrate
    }

    /// The bounds and start of a receiver's estimates: `unknownPathStart` (within the bounds)
    /// instead of the configured start for a receiver whose path is unknown.
    func receiverBitrate(_ bitrate: LossBased, pathUnknown: Bool) -> LossBased {
        guard pathUnknown, let start = unknownPathStart, start < bitrate.start else { return bitrate }
        var result = bitrate
        result.start = max(start, bitrate.minimum)
        return result
    }

    /// The delay-based controller's bounds and start, those of the loss-based one.
    func rateControl(_ bitrate: LossBased) -> AIMDRateController.Configuration {
        AIMDRateController.Configuration(
            minimum: bitrate.minimum,
            maximum: bitrate.maximum,
            start: bitrate.start,
            backoffFactor: backoffFactor
        )
    }
}
