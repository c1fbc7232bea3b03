import Capture
import Logging
import Media
import ProcessSupport
import RTP

/// The media thread when the publisher captures an X display itself (`--video x11`): grab when
/// a frame is due, convert the borrowed BGRX straight into the encoder's planes (the cursor
/// drawn into a copy), encode once, hand the picture to the sender, and keep the timed audio
/// (test tone, WAV) flowing up to the same instant.
///
/// The stream's size is the captured area's size fitted into the `--size` box, so the encoder
/// opens before the first frame and the SDP files and room offer are written at start, as with
/// a file. When the captured area changes size (a RandR mode change, the window resized, the
/// monitor gone) the encoder re-opens at the new fitted size, at most once per
/// ``reopenInterval``: new SPS/PPS and an IDR on the same SSRCs, sequence numbers and clocks.
/// In between, pictures are letterboxed into the current size.
///
/// Frames are grabbed on absolute deadlines: a grab that comes late by more than a period is
/// skipped (counted), never made up for with a burst. The display going away or the captured
/// window closing ends the run with that error; the session then says goodbye (RTCP BYE,
/// unpublish) like any other end.
public final class ScreenCaptureLoop: MediaThread, @unchecked Sendable {
    public let control: MediaControl
    private let capture: X11Capture
    private let converter = ScreenConverter()
    private let videoPath: VideoPath
    private let options: MediaOptions
    private let start: UInt64
    private let output: PublishOutput
    private let announce: (VideoPath) throws -> Void
    private var sanitizer = CaptureTimestampSanitizer()
    private var lastOpen: UInt64 = 0
    private var convertTotal: UInt64 = 0
    /// Conversions made: a still screen skips them, so the mean is per conversion, not per grab.
    private var conversions = 0
    public var sound: SystemAudioPump?
    /// The shortest time between two re-opens (each costs an IDR).
    static let reopenInterval: UInt64 = 1_000_000_000
    /// The smallest stream side: one macroblock.
    static let smallestSide = 16

    /// Opens the encoder at the captured area's fitted size; `announce` is called here once (the
    /// SDP files, the room offer) and again at each re-open.
    public init(
        control: MediaControl,
        capture: X11Capture,
        options: MediaOptions,
        start: UInt64,
        output: PublishOutput,
        announce: @escaping (VideoPath) throws -> Void
    ) throws {
        self.control = control
        self.capture = capture
        self.options = options
        self.start = start
        self.output = output
        self.announce = announce
        let area = capture.targetSize
        let encoder = try Self.encoder(for: area, options: options, bitrateKbps: options.videoBitrateKbps)
        videoPath = VideoPath(
            encoder: encoder,
            control: control,
            contentHint: options.contentHint(capturedScreen: true),
            simulcast: options.simulcast
        )
        try announce(videoPath)
        lastOpen = MonotonicClock.now()
        output.progress(
            "capture: \(capture.targetDescription) on \(capture.displayName)"
                + " (\(capture.usesSharedMemory ? "MIT-SHM" : "GetImage")) → \(videoPath.width)x\(videoPath.height) H.264"
                + " at up to \(options.frameRate) fps"
        )
        if let reason = capture.sharedMemoryFallbackReason { output.problem("capture: \(reason)") }
        publishStatistics(grabRate: nil)
    }

    public var encodeTime: LatencySummary? { videoPath.encodeTime.summary }
    public var sendLatency: LatencyHistogram { videoPath.sendLatency }

    /// The encoder for a captured area of `size`, fitted into the `--size` box.
    private static func encoder(
        for size: (width: Int, height: Int),
        options: MediaOptions,
        bitrateKbps: Int
    ) throws -> H264Encoder {
        let box = VideoConverter.BoundingBox(
            longSide: max(options.width, options.height),
            shortSide: min(options.width, options.height)
        )
        let fitted = VideoConverter.fit(width: size.width, height: size.height, into: box)
        guard min(fitted.width, fitted.height) >= smallestSide else {
            throw MediaError(
                .invalidDimensions,
                "the captured \(size.width)x\(size.height) would stream as \(fitted.width)x\(fitted.height), "
                    + "under the smallest picture of \(smallestSide)x\(smallestSide)"
            )
        }
        return try H264Encoder(
            options.coding(
                H264Encoder.Configuration(
                    width: fitted.width,
                    height: fitted.height,
                    frameRate: options.frameRate,
                    bitrateKbps: bitrateKbps,
                    keyFrameInterval: options.keyFrameInterval,
                    keyFrames: .onRequest,
                    preset: options.preset,
                    threads: options.encoderThreads
                ),
                capturedScreen: true
            )
        )
    }

    /// Runs until the duration is reached, `stop()`, or the capture fails (thrown).
    public func run() throws {
        let period = 1e9 / Double(options.frameRate)
        let frames = options.duration.map { Int(($0 * Double(options.frameRate)).rounded()) }
        let first = max(start, MonotonicClock.now())
        let audioSource = try TimedAudioSource.make(options.audio, start: first, loop: options.loop)
        let audioPath = options.hasAudio ? try AudioPath(options: options, control: control) : nil
        sound?.start()
        var audioSample = 0
        var audioElapsed: UInt64 = 0
        var index = 0
        var lastStatus = first
        var grabbedAtStatus = 0
        defer { publishStatistics(grabRate: nil) }
        while frames.map({ index < $0 }) ?? true, !control.isStopped {
            let due = first + UInt64(Double(index) * period)
            MediaLoop.sleep(until: due)
            let now = MonotonicClock.now()
            if now > due + UInt64(period), index > 0 {
                control.statistics.withLock { $0.framesDropped += 1 }
                index += 1
                continue
            }
            let captureTime = sanitizer.sanitize(value: Int64(now), timescale: 1_000_000_000, arrival: now).captureTime
            guard try captureFrame(at: captureTime) else { break }
            let audioDue = UInt64(Double(index + 1) * period)
            while let source = audioSource, let audioPath, audioElapsed < audioDue {
                guard let chunk = try source(audioSample) else { break }
                audioSample += chunk.frameCount
                audioElapsed += chunk.duration
                try audioPath.push(chunk, from: .app)
            }
            if let audioPath { sound?.pump(into: audioPath) }
            index += 1
            if now - lastStatus >= 1_000_000_000 {
                let grabbed = capture.statistics.framesGrabbed
                publishStatistics(grabRate: Double(grabbed - grabbedAtStatus) * 1e9 / Double(now - lastStatus))
                grabbedAtStatus = grabbed
                lastStatus = now
            }
        }
    }

    /// One grab → convert → encode → send; false when the capture has ended (its window closed).
    private func captureFrame(at captureTime: UInt64) throws -> Bool {
        // The changed blocks are converted as the comparison finds them, at the encoder's size.
        let size = (width: videoPath.width, height: videoPath.height)
        capture.converter = (converter, size.width, size.height)
        let grab: ScreenGrab
        do {
            grab = try capture.grab(at: captureTime)
        } catch {
            // Any other error (the display gone) ends the run too; the session says goodbye,
            // then rtc-publish prints it and exits 1.
            guard error.code == .windowGone else { throw error }
            // The shared window closed: the share is over, as when the user stops it.
            output.progress("capture: \(error.message); the stream ends")
            return false
        }
        for line in capture.drainEvents() { output.progress("capture: \(line)") }
        if grab.sizeChanged { pendingSize = (grab.picture.width, grab.picture.height) }
        if let size = pendingSize, MonotonicClock.now() - lastOpen >= Self.reopenInterval {
            pendingSize = nil
            try reopen(for: size)
        }
        // Nothing changed (pixels or cursor) and the cadence wants no picture: no conversion.
        let changed = !grab.changed.isEmpty || grab.sizeChanged
        let work = videoPath.nextAction(changed: changed, at: captureTime)
        // A changed grab the frame-rate governor held back is still converted: the converter
        // updates only what changed, so its planes must not miss a change.
        guard work.encodes || changed else { return true }
        let frame: VideoFrame
        if !changed, let last = try converter.lastPicture(captureTime: captureTime),
            last.width == videoPath.width, last.height == videoPath.height
        {
            frame = last
        } else if grab.converted, videoPath.width == size.width, videoPath.height == size.height {
            // Converted during the grab (counted in the capture's statistics); the cursor on top.
            let finishStart = MonotonicClock.now()
            frame = try converter.finishChanges(grab.picture, cursor: grab.cursor)
            convertTotal &+= MonotonicClock.now() &- finishStart
        } else {
            let convertStart = MonotonicClock.now()
            frame = try converter.convert(
                grab.picture,
                cursor: grab.cursor,
                changed: grab.changed,
                width: videoPath.width,
                height: videoPath.height
            )
            convertTotal &+= MonotonicClock.now() &- convertStart
            // A grab converted for an encoder re-opened since is counted once, by the capture.
            if !grab.converted { conversions += 1 }
        }
        guard work.encodes else { return true }
        try videoPath.encode(frame, work: work, receivedAt: captureTime)
        return true
    }

    /// A new captured size: re-opens the encoder at its fitted size (called at most once per
    /// ``reopenInterval``; meanwhile the picture is letterboxed into the current size).
    private func reopen(for size: (width: Int, height: Int)) throws {
        let now = MonotonicClock.now()
        let box = VideoConverter.BoundingBox(
            longSide: max(options.width, options.height),
            shortSide: min(options.width, options.height)
        )
        let fitted = VideoConverter.fit(width: size.width, height: size.height, into: box)
        guard fitted.width != videoPath.width || fitted.height != videoPath.height else { return }
        let old = (videoPath.width, videoPath.height)
        let bitrate = control.statistics.withLock { $0.videoBitrateTargetKbps }
        let encoder: H264Encoder
        do {
            encoder = try Self.encoder(
                for: size,
                options: options,
                bitrateKbps: bitrate > 0 ? bitrate : options.videoBitrateKbps
            )
        } catch {
            // Too small to stream: keep the current encoder, the picture letterboxed into it.
            output.problem("capture: \(error); kept the stream at \(old.0)x\(old.1)")
            lastOpen = now
            return
        }
        videoPath.replace(encoder)
        lastOpen = now
        try announce(videoPath)
        output.progress(
            "stream: captured area now \(size.width)x\(size.height) → re-opened at "
                + "\(videoPath.width)x\(videoPath.height) (was \(old.0)x\(old.1)); same SSRCs and clocks, an IDR first"
        )
    }

    /// The captured size waiting for a re-open (one came less than ``reopenInterval`` ago).
    private var pendingSize: (width: Int, height: Int)?

    /// The capture's counters into the shared statistics (status line, `--stats-json`).
    private func publishStatistics(grabRate: Double?) {
        let counters = capture.statistics
        let perFrame = { (total: UInt64) in
            counters.framesGrabbed > 0 ? Double(total) / Double(counters.framesGrabbed) / 1e6 : 0
        }
        let summary = ScreenCaptureStatistics(
            display: capture.displayName,
            target: capture.targetDescription,
            sharedMemory: capture.usesSharedMemory,
            framesGrabbed: counters.framesGrabbed,
            grabMilliseconds: perFrame(counters.totalGrabNanoseconds),
            grabCPUMilliseconds: perFrame(counters.totalGrabCPUNanoseconds),
            compareMilliseconds: perFrame(counters.totalCompareNanoseconds),
            convertMilliseconds: conversions + counters.conversions > 0
                ? Double(convertTotal &+ counters.totalConvertNanoseconds) / Double(conversions + counters.conversions)
                    / 1e6 : 0,
            conversions: conversions + counters.conversions,
            changedPercent: counters.lastChangedFraction * 100,
            damageEvents: counters.damageEvents,
            changesMissedByDamage: counters.changesMissedByDamage,
            quietGrabs: counters.quietGrabs,
            stripeReads: counters.stripeReads
        )
        control.statistics.withLock {
            $0.screen = summary
            $0.capture = summary.statusText(grabRate: grabRate)
        }
    }
}
