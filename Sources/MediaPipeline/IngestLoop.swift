import Ingest
import Logging
import Media
import ProcessSupport
import RTP

/// The media thread when a capture process feeds the publisher (`--ingest`): it takes the
/// ingest server's events from the mailbox, puts capture timestamps through the clock rules,
/// and drives the same video and audio paths as the file inputs.
///
/// The stream's picture size is chosen from the first frame (its upright size fitted into the
/// `--size` box: a portrait 886x1920 phone becomes 590x1280), so the SDP files and the room
/// offer are written then, before the first packet. A later capture session whose pictures fit
/// another size (another phone, the phone turned) re-opens the encoder at that size: new
/// SPS/PPS and an IDR on the same SSRCs, sequence numbers and clocks, so receivers see one
/// stream that changes resolution, not a new one. Within a session the size follows the
/// pictures too, at most once per ``reopenInterval``; a picture between re-opens is letterboxed.
/// A picture under ``smallestSide`` on a side, or one that would fit the box as such a sliver,
/// ends its session (`picture-too-small`) and never the process.
public final class IngestLoop: MediaThread, @unchecked Sendable {
    public let control: MediaControl
    private let mailbox: IngestMailbox
    private let server: IngestServer
    private let options: MediaOptions
    private let start: UInt64
    private let logger: Logger
    /// Progress to stdout, refusals and errors to stderr (`PublishOutput`).
    private let output: PublishOutput
    /// Writes the SDP files and publishes the offer once the stream's parameter sets exist.
    private let announce: (VideoPath) throws -> Void

    private var videoPath: VideoPath?
    /// The smallest stream picture side: one H.264 macroblock. Anything smaller is no screen.
    static let smallestSide = 16
    /// Shortest time between two re-opens within a capture session (each costs an IDR).
    static let reopenInterval: UInt64 = 1_000_000_000
    /// The session whose pictures were refused: its pictures still in the mailbox are dropped.
    private var refusedSession: Int?
    /// Whether the current session has sent a picture yet (its first may re-open at once).
    private var sessionHasPictures = false
    private var lastOpen: UInt64 = 0
    private var audioPath: AudioPath?
    private var videoClock = CaptureTimestampSanitizer()
    private var audioClocks: [CaptureTimestampSanitizer]
    private var rateLimiter: FrameRateLimiter
    private var paused = false
    private var sessions = 0
    /// `--start-delay`: nothing is sent before this time, so a player opened from the SDP file
    /// catches the first IDR.
    private var sendFrom: UInt64 = 0
    /// `--audio test|file.wav` beside captured video: read in real time from the announcement.
    private var timedAudio: ((Int) throws -> AudioChunk?)?
    private var timedAudioSample = 0
    private var timedAudioElapsed: UInt64 = 0
    private var rejectedAudioChunks = 0
    private var lastCounterRefresh: UInt64 = 0
    public var sound: SystemAudioPump?

    public init(
        control: MediaControl,
        mailbox: IngestMailbox,
        server: IngestServer,
        options: MediaOptions,
        start: UInt64,
        logger: Logger,
        output: PublishOutput,
        announce: @escaping (VideoPath) throws -> Void
    ) throws {
        self.control = control
        self.mailbox = mailbox
        self.server = server
        self.options = options
        self.start = start
        self.logger = logger
        self.output = output
        self.announce = announce
        rateLimiter = FrameRateLimiter(framesPerSecond: options.frameRate)
        var audioConfiguration = CaptureTimestampSanitizer.Configuration()
        audioConfiguration.clockRate = UInt32(AudioMixer.sampleRate)
        let audioClock = try CaptureTimestampSanitizer(configuration: audioConfiguration)
        audioClocks = Array(repeating: audioClock, count: AudioSource.allCases.count)
        if options.hasAudio {
            audioPath = try AudioPath(options: options, control: control)
        }
    }

    public var encodeTime: LatencySummary? { videoPath?.encodeTime.summary }
    public var sendLatency: LatencyHistogram { videoPath?.sendLatency ?? LatencyHistogram() }

    /// Longest sleep between two looks at the clock: timed audio is due every 20 ms, and stop
    /// is checked.
    static let wakeInterval: UInt64 = 10_000_000

    /// Runs until the duration is reached, the ingest server closes, or `stop()`.
    public func run() throws {
        let end = options.duration.map { start + UInt64($0 * 1e9) }
        control.statistics.withLock { $0.capture = "waiting on \(server.address)" }
        sound?.start()
        // The final totals count every drop, not those of a refresh up to 250 ms old.
        defer { refreshCounters(force: true) }
        while !control.isStopped {
            let now = MonotonicClock.now()
            if let end, now >= end { break }
            let wake = min(now + Self.wakeInterval, end ?? .max)
            switch mailbox.take(until: wake) {
            case .closed: return
            case .timedOut: break
            case .event(let event): try handle(event)
            }
            try pumpTimedAudio()
            pumpSystemAudio()
            refreshCounters()
        }
    }

    private func handle(_ event: IngestEvent) throws {
        switch event {
        case .connected(let hello):
            sessions += 1
            if sessions > 1 {
                // Another capture process, another clock: its timestamps earn trust afresh;
                // the outputs stay monotonic, the SSRCs and sequence numbers are kept.
                videoClock.restartSource()
                for index in audioClocks.indices { audioClocks[index].restartSource() }
                rateLimiter.reset()
                for source in AudioSource.allCases { audioPath?.remove(source) }
            }
            paused = false
            sessionHasPictures = false
            control.requestKeyFrame()
            setCapture("streaming from \(hello.name)")
            output.progress("capture client '\(hello.name)' connected (session \(sessions))")
        case .video(let video):
            try handle(video)
        case .audio(let audio):
            handle(audio)
        case .paused:
            paused = true
            setCapture("paused")
            output.progress("capture paused")
        case .resumed:
            paused = false
            control.requestKeyFrame()
            setCapture("streaming")
            output.progress("capture resumed")
        case .ended(let end), .disconnected(let end):
            paused = false
            setCapture("waiting on \(server.address)")
            output.progress("capture session ended (\(end)); the stream goes on, waiting for a capture client")
        }
    }

    private func handle(_ video: IngestVideoEvent) throws {
        guard !paused else { return }
        let output = videoClock.sanitize(
            value: video.timestamp.value,
            timescale: video.timestamp.timescale,
            arrival: video.arrival
        )
        if output.reason != .accepted && output.reason != .acquiring {
            control.statistics.withLock { $0.timestampsRepaired += 1 }
        }
        if let event = output.event {
            logger.info("capture clock \(event)", metadata: ["reason": "\(output.reason)"])
        }
        guard rateLimiter.admit(output.captureTime) else {
            control.statistics.withLock { $0.framesOverRate += 1 }
            return
        }
        guard refusedSession != sessions, try openStream(for: video.frame) else { return }
        guard let videoPath, video.arrival >= sendFrom else { return }
        var raw = video.frame
        raw.captureTime = output.captureTime
        let frame: VideoFrame
        do {
            frame = try videoPath.prepare(raw)
        } catch {
            // The picture passed the wire checks but cannot be converted: the capture side is
            // broken. End its session with the reason; the stream waits for the next one.
            refuse(
                .malformedMessage,
                "video frame \(raw.width)x\(raw.height) \(raw.format) cannot be converted: \(error)"
            )
            return
        }
        try videoPath.send(frame, receivedAt: video.arrival)
    }

    private func handle(_ audio: IngestAudioEvent) {
        guard !paused, options.audioFromCapture, let audioPath, videoPath != nil, audio.arrival >= sendFrom
        else { return }
        var chunk = audio.chunk
        chunk.captureTime =
            audioClocks[audio.source.rawValue].sanitize(
                value: audio.timestamp.value,
                timescale: audio.timestamp.timescale,
                arrival: audio.arrival
            )
            .captureTime
        do {
            try audioPath.push(chunk, from: audio.source)
        } catch {
            // A chunk the mixer refuses (the wire checks passed, so this is rare) is dropped
            // and counted; the stream and the session go on.
            rejectedAudioChunks += 1
            if rejectedAudioChunks == 1 || rejectedAudioChunks % 100 == 0 {
                output.problem("capture audio chunk rejected (\(rejectedAudioChunks) so far): \(error)")
            }
        }
    }

    /// Makes sure an encoder of this picture's fitted size exists: opens the stream at the first
    /// picture, re-opens it when a picture fits another size (see the type's comment). False
    /// when the picture was refused and its session ended: nothing a capture client sends may
    /// end the process.
    private func openStream(for picture: RawVideoFrame) throws -> Bool {
        let upright = picture.uprightSize
        let size = VideoConverter.fit(width: upright.width, height: upright.height, into: box)
        let firstOfSession = !sessionHasPictures
        sessionHasPictures = true
        if let videoPath {
            let now = MonotonicClock.now()
            guard size.width != videoPath.width || size.height != videoPath.height,
                firstOfSession || now - lastOpen >= Self.reopenInterval
            else { return true }
        }
        guard min(upright.width, upright.height) >= Self.smallestSide,
            min(size.width, size.height) >= Self.smallestSide
        else {
            let sliver = min(upright.width, upright.height) >= Self.smallestSide
            let fitted = sliver ? " (it would stream as \(size.width)x\(size.height))" : ""
            refuse(
                .pictureTooSmall,
                "a \(upright.width)x\(upright.height) picture is under the smallest stream picture of "
                    + "\(Self.smallestSide)x\(Self.smallestSide)\(fitted)"
            )
            return false
        }
        let encoder: H264Encoder
        do {
            encoder = try H264Encoder(
                options.coding(
                    H264Encoder.Configuration(
                        width: size.width,
                        height: size.height,
                        frameRate: options.frameRate,
                        bitrateKbps: currentBitrateKbps,
                        keyFrameInterval: options.keyFrameInterval,
                        keyFrames: .onRequest,
                        preset: options.preset,
                        threads: options.encoderThreads
                    ),
                    capturedScreen: true
                )
            )
        } catch {
            refuse(.malformedMessage, "cannot stream a \(upright.width)x\(upright.height) picture: \(error)")
            return false
        }
        lastOpen = MonotonicClock.now()
        // From here on a failure is the host's (an SDP file it cannot write), not the picture's.
        if let videoPath {
            let old = (videoPath.width, videoPath.height)
            videoPath.replace(encoder)
            try announce(videoPath)
            output.progress(
                "stream: \(upright.width)x\(upright.height) capture → re-opened at \(size.width)x\(size.height) "
                    + "(was \(old.0)x\(old.1)); same SSRCs and clocks, an IDR first"
            )
        } else {
            try startStream(
                VideoPath(
                    encoder: encoder,
                    control: control,
                    contentHint: options.contentHint(capturedScreen: true),
                    simulcast: options.simulcast
                )
            )
            output.progress(
                "stream: \(upright.width)x\(upright.height) capture → \(size.width)x\(size.height) H.264 "
                    + "at up to \(options.frameRate) fps"
            )
        }
        return true
    }

    /// The `--size` box pictures are fitted into, either way round.
    private var box: VideoConverter.BoundingBox {
        VideoConverter.BoundingBox(
            longSide: max(options.width, options.height),
            shortSide: min(options.width, options.height)
        )
    }

    /// The bitrate receivers' feedback settled on, so a re-opened encoder starts there.
    private var currentBitrateKbps: Int {
        let target = control.statistics.withLock { $0.videoBitrateTargetKbps }
        return target > 0 ? target : options.videoBitrateKbps
    }

    /// Ends the current capture session for a picture the stream cannot take.
    private func refuse(_ reason: IngestEndReason, _ message: String) {
        refusedSession = sessions
        logger.warning("capture picture refused", metadata: ["reason": "\(reason)", "error": "\(message)"])
        output.problem("capture picture refused (\(reason)): \(message); the session is ended, the stream goes on")
        server.endSession(reason: reason, message: message)
    }

    /// The stream's first encoder: announces it and starts the clocks of the timed sources.
    private func startStream(_ path: VideoPath) throws {
        try announce(path)
        videoPath = path
        sendFrom = MonotonicClock.now() + UInt64(options.startDelay * 1e9)
        timedAudio =
            options.audioFromCapture
            ? nil : try TimedAudioSource.make(options.audio, start: sendFrom, loop: options.loop)
    }

    /// `--audio system` beside captured video: into the mixer once the stream has started,
    /// thrown away before (it would only queue up ahead of the first picture).
    private func pumpSystemAudio() {
        guard let sound else { return }
        if let audioPath, videoPath != nil, MonotonicClock.now() >= sendFrom {
            sound.pump(into: audioPath)
        } else {
            sound.discard()
        }
    }

    /// Test tone or WAV audio beside captured video, read up to now in 20 ms chunks.
    private func pumpTimedAudio() throws {
        guard let timedAudio, let audioPath else { return }
        let now = MonotonicClock.now()
        guard now > sendFrom else { return }
        while timedAudioElapsed < now - sendFrom {
            guard let chunk = try timedAudio(timedAudioSample) else { return }
            timedAudioSample += chunk.frameCount
            timedAudioElapsed += chunk.duration
            try audioPath.push(chunk, from: .app)
        }
    }

    /// The server's and the mailbox's drop counters into the status, four times a second.
    private func refreshCounters(force: Bool = false) {
        let now = MonotonicClock.now()
        guard force || now - lastCounterRefresh >= 250_000_000 else { return }
        lastCounterRefresh = now
        let ingest = server.statistics
        let (videoDropped, audioDropped) = mailbox.dropped
        control.statistics.withLock {
            $0.framesDropped = ingest.videoFramesDropped + videoDropped
            $0.audioChunksDropped = ingest.audioChunksDropped + audioDropped + rejectedAudioChunks
            $0.captureSessions = sessions
        }
    }

    private func setCapture(_ text: String) { control.statistics.withLock { $0.capture = text } }
}
