import CongestionControl
import RTP

/// Sender-wide settings for what receivers send back (Docs/feedback.md).
public struct FeedbackConfiguration: Sendable, Hashable {
    /// Loss-based rate control per receiver (GCC §6): bounds, start, thresholds.
    public var bitrate = CongestionConfiguration.LossBased()
    /// The combined target never goes below this, whatever the worst receiver reports
    /// (`ReceiverBitratePolicy`); nil: the controller's minimum.
    public var bitrateFloor: Int?
    /// A new target is returned from `pollFeedback` only when it differs from the last one
    /// returned by at least this fraction, so the encoder is not reconfigured for noise.
    public var bitrateChangeThreshold = 0.05
    /// At most one key frame per this many ns across all requesters.
    public var keyFrameInterval = KeyFrameRequestLimiter.defaultInterval
    /// Seconds of video the retransmission history holds at the maximum bitrate (at least 1024
    /// packets whatever this says). The pacer reads queued video from it too, and lets a packet
    /// wait up to 2 s, so it holds more than that.
    public var historySeconds = 2.5
    /// What a receiver that never reported (no RR, REMB or transport feedback, so no allowed
    /// rate) may have resent: at most this share of the video bytes sent over the limiter's
    /// 500 ms window (`RetransmissionLimiter.rateWindow`), as a rate. Without it such a receiver
    /// had no rate limit at all: a NACK storm from a WebRTC viewer that never reported made the
    /// publisher send 13–15 times its packets, and an honest viewer fell to 14 fps.
    ///
    /// Why the video actually sent and not the encoder's target: a static screen sends a small
    /// fraction of its target, and a share of the target would let a storm multiply that. Why
    /// half: an honest receiver needs its loss rate's share resent, so half the media rate
    /// answers every NACK up to 50 % loss (a refused one is asked for again and may go in the
    /// next window), far past where the picture is watchable anyway; a storm adds at most half
    /// the media rate on its receiver's path, 1.5 × in all. libwebrtc's limit is the same
    /// window at the whole target rate, but it has an estimate from the start; here the
    /// receiver gave none.
    public var unreportedRetransmissionShare = 0.5
    /// The payload type of RTX packets (RFC 4588 §8.1), for destinations that use RTX.
    public var rtxPayloadType: UInt8 = 99
    /// A packet is resent to the same receiver at most once per its RTT; this is used until an
    /// RR has measured the RTT, and as the lower bound after (ns).
    public var defaultRoundTrip: UInt64 = 100_000_000
    public var minimumRetransmissionInterval: UInt64 = 10_000_000
    /// Datagrams read per socket per `pollFeedback`, so a flood cannot stall the media thread;
    /// the rest wait for the next call.
    public var maximumDatagramsPerPoll = 256

    public init() {}
}
