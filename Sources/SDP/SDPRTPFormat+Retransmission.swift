/// RFC 4588 §8.1 RTX payload formats: `a=rtpmap:<pt> rtx/<clock rate>` and
/// `a=fmtp:<pt> apt=<original pt>[;rtx-time=<ms>]`.
extension SDPRTPFormat {
    /// The RTX format retransmitting `associatedPayloadType` (at the same clock rate, §8.1), with
    /// `rtx-time` (ms a retransmission is still useful, §8.1) when given.
    public static func retransmission(
        payloadType: UInt8,
        associatedPayloadType: UInt8,
        clockRate: UInt32 = 90_000,
        retransmissionTime: Int? = nil
    ) -> SDPRTPFormat {
        var parameters = [SDPFormatParameter(name: "apt", value: String(associatedPayloadType))]
        if let retransmissionTime {
            parameters.append(SDPFormatParameter(name: "rtx-time", value: String(retransmissionTime)))
        }
        return SDPRTPFormat(
            payloadType: payloadType,
            rtpmap: SDPRTPMap(encodingName: "rtx", clockRate: clockRate),
            parameters: parameters
        )
    }

    /// Whether this is an RTX format (encoding name `rtx`, case-insensitive as RFC 4855 §3 has it).
    public var isRetransmission: Bool {
        rtpmap?.encodingName.lowercased() == "rtx"
    }

    /// For an RTX format, the payload type it retransmits (`apt`); nil otherwise or when the
    /// value is not a payload type 0–127.
    public var associatedPayloadType: UInt8? {
        guard isRetransmission, let text = parameter("apt"), let value = SDPSyntax.decimal(text, as: UInt8.self),
            value <= 127
        else { return nil }
        return value
    }
}

extension MediaDescription {
    /// The RTX format retransmitting `payloadType`, if the section has one.
    public func retransmissionFormat(for payloadType: UInt8) -> SDPRTPFormat? {
        formats.first { $0.associatedPayloadType == payloadType }
    }
}
