import ArgumentParser
import Media

#if canImport(Glibc)
    import Glibc
#endif

/// The benchmark floor: the product's `H264Encoder` encoding a Y4M file's frames as fast as it
/// can, with nothing else (no audio, no RTP, no SRTP, no sockets, output discarded). What
/// rtc-publish costs above this is what the rest of the pipeline costs.
///
/// Prints one JSON line shaped like rtc-publish's final `--stats-json` record, so the benchmark
/// script reads both the same way.
struct Floor: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Encode a .y4m with H264Encoder alone, output discarded; print the encode times as JSON."
    )

    @Option(help: "Video input, a .y4m file.")
    var video: String
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

    mutating func run() throws {
        if let frames, frames < 1 { throw usageError("--frames \(frames) must be at least 1") }
        do {
            let reader = try Y4MReader(path: video)
            let encoder = try H264Encoder(
                H264Encoder.Configuration(
                    width: reader.width,
                    height: reader.height,
                    frameRate: max(1, Int(reader.frameRate.rounded())),
                    bitrateKbps: videoBitrate,
                    keyFrameInterval: keyint,
                    preset: preset,
                    threads: threads
                )
            )
            var result = FloorResult()
            let limit = frames ?? Int.max
            let started = MonotonicClock.now()
            while result.frames < limit,
                let frame = try reader.nextFrame(
                    captureTime: UInt64(Double(result.frames) * 1e9 / reader.frameRate)
                )
            {
                let before = MonotonicClock.now()
                let unit = try encoder.encode(frame)
                result.encodeNanoseconds.append(MonotonicClock.now() - before)
                result.frames += 1
                result.bytes += unit?.data.count ?? 0
                if unit?.isKeyFrame == true { result.keyFrames += 1 }
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

    /// `{"final":true,"frames":…,"keyFrames":…,"bytes":…,"wallMs":…,"encodeMs":{"p50":…,"p99":…,"max":…}}`
    var jsonLine: String {
        let sorted = encodeNanoseconds.sorted()
        func percentile(_ percent: Int) -> UInt64 {
            sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, sorted.count * percent / 100)]
        }
        let (p50, p99) = (Self.milliseconds(percentile(50)), Self.milliseconds(percentile(99)))
        let (maximum, wall) = (Self.milliseconds(sorted.last ?? 0), Self.milliseconds(wallNanoseconds))
        return "{\"final\":true,\"frames\":\(frames),\"keyFrames\":\(keyFrames),\"bytes\":\(bytes),"
            + "\"wallMs\":\(wall),\"encodeMs\":{\"p50\":\(p50),\"p99\":\(p99),"
            + "\"max\":\(maximum)}}"
    }

    /// Nanoseconds as milliseconds with three decimals (`4.207`), without Foundation's formatter.
    static func milliseconds(_ nanoseconds: UInt64) -> String {
        let microseconds = (nanoseconds + 500) / 1000
        let fraction = String(microseconds % 1000)
        return "\(microseconds / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }
}
