import ProcessSupport

/// The WHIP session in the status line and `--stats-json` (`whip`).
public struct WHIPStatistics: Sendable, Codable, Equatable {
    /// `WHIPSessionStateMachine.State`'s text: "waiting for the stream", "posting", "connecting",
    /// "live", "retrying in 4.0 seconds", "stopped", ….
    public var state: String
    /// POSTs made (the first one, and one per retry).
    public var attempts = 0
    /// Times the session went live.
    public var connections = 0
    /// ICE restarts over PATCH (RFC 9725 §4.3.2) after a lost path, the session kept.
    public var iceRestarts = 0
    /// The session's resource (`Location`), while one exists.
    public var resource: String?
    /// The selected ICE pair and SRTP profile while live.
    public var path: String?
    public var srtpProfile: String?
    /// The last session's POST → 201 with the answer, and POST → media flowing (ICE and DTLS done).
    public var answerMs: Double?
    public var setupMs: Double?
    /// Why the last attempt failed.
    public var lastError: String?
    /// From the endpoint's receiver reports and REMB (RFC 3550 §6.4.1, draft-alvestrand-rmcat-remb).
    public var rttMs: Double?
    public var lossPercent: Double?
    public var bitrateCapKbps: Int?

    public init(state: String) { self.state = state }

    /// `whip live rtt 3 ms loss 0.0% cap 2000 kbit/s` for the status line.
    var statusText: String {
        var parts = ["whip \(state)"]
        if let rttMs { parts.append("rtt \(fixedDecimal(rttMs, places: 0)) ms") }
        if let lossPercent { parts.append("loss \(fixedDecimal(lossPercent, places: 1))%") }
        if let bitrateCapKbps { parts.append("cap \(bitrateCapKbps) kbit/s") }
        return parts.joined(separator: " ")
    }
}
