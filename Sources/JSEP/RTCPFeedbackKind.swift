import SDP

/// The RTCP feedback a sender of ours acts on, one case per `a=rtcp-fb` token pair. An answer
/// lists, per payload type, only those the offer listed for it (RFC 4585 §4.2: a receiver sends
/// only feedback both sides agreed on), in the offer's order.
///
/// `transport-cc` is not here yet: answering it means stamping the transport-wide sequence
/// number on every packet, which belongs to congestion control.
public enum RTCPFeedbackKind: String, Sendable, Hashable, CaseIterable {
    /// `nack` (RFC 4585 §4.2): resend lost packets.
    case nack
    /// `nack pli` (RFC 4585 §6.3.1): send a key frame.
    case pictureLossIndication
    /// `ccm fir` (RFC 5104 §4.3.1): send a key frame, to a new decoder.
    case fullIntraRequest
    /// `goog-remb`: the receiver's bandwidth estimate caps our bitrate.
    case receiverEstimatedMaximumBitrate
    /// `transport-cc` (draft-holmer-rmcat-transport-wide-cc-extensions-01 §3): the receiver
    /// reports arrival times per transport-wide sequence number; our congestion control reads them.
    case transportWideCongestionControl

    /// The kind an `a=rtcp-fb` line names, or nil for others (`trr-int`, `ack`, …).
    /// Tokens compare case-insensitively (ABNF strings are).
    public init?(_ feedback: SDPRTCPFeedback) {
        switch (feedback.type.lowercased(), feedback.parameter?.lowercased()) {
        case ("nack", nil): self = .nack
        case ("nack", "pli"): self = .pictureLossIndication
        case ("ccm", "fir"): self = .fullIntraRequest
        case ("goog-remb", nil): self = .receiverEstimatedMaximumBitrate
        case ("transport-cc", nil): self = .transportWideCongestionControl
        default: return nil
        }
    }

    /// The `a=rtcp-fb` line for `payloadType`.
    public func line(payloadType: UInt8) -> SDPRTCPFeedback {
        switch self {
        case .nack: .nack(payloadType: payloadType)
        case .pictureLossIndication: .pictureLossIndication(payloadType: payloadType)
        case .fullIntraRequest: .fullIntraRequest(payloadType: payloadType)
        case .receiverEstimatedMaximumBitrate: .receiverEstimatedMaximumBitrate(payloadType: payloadType)
        case .transportWideCongestionControl: .transportWideCongestionControl(payloadType: payloadType)
        }
    }

    /// What to answer for `payloadType`: the kinds in `supported` that `media` offers for it (on
    /// its own line or with `*`), in the offer's order, each once.
    static func answer(
        offeredIn media: MediaDescription,
        payloadType: UInt8,
        supported: Set<RTCPFeedbackKind>
    ) -> [RTCPFeedbackKind] {
        var kinds: [RTCPFeedbackKind] = []
        for line in media.rtcpFeedback where line.applies(to: payloadType) {
            guard let kind = RTCPFeedbackKind(line), supported.contains(kind), !kinds.contains(kind) else { continue }
            kinds.append(kind)
        }
        return kinds
    }
}
