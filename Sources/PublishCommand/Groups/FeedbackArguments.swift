import ArgumentParser
import SendEngine

/// What receivers may ask for and how the sending adapts: NACK resends, the feedback the SDP
/// files advertise and accept, transport-wide congestion control, pacing and probing.
public struct FeedbackArguments: ParsableArguments {
    @Option(help: "Resend NACKed packets: same-ssrc, rtx (RFC 4588, advertised in the SDP files) or off.")
    public var nack: Parsed<DestinationOptions.Retransmission> = "same-ssrc"
    @Flag(help: "Write RTP/SAVPF and a=rtcp-fb (nack, nack pli, ccm fir, goog-remb) into the SDP files.")
    public var rtcpFb = false
    @Flag(help: "Accept clear (unauthenticated) RTCP feedback from the preview and --to receivers (Janus).")
    public var acceptClearFeedback = false
    @Flag(help: "Neither offer nor answer transport-cc: no transport-wide numbers, no delay-based estimate.")
    public var noTransportCc = false
    @Flag(help: "Send each picture's packets at once instead of pacing them at 2.5 x the target rate.")
    public var noPacing = false
    @Option(
        help:
            "Data the pacer lets leave at once while a viewer's link has room, ms of its rate (0-100; Chromium: 40; 0 spreads every picture)."
    )
    public var pacingBurstMs = 40
    @Flag(help: "Do not probe for capacity above the estimate (RTX padding) with transport-cc receivers.")
    public var noProbing = false

    public init() {}
}
