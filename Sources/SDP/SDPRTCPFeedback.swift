/// RFC 4585 §4.2 `a=rtcp-fb:<payload type or *> <type> [<parameters>]`: which RTCP feedback a
/// receiver may send for a payload format. RFC 4585 §4.2 defines `ack`, `nack` and `trr-int`;
/// RFC 5104 §7.1 adds `ccm` (`ccm fir`); `goog-remb` is the REMB draft's (and Chrome's) token,
/// `transport-cc` draft-holmer-rmcat-transport-wide-cc-extensions-01's.
public struct SDPRTCPFeedback: Sendable, Hashable {
    /// The payload type it applies to; nil for `*`, every payload type of the section.
    public var payloadType: UInt8?
    /// `nack`, `ccm`, `goog-remb`, `transport-cc`, `trr-int`, … (a token).
    public var type: String
    /// What follows the type, e.g. `pli` for `nack pli` or `fir` for `ccm fir`; space-separated
    /// visible tokens, nil when absent.
    public var parameter: String?

    public init(payloadType: UInt8?, type: String, parameter: String? = nil) {
        self.payloadType = payloadType
        self.type = type
        self.parameter = parameter
    }

    /// RFC 4585 §4.2 generic NACK: the receiver may ask for lost packets again.
    public static func nack(payloadType: UInt8?) -> SDPRTCPFeedback {
        SDPRTCPFeedback(payloadType: payloadType, type: "nack")
    }

    /// RFC 4585 §4.2 `nack pli`: the receiver may send picture loss indications.
    public static func pictureLossIndication(payloadType: UInt8?) -> SDPRTCPFeedback {
        SDPRTCPFeedback(payloadType: payloadType, type: "nack", parameter: "pli")
    }

    /// RFC 5104 §7.1 `ccm fir`: the receiver may send full intra requests.
    public static func fullIntraRequest(payloadType: UInt8?) -> SDPRTCPFeedback {
        SDPRTCPFeedback(payloadType: payloadType, type: "ccm", parameter: "fir")
    }

    /// `goog-remb`: the receiver may send REMB (draft-alvestrand-rmcat-remb).
    public static func receiverEstimatedMaximumBitrate(payloadType: UInt8?) -> SDPRTCPFeedback {
        SDPRTCPFeedback(payloadType: payloadType, type: "goog-remb")
    }

    /// `transport-cc` (draft-holmer-rmcat-transport-wide-cc-extensions-01 §3): the receiver may
    /// send transport-wide congestion control feedback (RTPFB FMT 15) about the packets that
    /// carry the transport-wide sequence number header extension.
    public static func transportWideCongestionControl(payloadType: UInt8?) -> SDPRTCPFeedback {
        SDPRTCPFeedback(payloadType: payloadType, type: "transport-cc")
    }

    /// Whether this line applies to `payloadType` (its own, or `*`).
    public func applies(to payloadType: UInt8) -> Bool {
        self.payloadType == nil || self.payloadType == payloadType
    }
}

extension MediaDescription {
    /// Whether the section offers feedback `type` (with `parameter`) for `payloadType`.
    public func offersFeedback(_ type: String, parameter: String? = nil, payloadType: UInt8) -> Bool {
        rtcpFeedback.contains { $0.applies(to: payloadType) && $0.type == type && $0.parameter == parameter }
    }
}
