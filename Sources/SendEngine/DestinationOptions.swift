import SRTP

/// How one destination takes part in receiver feedback (Docs/feedback.md).
public struct DestinationOptions: Sendable, Equatable {
    /// How lost packets a receiver NACKs are resent.
    public enum Retransmission: Sendable, Equatable {
        /// NACKs are counted, nothing is resent.
        case off
        /// The original packet again, same SSRC and sequence number: byte-identical SRTP, works
        /// with every receiver, but only within the receiver's SRTP replay window, and a resent
        /// packet looks late to the receiver's jitter estimate (one of the reasons RFC 4588
        /// resends in a stream of its own).
        case sameSSRC
        /// RFC 4588 RTX: a separate stream (own SSRC, payload type, sequence numbers); needs a
        /// receiver that negotiated it (`a=rtpmap:<pt> rtx/90000`, `apt`).
        case rtx
    }

    public var retransmission: Retransmission
    /// Accept RTCP that is not SRTCP-authenticated when it parses as clear RTCP. Janus 1.1
    /// sends its PLI and REMB in the clear; without this they are dropped. The risk: anyone who
    /// can put a datagram on this socket from the destination's host address can ask for key
    /// frames (cost: bitrate), NACK packets (cost: resends, bounded by the limiter) and cap the
    /// bitrate with a REMB. Off by default.
    public var acceptsUnauthenticatedFeedback: Bool
    /// The key the receiver protects its SRTCP with; nil means the destination's own keys (what
    /// a receiver configured from our one-key SDP file uses).
    public var feedbackKeys: SRTPKeyMaterial?
    /// Write `RTP/SAVPF` and `a=rtcp-fb` lines (nack, nack pli, ccm fir, goog-remb) into this
    /// destination's SDP file. RTX formats are written whenever `retransmission` is `.rtx`.
    public var advertisesFeedback: Bool
    /// The payload types this receiver chose (a WebRTC offer's numbers); nil: ours as sent.
    public var payloadTypes: PayloadTypeRewrite?
    /// The RFC 8285 one-byte id this receiver agreed for the transport-wide sequence number
    /// (`transport-cc`, draft-holmer-rmcat-transport-wide-cc-extensions-01), nil when it did
    /// not; `transportWideAudio` when its audio carries it too. Ignored with `.sameSSRC`
    /// retransmission: a resend must be byte-identical to the original under its SRTP index,
    /// and the number is per send.
    public var transportWideSequenceNumberID: UInt8?
    public var transportWideAudio: Bool
    /// It agreed on transport feedback in an offer/answer exchange (a WebRTC viewer, a WHIP
    /// endpoint), so it will report: its path is unknown until then and its estimate starts at
    /// `CongestionConfiguration.unknownPathStart` (D33). A receiver of our SDP file may send
    /// transport feedback or only RR; it starts at the configured rate.
    public var agreedOnTransportFeedback: Bool
    /// The receiver asks for the key frames it needs (PLI, FIR: WebRTC viewers, WHIP endpoints),
    /// so it needs no periodic refresh. False for SDES receivers (the preview, `--to`, room
    /// subscribers with an SDP file): ffplay and the like never ask, and one that starts late
    /// decodes from the next refresh (Docs/cadence.md).
    public var asksForKeyFrames: Bool
    /// Which video layers it gets (`MediaSender.Configuration.simulcast`): layer 0, or all of
    /// them with their rids (an SFU that took our simulcast offer).
    public var layers: DestinationLayers

    public init(
        retransmission: Retransmission = .sameSSRC,
        acceptsUnauthenticatedFeedback: Bool = false,
        feedbackKeys: SRTPKeyMaterial? = nil,
        advertisesFeedback: Bool = false,
        payloadTypes: PayloadTypeRewrite? = nil,
        transportWideSequenceNumberID: UInt8? = nil,
        transportWideAudio: Bool = false,
        agreedOnTransportFeedback: Bool = false,
        asksForKeyFrames: Bool = false,
        layers: DestinationLayers = .first
    ) {
        self.layers = layers
        self.asksForKeyFrames = asksForKeyFrames
        self.transportWideSequenceNumberID = transportWideSequenceNumberID
        self.transportWideAudio = transportWideAudio
        self.agreedOnTransportFeedback = agreedOnTransportFeedback
        self.payloadTypes = payloadTypes
        self.retransmission = retransmission
        self.acceptsUnauthenticatedFeedback = acceptsUnauthenticatedFeedback
        self.feedbackKeys = feedbackKeys
        self.advertisesFeedback = advertisesFeedback
    }
}
