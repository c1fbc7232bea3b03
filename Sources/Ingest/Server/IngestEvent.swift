import Media

/// What the host learns from its capture client, in arrival order (``IngestServer/events``).
///
/// Each session produces `.connected` first and exactly one of `.ended` or `.disconnected` last;
/// a session that never got past its hello (busy, version mismatch, bad first message) produces
/// no event at all, only a log line and a count in ``IngestStatistics``.
public enum IngestEvent: Sendable {
    /// A capture client said hello and was accepted.
    case connected(IngestHello)
    case video(IngestVideoEvent)
    case audio(IngestAudioEvent)
    /// The capture paused; no media follows until `.resumed`.
    case paused
    case resumed
    /// The capture client ended the session itself (its end message's reason and text).
    case ended(IngestSessionEnd)
    /// The session ended otherwise: the connection dropped (`.disconnected`), or the host ended
    /// it with the reason it sent the client (a protocol error, `requestedByHost`, shutdown).
    case disconnected(IngestSessionEnd)
}

/// Why a session ended, with words for the log or the user.
public struct IngestSessionEnd: Sendable, Hashable, CustomStringConvertible {
    public var reason: IngestEndReason
    public var message: String

    public init(reason: IngestEndReason, message: String) {
        self.reason = reason
        self.message = message
    }

    public var description: String { message.isEmpty ? "\(reason)" : "\(reason): \(message)" }
}

/// One picture from the capture client.
public struct IngestVideoEvent: Sendable {
    /// The picture as sent; its `captureTime` is `arrival` until the host's clock rules replace it.
    public var frame: RawVideoFrame
    /// The capture timestamp exactly as sent (value / timescale), for `CaptureTimestampSanitizer`.
    public var timestamp: IngestTimestamp
    /// When the whole message had arrived, on the monotonic clock (ns).
    public var arrival: UInt64
    /// The sender marked a known gap before this frame.
    public var discontinuity: Bool

    public init(frame: RawVideoFrame, timestamp: IngestTimestamp, arrival: UInt64, discontinuity: Bool) {
        self.frame = frame
        self.timestamp = timestamp
        self.arrival = arrival
        self.discontinuity = discontinuity
    }
}

/// One chunk of app or microphone audio from the capture client.
public struct IngestAudioEvent: Sendable {
    /// The samples in float; `captureTime` is `arrival` until the host's clock rules replace it.
    public var chunk: AudioChunk
    public var source: AudioSource
    /// How the samples travelled (they are float here either way).
    public var sampleFormat: IngestSampleFormat
    public var timestamp: IngestTimestamp
    public var arrival: UInt64
    public var discontinuity: Bool

    public init(
        chunk: AudioChunk,
        source: AudioSource,
        sampleFormat: IngestSampleFormat,
        timestamp: IngestTimestamp,
        arrival: UInt64,
        discontinuity: Bool
    ) {
        self.chunk = chunk
        self.source = source
        self.sampleFormat = sampleFormat
        self.timestamp = timestamp
        self.arrival = arrival
        self.discontinuity = discontinuity
    }
}
