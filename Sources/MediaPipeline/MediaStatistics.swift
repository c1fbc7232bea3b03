import RTP
import SendEngine
import SystemAudio

/// What the media threads count for the status line and `--stats-json`: frames, bytes, the
/// capture, the sound sources, the send queue and each destination's feedback. The publisher's
/// sessions add their own (signaling, viewers, WHIP) beside it in `PublishStatistics`.
public struct MediaStatistics: Sendable, Codable, Equatable {
    public var framesIn = 0
    public var framesOut = 0
    /// The cadence (Docs/cadence.md): "changing", "converging" or "still".
    public var cadence = "changing"
    /// Pictures neither converted nor encoded: the screen was still and converged.
    public var framesStill = 0
    /// Still pictures encoded again to sharpen them, and idle repeats (QP 51, about a second apart).
    public var refreshes = 0
    public var idleRepeats = 0
    /// The QP x264 gave the last picture it encoded, and the sum over all (the mean is
    /// `quantizerSum / framesOut`). Under VBV pressure x264 goes past H.264's 51 (up to 69 at
    /// 8 bits), dropping coefficients: such a QP says the bitrate cannot carry the pictures.
    public var lastQuantizer: Int?
    public var quantizerSum = 0
    /// Frames skipped because the host fell behind (the encoder slower than the source, or a
    /// capture process sending faster than it can be encoded).
    public var framesDropped = 0
    /// Captured frames left out to keep the stream at its frame rate (a 60 fps source, a flood).
    public var framesOverRate = 0
    /// Frames not encoded while a receiver's pacer held a backlog (a capacity drop; Docs/congestion.md).
    public var framesHeldByPacer = 0
    /// Captured audio chunks dropped: the mixer fell behind, or refused a chunk.
    public var audioChunksDropped = 0
    /// Audio the mixer could not play, per source, in 48 kHz frames: stamped behind the output
    /// (it came too late) or past a full queue. A busy capture process shows here.
    public var appAudioFramesDropped = 0
    public var micAudioFramesDropped = 0
    public var keyFrames = 0
    /// Changed pictures held back to lower the frame rate (`--content-hint detail|text`), and
    /// the rate the changed pictures are encoded at while held (nil: the capture rate).
    public var framesGoverned = 0
    public var governedFrameRate: Double?
    /// Intra-refresh waves started for receivers that cannot ask for key frames (Docs/cadence.md).
    public var refreshWaves = 0
    /// Key-frame requests (PLI, FIR, signaled) and what the limiter made of them: `coalesced`
    /// are those beyond one key frame per interval.
    public var keyFrameRequests = KeyFrameRequestLimiter.Statistics()
    public var videoBytes = 0
    public var audioBytes = 0
    public var audioPackets = 0
    public var packetsSent = 0
    public var destinations = 0
    /// Video capture times the clock rules replaced (bogus, backwards, stuck, jumping).
    public var timestampsRepaired = 0
    /// The capture: "off" for files and the test source; with `--ingest` waiting, streaming or
    /// paused; with `--video x11` the display, the target and the grab's costs.
    public var capture = "off"
    public var captureSessions = 0
    /// The X11 capture (`--video x11`): nil for every other input.
    public var screen: ScreenCaptureStatistics?
    /// `--audio system`: each source ("app", "mic") as the sound server delivers it.
    public var systemAudio: [String: SystemAudioSourceStatistics] = [:]
    /// The encoder's video bitrate now (moved by receivers' loss reports and REMB).
    public var videoBitrateTargetKbps = 0
    /// x264's VBV buffer, kbit: short while waves go out behind a limiting path (D30).
    public var videoVBVBufferKbit = 0
    public var bitrateChangesRefused = 0
    /// What each destination's receiver reported back (RTCP RR, NACK, PLI/FIR, REMB), by id.
    public var feedback: [String: FeedbackStatistics] = [:]
    /// The same counters as they stood when a destination left (the latest 32 departures).
    public var departedFeedback: [String: FeedbackStatistics] = [:]
    /// Encoded frames and audio packets waiting for the sender thread now, and the most ever
    /// (a large room after an IDR shows here, not as dropped frames).
    public var sendQueueDepth = 0
    public var sendQueueDeepest = 0
    /// The second encoders (VP8, VP9) for viewers without H.264, in the order they were made.
    public var encoders: [EncoderStatistics] = []
    /// The lower simulcast layers (`--simulcast`), highest first; layer 0 is the main encoder's
    /// own counters.
    public var layers: [LayerStatistics] = []
    /// With simulcast, the viewers of our room that watch layer 0 (the main encoder's).
    public var topLayerViewers = 0

    public init() {}
}
