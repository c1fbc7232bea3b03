import Cadence
import Capture
import Media
import SystemAudio

/// What the media threads are told: the inputs, the picture, the encoders and the run's
/// length. `MediaOptions` carries it beside the signaling, destination and WebRTC options.
public struct MediaOptions: Sendable {
    public var video: VideoInputKind = .synthetic
    public var audio: AudioInputKind = .synthetic
    /// With `ingest`: the capture's app and microphone audio is the audio (unless `--audio`
    /// named another input, which `audio` then holds).
    public var audioFromCapture = false
    /// `--video x11[:DISPLAY]`: capture this X display (the target, the cursor) as the video.
    public var screenCapture: X11CaptureConfiguration?
    /// `--audio system`: what the computer plays (app audio) and the microphone, from the sound
    /// server (`audio` is then `.none`: nothing timed is read).
    public var systemAudio: SystemAudioConfiguration?
    public var loop = false
    public var width = 1280
    public var height = 720
    public var frameRate = 30
    public var videoBitrateKbps = 1800
    public var audioBitrate = 96_000
    /// Opus complexity, 0–10 (`OpusEncoder.defaultComplexity`, the best audio, unless lowered):
    /// a knob for a host that is short of CPU, never turned down by the publisher on its own.
    public var audioComplexity = OpusEncoder.defaultComplexity
    /// Frames between refreshes for receivers that cannot ask for key frames; nil = 2 s.
    public var keyFrameInterval: Int?
    /// `--content-hint`; nil: `detail` for a captured screen (X11, a capture process), `motion`
    /// for the test source and files.
    public var contentHint: FrameRateGovernor.Hint?
    /// `--simulcast`: the layers, highest first (`SimulcastEncoding`); nil publishes one stream.
    public var simulcast: [SimulcastEncoding]?
    public var preset = "veryfast"
    public var encoderThreads = 1
    public var duration: Double?
    /// Seconds between writing the SDP files and the first packet, so a player started from the
    /// file catches the first key frame.
    public var startDelay = 0.0
    /// Stamps frames the way seed 001 did (`frameTime += 1000` on a 1000 timescale) to prove the
    /// clock rules repair them.
    public var bogusTimestamps = false
    /// Read and encode file or test frames as fast as possible, stamped with their nominal
    /// times (benchmarks): no pacing, no dropped frames.
    public var unpaced = false

    /// The hint the video goes by: `detail` for a captured screen unless told otherwise.
    func contentHint(capturedScreen: Bool) -> FrameRateGovernor.Hint {
        contentHint ?? (capturedScreen ? .detail : .motion)
    }

    /// x264's settings for what the hint says the pictures are (Docs/cadence.md): `detail` and
    /// `text` are screen content, whose finest QP is the hint's converged QP.
    public func coding(_ configuration: H264Encoder.Configuration, capturedScreen: Bool) -> H264Encoder.Configuration {
        var configuration = configuration
        let hint = contentHint(capturedScreen: capturedScreen)
        configuration.screenContent = hint != .motion
        configuration.finestQP = FrameCadence.Configuration.forHint(hint).convergedQP
        return configuration
    }

    /// Whether the stream has an audio track.
    public var hasAudio: Bool { audioFromCapture || audio != .none || systemAudio != nil }

    public init() {}
}
