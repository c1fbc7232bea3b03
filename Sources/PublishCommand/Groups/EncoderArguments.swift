import ArgumentParser
import Cadence
import Media

/// The encoders' settings: video bitrates and the rate control's bounds, x264's preset, threads
/// and key frame interval, Opus's bitrate and complexity.
public struct EncoderArguments: ParsableArguments {
    @Option(help: "Video bitrate, kbit/s.") public var videoBitrate = 1800
    @Option(help: "Lowest video bitrate receivers' loss may push the encoder to, kbit/s.")
    public var minVideoBitrate = 150
    @Option(help: "Highest video bitrate the rate control may return to, kbit/s (default: --video-bitrate).")
    public var maxVideoBitrate: Int?
    @Option(help: "Opus bitrate, bit/s.") public var audioBitrate = 96_000
    @Option(help: "Opus complexity 0-10: lower costs less CPU and some audio quality.")
    public var audioComplexity = OpusEncoder.defaultComplexity
    @Option(
        help: ArgumentHelp(
            "Frames between refreshes (intra-refresh waves) for receivers that cannot ask for key frames: "
                + "the preview, --to, SDP-file subscribers (default: 2 s). WebRTC and WHIP get key frames when they ask."
        )
    ) public var keyint: Int?
    @Option(
        help: ArgumentHelp(
            "What to keep when the bitrate is short: detail or text (fewer pictures, same resolution; text holds "
                + "a lower QP) or motion (every picture). Default: detail for a captured screen, motion otherwise."
        )
    ) public var contentHint: String?
    @Flag(
        help: ArgumentHelp(
            "Simulcast over WHIP: several H.264 layers from the one capture, each its own encode and SSRC.",
            discussion:
                "Default layers: f (full picture, full rate), l (full picture, 5 fps) and, when the picture is "
                + "at least 960 wide, q (half the picture, 15 fps). Docs/simulcast.md."
        )
    ) public var simulcast = false
    @Option(
        help: ArgumentHelp(
            "Simulcast layers, highest first: NAME:SCALE:FPS:KBPS[,...] (implies --simulcast).",
            discussion: "SCALE 1, 2 or 4; the first layer is the main encoder's (scale 1, the full rate)."
        )
    ) public var simulcastLayers: String?
    @Option(help: "x264 preset.") public var preset = "veryfast"
    @Option(help: "Encoder threads.") public var threads = 1

    public init() {}
}
