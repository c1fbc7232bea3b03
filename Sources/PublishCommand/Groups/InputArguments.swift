import ArgumentParser
import Ingest

/// What is published and for how long: `--video` and the X capture's options, `--audio` and
/// the system audio's sources, `--ingest`, the test source's size and rate, file looping and
/// pacing, `--duration`, `--start-delay`.
public struct InputArguments: ParsableArguments {
    @Option(help: "Video input: 'test', a .y4m file, or 'x11' / 'x11:DISPLAY' (an X display's screen).")
    public var video: Parsed<VideoSource>?
    @Option(help: "With --video x11: capture one RandR monitor, by name or index (xrandr --listactivemonitors).")
    public var captureMonitor: String?
    @Option(help: "With --video x11: capture one window (id, decimal or 0x hex), following it as it moves.")
    public var captureWindow: String?
    @Option(help: "With --video x11: capture the rectangle WIDTHxHEIGHT+X+Y of the screen.")
    public var captureRegion: String?
    @Option(help: "With --video x11: draw the pointer into the picture ('on' or 'off').")
    public var cursor: Parsed<CursorMode> = "on"
    @Option(
        help: ArgumentHelp(
            "Audio input: 'system', 'test', a .wav file, or 'none' (with --ingest: the capture's app + mic audio).",
            discussion: "'system': what the computer plays and the microphone, from PulseAudio or PipeWire."
        )
    )
    public var audio: Parsed<AudioSource>?
    @Option(help: "With --audio system: the app-audio source (default @DEFAULT_MONITOR@, what is played), or 'none'.")
    public var appAudio: String?
    @Option(help: "With --audio system: the microphone source (default @DEFAULT_SOURCE@), or 'none'.")
    public var mic: String?
    @Option(
        help: ArgumentHelp(
            "Listen for a capture process (unix:/path or tcp:127.0.0.1:PORT); its frames and audio are the input.",
            discussion: "Try it with rtc-capture-sim --ingest <same address>."
        )
    )
    public var ingest: Parsed<IngestAddress>?
    @Flag(help: "Loop file inputs.") public var loop = false
    @Option(help: "Test-source size WIDTHxHEIGHT; with --ingest the box captured pictures are fitted into.")
    public var size: Parsed<FrameSize> = "1280x720"
    @Option(help: "Frame rate: the test source's; the most captured per second with --video x11 (1-60) or --ingest.")
    public var fps = 30
    @Option(help: "Stop after this many seconds.") public var duration: Double?
    @Option(help: "Seconds between writing the SDP files and the first packet.") public var startDelay = 0.0
    @Flag(help: "Read and encode file or test frames as fast as possible (benchmarks); no pacing.")
    public var unpaced = false
    @Flag(help: "Stamp frames like seed 001's bug (+1 s per frame) to show the clock rules repair them.")
    public var bogusTimestamps = false

    public init() {}
}
