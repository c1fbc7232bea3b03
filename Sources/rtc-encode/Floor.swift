import ArgumentParser
import Media
import VPX

#if canImport(Glibc)
    import Glibc
#endif

/// The benchmark floor: the product's `H264Encoder` encoding a Y4M file's frames as fast as it
/// can, with nothing else (no audio, no RTP, no SRTP, no sockets, output discarded). What
/// rtc-publish costs above this is what the rest of the pipeline costs.
///
/// With `--codec vp8|vp9`, the second encoder's floor: `VPXEncoder` on the same frames at the same
/// bitrate (key frames only on the first frame and every `--keyint`, as x264's), what a viewer
/// without H.264 adds to a publish.
///
/// With `--audio`, the second floor: the same frames and a WAV's 20 ms frames through the
/// product's `OpusEncoder` (`FloorAudio`), in capture-time order as rtc-publish's media loop
/// interleaves them: before each video frame, every audio frame stamped at or before it; after
/// the last, the audio up to the end of its frame period. Still no mixer, RTP, SRTP or sockets.
///
/// Prints one JSON line shaped like rtc-publish's final `--stats-json` record, so the benchmark
/// script reads both the same way.
struct Floor: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Encode a .y4m with H264Encoder alone (and a .wav with OpusEncoder), output discarded; print the encode times as JSON."
    )

    @Option(help: "Video input, a .y4m file.")
    var video: String
    @Option(help: "The encoder: h264 (x264), vp8 or vp9 (libvpx, real time, screen content).")
    var codec = "h264"
    @Option(help: "x264 preset (ultrafast … veryslow).")
    var preset = "veryfast"
    @Option(help: "Encoder threads.")
    var threads = 1
    @Option(help: "Video bitrate in kbit/s (VBV max rate the same, buffer 600 ms).")
    var videoBitrate = 2500
    @Option(help: "Frames between key frames.")
    var keyint = 60
    @Option(help: "Stop after this many frames (default: the whole file).")
    var frames: Int?
    @Option(help: "Audio input, a 48 kHz stereo .wav: also Opus-encode it in 20 ms frames between the video frames.")
    var audio: String?
    @Option(help: "Opus bitrate in bit/s (with --audio; default 96000).")
    var audioBitrate: Int?
    @Option(help: "Opus complexity 0-10 (with --audio; default \(OpusEncoder.defaultComplexity)).")
    var audioComplexity: Int?

    mutating func run() throws {
        if let frames, frames < 1 { throw usageError("--frames \(frames) must be at least 1") }
        guard ["h264", "vp8", "vp9"].contains(codec) else {
            throw usageError("--codec \(codec) is not h264, vp8 or vp9")
        }
        if codec != "h264", keyint < 1 { throw usageError("--keyint \(keyint) must be at least 1") }
        if audio == nil, audioBitrate != nil || audioComplexity != nil {
            throw usageError("--audio-bitrate and --audio-complexity need --audio")
        }
        let bitrate = audioBitrate ?? OpusEncoder.Configuration().bitrate
        let complexity = audioComplexity ?? OpusEncoder.defaultComplexity
        guard OpusEncoder.bitrateRange.contains(bitrate) else {
            throw usageError("--audio-bitrate \(bitrate) is outside \(OpusEncoder.bitrateRange)")
        }
        guard OpusEncoder.complexityRange.contains(complexity) else {
            throw usageError("--audio-complexity \(complexity) is outside \(OpusEncoder.complexityRange)")
        }
        do {
            let reader = try Y4MReader(path: video)
            let frameRate = max(1, Int(reader.frameRate.rounded()))
            let encode: (VideoFrame, Int) throws(MediaError) -> (bytes: Int, isKeyFrame: Bool)?
            switch codec {
            case "h264":
                let encoder = try H264Encoder(
                    H264Encoder.Configuration(
                        width: reader.width,
                        height: reader.height,
                        frameRate: frameRate,
                        bitrateKbps: videoBitrate,
                        keyFrameInterval: keyint,
                        preset: preset,
                        threads: threads
                    )
                )
                encode = { (frame, _) throws(MediaError) in
                    try encoder.encode(frame).map { ($0.data.count, $0.isKeyFrame) }
                }
            case "vp8", "vp9":
                let encoder = try VPXEncoder(
                    VPXEncoder.Configuration(
                        codec: codec == "vp8" ? .vp8 : .vp9,
                        width: reader.width,
                        height: reader.height,
                        frameRate: frameRate,
                        bitrateKbps: videoBitrate,
                        threads: threads
                    )
                )
                let keyint = keyint
                encode = { (frame, index) throws(MediaError) in
                    try encoder.encode(
                        frame,
                        pts90k: Int64(index) * Int64(90_000 / frameRate),
                        forceKeyFrame: index % keyint == 0
                    )
                    .map { ($0.data.count, $0.isKeyFrame) }
                }
            default:
                return  // refused above
            }
            let sound = try audio.map { (path) throws(MediaError) in
                try FloorAudio(path: path, bitrate: bitrate, complexity: complexity)
            }
            var result = FloorResult()
            let limit = frames ?? Int.max
            let started = MonotonicClock.now()
            func captureTime(_ index: Int) -> UInt64 { UInt64(Double(index) * 1e9 / reader.frameRate) }
            while result.frames < limit, let frame = try reader.nextFrame(captureTime: captureTime(result.frames)) {
                try sound?.encode(upTo: frame.captureTime, inclusive: true)
                let before = MonotonicClock.now()
                let unit = try encode(frame, result.frames)
                result.encodeNanoseconds.append(MonotonicClock.now() - before)
                result.frames += 1
                result.bytes += unit?.bytes ?? 0
                if unit?.isKeyFrame == true { result.keyFrames += 1 }
            }
            if let sound {
                // The audio of the last frame's period, as rtc-publish sends it after that frame.
                try sound.encode(upTo: captureTime(result.frames), inclusive: false)
                result.audio = (sound.frames, sound.bytes, sound.encodeNanoseconds)
            }
            result.wallNanoseconds = MonotonicClock.now() - started
            print(result.jsonLine)
        } catch {
            var stderr = StandardError()
            print("rtc-encode: \(error.message)", to: &stderr)
            throw ExitCode(error.code == .invalidSetting || error.code == .io || error.code == .badHeader ? 2 : 1)
        }
    }
}

/// What one floor run measured.
struct FloorResult {
    var frames = 0
    var keyFrames = 0
    var bytes = 0
    var wallNanoseconds: UInt64 = 0
    var encodeNanoseconds: [UInt64] = []
    /// With `--audio`: Opus frames, their bytes and each one's encode time.
    var audio: (frames: Int, bytes: Int, encodeNanoseconds: [UInt64])?

    /// `{"final":true,"frames":…,"keyFrames":…,"bytes":…,"wallMs":…,"encodeMs":{"p50":…,"p99":…,"max":…}}`;
    /// with audio, also `"encodeTotalMs":…,"audioFrames":…,"audioBytes":…,`
    /// `"audioEncodeMs":{"p50":…,"p99":…,"max":…},"audioEncodeTotalMs":…` before the closing brace.
    var jsonLine: String {
        let wall = Self.milliseconds(wallNanoseconds)
        var line =
            "{\"final\":true,\"frames\":\(frames),\"keyFrames\":\(keyFrames),\"bytes\":\(bytes),"
            + "\"wallMs\":\(wall),\"encodeMs\":\(Self.percentiles(encodeNanoseconds))"
        if let audio {
            line +=
                ",\"encodeTotalMs\":\(Self.milliseconds(encodeNanoseconds.reduce(0, +))),"
                + "\"audioFrames\":\(audio.frames),\"audioBytes\":\(audio.bytes),"
                + "\"audioEncodeMs\":\(Self.percentiles(audio.encodeNanoseconds)),"
                + "\"audioEncodeTotalMs\":\(Self.milliseconds(audio.encodeNanoseconds.reduce(0, +)))"
        }
        return line + "}"
    }

    /// `{"p50":…,"p99":…,"max":…}` in milliseconds.
    static func percentiles(_ nanoseconds: [UInt64]) -> String {
        let sorted = nanoseconds.sorted()
        func percentile(_ percent: Int) -> UInt64 {
            sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, sorted.count * percent / 100)]
        }
        let (p50, p99) = (milliseconds(percentile(50)), milliseconds(percentile(99)))
        return "{\"p50\":\(p50),\"p99\":\(p99),\"max\":\(milliseconds(sorted.last ?? 0))}"
    }

    /// Nanoseconds as milliseconds with three decimals (`4.207`), without Foundation's formatter.
    static func milliseconds(_ nanoseconds: UInt64) -> String {
        let microseconds = (nanoseconds + 500) / 1000
        let fraction = String(microseconds % 1000)
        return "\(microseconds / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }
}
