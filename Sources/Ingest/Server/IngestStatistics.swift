/// Counters since the server started: what to show in a status line or export as metrics.
public struct IngestStatistics: Sendable, Hashable {
    /// Capture sessions accepted (a valid hello while no other client was connected).
    public var sessions = 0
    /// Connections turned away before a session began: busy, version mismatch, a bad or missing
    /// hello.
    public var rejectedConnections = 0
    /// Sessions or connections ended because their input broke the protocol.
    public var protocolErrors = 0
    /// Bytes of well-formed messages received.
    public var bytesIn = 0

    public var videoFramesIn = 0
    /// Frames dropped because the consumer fell behind (the oldest queued frame goes).
    public var videoFramesDropped = 0
    /// Frames that arrived between a pause and its resume, which the host does not pass on.
    public var videoFramesDroppedWhilePaused = 0
    public var audioChunksIn = 0
    /// Chunks dropped because the consumer fell behind (the oldest queued chunk goes).
    public var audioChunksDropped = 0
    public var audioChunksDroppedWhilePaused = 0

    /// Events waiting for the consumer now, and the most there ever were.
    public var queuedVideoFrames = 0
    public var queuedAudioChunks = 0
    public var peakQueuedVideoFrames = 0
    public var peakQueuedAudioChunks = 0

    public init() {}
}
