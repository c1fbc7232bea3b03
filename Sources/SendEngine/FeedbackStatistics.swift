import CongestionControl
import ProcessSupport
import RTP

/// What one destination's receiver told us and what we did about it, for the status line and
/// `--stats-json`.
public struct FeedbackStatistics: Sendable, Codable, Equatable {
    /// RTCP compound packets accepted (authenticated, or clear when allowed).
    public var rtcpPackets = 0
    /// Of those, accepted in the clear (`acceptsUnauthenticatedFeedback`).
    public var rtcpUnauthenticated = 0
    /// Dropped: SRTCP authentication or replay check failed (and not acceptable in the clear).
    public var rtcpAuthenticationFailures = 0
    /// Dropped: authenticated (or clear) but not a well-formed compound RTCP packet.
    public var rtcpMalformed = 0
    /// Dropped: not RTCP at all (second byte outside 192–223, RFC 5761 §4) or too short.
    public var notRTCP = 0
    /// Dropped: sent from a host other than the destination's.
    public var foreignSource = 0
    /// The latest reception report about our video and our audio.
    public var video: ReceiverReportSummary?
    public var audio: ReceiverReportSummary?
    /// NACKed sequence numbers: asked, resent, not in the history, suppressed (within an RTT),
    /// over the rate (the last half second's resends already at the allowed rate).
    public var nack = RetransmissionLimiter.Statistics()
    /// NACKed sequence numbers not served because retransmission is off for this destination.
    public var nackIgnored = 0
    /// Retransmissions the socket refused or SRTP could not protect.
    public var retransmissionFailures = 0
    /// Resends that left, per video layer (index 0 the highest; one entry without simulcast):
    /// with simulcast each layer is repaired from its own history.
    public var repairsByLayer: [Int] = []
    public var pictureLossIndications = 0
    public var fullIntraRequests = 0
    /// The latest REMB, bits per second.
    public var receiverEstimatedMaximumBitrate: UInt64?
    /// What this receiver's reports allow (loss-based estimate under its REMB), bits per second.
    public var bitrateEstimate: Int?
    /// Send-side congestion control for this destination (transport-wide feedback, pacer).
    public var congestion: CongestionStatistics?
    /// With simulcast, a viewer of our room: the rid of the layer it watches now, the one it
    /// moves to at that layer's next key frame, and its moves so far.
    public var layer: String?
    public var nextLayer: String?
    public var layerSwitches = 0
    /// With simulcast, a viewer that reports only loss: its probes before a move up that
    /// passed and failed, and the last one's queueing delay (`LayerProbe`).
    public var layerProbesPassed = 0
    public var layerProbesFailed = 0
    public var layerProbeDelayMilliseconds: Int?
    /// With simulcast, an SFU: the layers dropped from the top because its estimate cannot
    /// carry them (taken back when it can).
    public var droppedLayers: [String] = []

    public init() {}

    /// Every datagram dropped as bad.
    public var rtcpBad: Int { rtcpAuthenticationFailures + rtcpMalformed + notRTCP + foreignSource }

    /// One compact status fragment: `loss 5.1% jitter 2.3 ms rtt 12 ms nack 40/38/2/0 bad 0`.
    public var statusText: String {
        var parts: [String] = []
        if let video {
            parts.append(
                "loss \(fixedDecimal(video.fractionLost * 100, places: 1))% jitter \(fixedDecimal(video.jitterMilliseconds, places: 1)) ms"
            )
            if let rtt = video.roundTripMilliseconds { parts.append("rtt \(fixedDecimal(rtt, places: 0)) ms") }
        }
        parts.append("nack \(nack.asked)/\(nack.sent)/\(nack.notFound)/\(nack.suppressed)/\(nack.overRate)")
        parts.append("pli \(pictureLossIndications) fir \(fullIntraRequests)")
        if let bitrateEstimate { parts.append("estimate \(bitrateEstimate / 1000) kbit/s") }
        if let congestion, congestion.transportWide { parts.append(congestion.statusText) }
        if let layer { parts.append("layer \(layer)\(nextLayer.map { "→\($0)" } ?? "")") }
        if layerProbesPassed + layerProbesFailed > 0 {
            let delay = layerProbeDelayMilliseconds.map { " (\($0) ms)" } ?? ""
            parts.append("up probes \(layerProbesPassed)/\(layerProbesPassed + layerProbesFailed)\(delay)")
        }
        if !droppedLayers.isEmpty { parts.append("dropped \(droppedLayers.joined(separator: ","))") }
        parts.append("bad \(rtcpBad)")
        return parts.joined(separator: " ")
    }
}
