/// One destination's congestion control for the status line and `--stats-json`
/// (Docs/congestion.md): the send-side estimate and its parts, the delay trend, probing and the
/// pacer's queue.
public struct CongestionStatistics: Sendable, Codable, Equatable {
    /// Whether this receiver agreed on transport-wide sequence numbers (`transport-cc`).
    public var transportWide = false
    /// Transport feedback messages accepted, and the packets they reported lost.
    public var feedbackMessages = 0
    public var reportedLost = 0
    /// Feedback about numbers we no longer (or never) remembered.
    public var unknownPackets = 0
    /// The delay-based estimate, bits per second (nil before the first feedback).
    public var delayBasedBitrate: Int?
    /// The rate the receiver acknowledged lately, bits per second.
    public var acknowledgedBitrate: Int?
    /// The link capacity the rate controller has seen at over-uses or measured in a drain
    /// (nil: none known, the increase is multiplicative), bits per second.
    public var linkCapacityBitrate: Int?
    /// normal / underusing / overusing, and the modified trend against the adaptive threshold
    /// (ms, as draft-ietf-rmcat-gcc-02 §5.4 compares them).
    public var delayState: String?
    public var delayTrendMilliseconds: Double?
    public var thresholdMilliseconds: Double?
    public var overuseEvents = 0
    /// Early back-offs: decreases for a queue over 25 ms the trend had not shown
    /// (`StandingQueueDetector.takeBackoff`).
    public var queueBackoffs = 0
    /// The one-way delay above its recent minimum: the queue on the path, ms.
    public var queueDelayMilliseconds: Double?
    /// Probe clusters sent and the last one's result, bits per second.
    public var probesSent = 0
    public var lastProbeBitrate: Int?
    /// The pacer: its rate, what waits in it now (packets, and the oldest one's age), packets it
    /// dropped (ring full, or gone from the history before their turn).
    public var pacingBitrate: Int?
    public var pacerQueuePackets = 0
    public var pacerQueueMilliseconds = 0.0
    public var pacerDropped = 0

    public init() {}
}
