import Media
import RTP

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The media thread for file and synthetic inputs: read a frame when it is due, encode it once,
/// hand it to the sender thread (which fans it out), and keep audio flowing up to the same
/// instant.
///
/// A dedicated thread, not a task: encoding blocks for milliseconds and pacing sleeps, and the
/// signaling client's async work must never wait behind either. The async side reaches it only
/// through `MediaControl`.
///
/// Unpaced (`--unpaced`, for benchmarks), frames are read and encoded back to back and stamped
/// with their nominal times, so the stream on the wire is the same one at a higher speed.
public final class MediaLoop: MediaThread, @unchecked Sendable {
    public let control: MediaControl
    private let video: VideoInput
    private let videoPath: VideoPath
    private let options: MediaOptions
    private let start: UInt64
    private var sanitizer = CaptureTimestampSanitizer()
    public var sound: SystemAudioPump?

    /// Opens nothing that can fail later: inputs and encoders are created by the caller first.
    public init(control: MediaControl, video: VideoInput, encoder: H264Encoder, options: MediaOptions, start: UInt64) {
        self.control = control
        self.video = video
        self.videoPath = VideoPath(
            encoder: encoder,
            control: control,
            contentHint: options.contentHint(capturedScreen: false),
            simulcast: options.simulcast
        )
        self.options = options
        self.start = start
    }

    public var encodeTime: LatencySummary? { videoPath.encodeTime.summary }
    public var sendLatency: LatencyHistogram { videoPath.sendLatency }

    /// Runs until the duration is reached, the input ends, or `stop()`.
    public func run() throws {
        let fps = video.frameRate
        let period = 1e9 / fps
        let frames = options.duration.map { Int(($0 * fps).rounded()) }
        // Frame 0 is due at `start` or now, whichever is later: setting up the destinations
        // (sockets, SRTP sessions, a hundred SDP files for a large `--to-file`) happens after
        // `start` was taken, and must not make the first frames look late and get dropped.
        // Audio counts from the same instant, so the two stay in step.
        let first = max(start, MonotonicClock.now())
        let audioSource = try TimedAudioSource.make(options.audio, start: first, loop: options.loop)
        let audioPath = try AudioPath(options: options, control: control)
        sound?.start()
        var audioSample = 0
        var audioElapsed: UInt64 = 0
        var index = 0
        while frames.map({ index < $0 }) ?? true, !control.isStopped {
            let due = first + UInt64(Double(index) * period)
            let capture: UInt64
            if options.unpaced {
                capture = due
            } else {
                Self.sleep(until: due)
                let now = MonotonicClock.now()
                // Behind by more than a frame (an encoder slower than the source): skip this
                // frame rather than send a burst late. Capture time keeps real time either way.
                if now > due + UInt64(period), index > 0 {
                    control.statistics.withLock { $0.framesDropped += 1 }
                    index += 1
                    continue
                }
                capture = sanitizedCaptureTime(index: index, arrival: now)
            }
            guard let frame = try video.nextFrame(captureTime: capture) else { break }
            // "Frame in" is when the picture exists (read from the file, drawn by the test
            // source), as a capture process's frame exists when it arrives.
            try videoPath.send(frame, receivedAt: MonotonicClock.now())
            // Audio up to the end of this frame's period, in 20 ms packets on the same timeline
            // (counted in time: a WAV input has its own rate until the mixer resamples it).
            let audioDue = UInt64(Double(index + 1) * period)
            while let source = audioSource, audioElapsed < audioDue {
                guard let chunk = try source(audioSample) else { break }
                audioSample += chunk.frameCount
                audioElapsed += chunk.duration
                try audioPath.push(chunk, from: .app)
            }
            sound?.pump(into: audioPath)
            index += 1
        }
    }

    /// Capture times go through the clock rules (Docs/clock.md). Our own sources stamp the due
    /// time in nanoseconds; `--bogus-timestamps` stamps them the way seed 001 did instead.
    private func sanitizedCaptureTime(index: Int, arrival: UInt64) -> UInt64 {
        let output =
            options.bogusTimestamps
            ? sanitizer.sanitize(value: Int64(index) * 1000, timescale: 1000, arrival: arrival)
            : sanitizer.sanitize(value: Int64(arrival), timescale: 1_000_000_000, arrival: arrival)
        if !output.usedInput, index >= 8 { control.statistics.withLock { $0.timestampsRepaired += 1 } }
        return output.captureTime
    }

    static func sleep(until deadline: UInt64) {
        var ts = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
    }
}

/// The two kinds of media thread (`MediaLoop` for files and the test source, `IngestLoop` for
/// a capture process) as the session drives them.
public protocol MediaThread: AnyObject, Sendable {
    var control: MediaControl { get }
    /// Runs on its own thread until done; throws what ended it early.
    func run() throws
    /// The encoder call alone, per frame; read after `run()` returned.
    var encodeTime: LatencySummary? { get }
    /// Frame in → last packet out of the pictures this thread sent itself (the sender thread
    /// times those it sent); read after `run()` returned.
    var sendLatency: LatencyHistogram { get }
    /// `--audio system`: drained into the audio path as the thread goes; set before `run()`.
    var sound: SystemAudioPump? { get set }
}

/// Audio that is not captured live but read when due: the test tone or a WAV file, 20 ms at a
/// time from a sample index.
enum TimedAudioSource {
    static func make(_ kind: AudioInputKind, start: UInt64, loop: Bool) throws -> ((Int) throws -> AudioChunk?)? {
        switch kind {
        case .none:
            return nil
        case .synthetic:
            let tone = try SyntheticScreenSource(width: 160, height: 96)
            return { sample in
                tone.audioChunk(
                    startSample: sample,
                    frameCount: 960,
                    captureTime: start + UInt64(sample) * 1_000_000 / 48
                )
            }
        case .wav(let path):
            let reader = try WAVReader(path: path, framesPerChunk: 960, startTime: start, loop: loop)
            return { _ in try reader.nextChunk() }
        }
    }
}
