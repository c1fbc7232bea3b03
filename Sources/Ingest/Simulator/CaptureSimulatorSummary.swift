/// What a simulator run sent and how it ended.
public struct CaptureSimulatorSummary: Sendable, CustomStringConvertible {
    public var videoFramesSent = 0
    /// Frames not sent because the simulator fell more than a frame behind real time.
    public var videoFramesSkipped = 0
    public var appChunksSent = 0
    public var micChunksSent = 0
    public var connections = 0
    /// The host's end message (or how the connection ended) when the host ended the session.
    public var hostEnd: IngestSessionEnd?
    /// True when the run reached its duration and ended the session itself.
    public var completed = false

    public init() {}

    public var description: String {
        var line =
            "sent \(videoFramesSent) frames (\(videoFramesSkipped) skipped), \(appChunksSent) app and "
            + "\(micChunksSent) mic audio chunks over \(connections) connection\(connections == 1 ? "" : "s")"
        if let hostEnd {
            line += "; host ended the session: \(hostEnd)"
        } else if completed {
            line += "; finished"
        }
        return line
    }
}
