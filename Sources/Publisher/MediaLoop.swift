import Foundation
import Media
import RTP

/// The paced media path on its own thread: read a frame when it is due, encode it once, hand it
/// to the `MediaSender` (which fans it out), and keep audio flowing up to the same instant.
///
/// A dedicated thread, not a task: encoding blocks for milliseconds and pacing sleeps, and the
/// signaling client's async work must never wait behind either. The async side talks to it
/// only through `Locked` state: the sender (to add and remove destinations), a key-frame
/// request flag, the stop flag, and the statistics.
final class MediaLoop: @unchecked Sendable {
    let sender: Locked<MediaSender>
    let statistics = Locked(PublishStatistics())
    private let keyFrameRequested = Locked(false)
    private let stopRequested = Locked(false)
    private let video: VideoInput
    private let audio: AudioInputKind
    private let encoder: H264Encoder
    private let converter = VideoConverter()
    private let options: PublishOptions
    private let start: UInt64
    private var sanitizer = CaptureTimestampSanitizer()

    /// Opens nothing that can fail later: inputs and encoders are created by the caller first.
    init(sender: MediaSender, video: VideoInput, encoder: H264Encoder, options: PublishOptions, start: UInt64) {
        self.sender = Locked(sender)
        self.video = video
        self.audio = options.audio
        self.encoder = encoder
        self.options = options
        self.start = start
    }

    func requestKeyFrame() { keyFrameRequested.withLock { $0 = true } }

    /// The counters with what the sender knows filled in (packets, destinations).
    func snapshot() -> PublishStatistics {
        let (packets, destinations) = sender.withLock { ($0.packetsSent, $0.destinations.count) }
        return statistics.withLock {
            $0.packetsSent = packets
            $0.destinations = destinations
            return $0
        }
    }
    func stop() { stopRequested.withLock { $0 = true } }

    /// Runs until the duration is reached, the input ends, or `stop()`; then returns the error
    /// that ended it, if any.
    func run() -> Error? {
        do {
            try loop()
            return nil
        } catch {
            return error
        }
    }

    private func loop() throws {
        let fps = video.frameRate
        let period = 1e9 / fps
        let frames = options.duration.map { Int(($0 * fps).rounded()) }
        let audioSource = try makeAudio()
        let mixer = try AudioMixer()
        let opus = try OpusEncoder(
            configuration: {
                var c = OpusEncoder.Configuration()
                c.bitrate = options.audioBitrate
                return c
            }()
        )
        var mixed = MixedFrame()
        var packet = OpusPacket()
        var audioSample = 0
        var audioElapsed: UInt64 = 0
        var index = 0
        while frames.map({ index < $0 }) ?? true, !stopRequested.withLock({ $0 }) {
            let due = start + UInt64(Double(index) * period)
            Self.sleep(until: due)
            let now = MonotonicClock.now()
            // Behind by more than a frame (an encoder slower than the source): skip this frame
            // rather than send a burst late. Capture time keeps real time either way.
            if now > due + UInt64(period), index > 0 {
                statistics.withLock { $0.framesDropped += 1 }
                index += 1
                continue
            }
            let capture = sanitizedCaptureTime(index: index, arrival: now)
            guard var frame = try video.nextFrame(captureTime: capture) else { break }
            statistics.withLock { $0.framesIn += 1 }
            if frame.width != encoder.configuration.width || frame.height != encoder.configuration.height {
                frame = try converter.convert(
                    RawVideoFrame(frame),
                    width: encoder.configuration.width,
                    height: encoder.configuration.height
                )
            }
            if keyFrameRequested.withLock({
                let r = $0; $0 = false; return r
            }) {
                encoder.requestKeyFrame()
            }
            if let unit = try encoder.encode(frame) {
                try sender.withLock { try $0.send(video: unit) }
                statistics.withLock {
                    $0.framesOut += 1
                    $0.videoBytes += unit.data.count
                    if unit.isKeyFrame { $0.keyFrames += 1 }
                }
            }
            // Audio up to the end of this frame's period, in 20 ms packets on the same timeline
            // (counted in time: a WAV input has its own rate until the mixer resamples it).
            let audioDue = UInt64(Double(index + 1) * period)
            while let source = audioSource, audioElapsed < audioDue {
                guard let chunk = try source(audioSample) else { break }
                audioSample += chunk.frameCount
                audioElapsed += chunk.duration
                try mixer.push(chunk, from: .app)
                while mixer.mixNext(into: &mixed) {
                    try opus.encode(mixed, into: &packet)
                    try sender.withLock { try $0.send(audio: packet) }
                    statistics.withLock {
                        $0.audioPackets += 1
                        $0.audioBytes += packet.data.count
                    }
                }
            }
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
        if !output.usedInput, index >= 8 { statistics.withLock { $0.timestampsRepaired += 1 } }
        return output.captureTime
    }

    /// A function giving 20 ms of audio starting at a sample index, or nil for no audio.
    private func makeAudio() throws -> ((Int) throws -> AudioChunk?)? {
        switch audio {
        case .none:
            return nil
        case .synthetic:
            let tone = try SyntheticScreenSource(width: 160, height: 96)
            let start = self.start
            return { sample in
                tone.audioChunk(
                    startSample: sample,
                    frameCount: 960,
                    captureTime: start + UInt64(sample) * 1_000_000 / 48
                )
            }
        case .wav(let path):
            let reader = try WAVReader(path: path, framesPerChunk: 960, startTime: start, loop: options.loop)
            return { _ in try reader.nextChunk() }
        }
    }

    private static func sleep(until deadline: UInt64) {
        var ts = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
    }
}
