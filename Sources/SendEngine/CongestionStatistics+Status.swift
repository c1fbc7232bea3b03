import CongestionControl
import ProcessSupport

/// The congestion part of the status line (`FeedbackStatistics.statusText`).
extension CongestionStatistics {
    /// `cc 2310 kbit/s cap 2950 normal trend 0.4/12.5 ms probes 4 last 3120 q 2 pkt 3 ms`: what
    /// a CI log needs to tell the estimate's limit from the encoder's.
    public var statusText: String {
        guard transportWide else { return "" }
        var parts = ["cc \((delayBasedBitrate ?? 0) / 1000) kbit/s"]
        if let linkCapacityBitrate { parts.append("cap \(linkCapacityBitrate / 1000)") }
        if let delayState, let trend = delayTrendMilliseconds, let threshold = thresholdMilliseconds {
            parts.append(
                "\(delayState) trend \(fixedDecimal(trend, places: 1))/\(fixedDecimal(threshold, places: 1)) ms"
            )
        }
        if probesSent > 0 { parts.append("probes \(probesSent) last \((lastProbeBitrate ?? 0) / 1000)") }
        parts.append("q \(pacerQueuePackets) pkt \(fixedDecimal(pacerQueueMilliseconds, places: 0)) ms")
        return parts.joined(separator: " ")
    }
}
