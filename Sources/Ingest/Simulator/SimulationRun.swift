import Logging
import Media

/// One run's state: the schedule of frames and chunks against the monotonic clock, and the
/// connection.
struct SimulationRun {
    let options: CaptureSimulatorOptions
    let screen: SyntheticScreenSource
    var writer: FullRangeNV12Writer
    /// Turns the upright picture into the buffer's orientation when frames carry a rotation.
    private let turner = VideoConverter()
    let logger: Logger
    var summary = CaptureSimulatorSummary()

    var client: IngestClient?
    /// Monotonic time (ns) of frame 0 and audio sample 0.
    private var origin: UInt64 = 0
    private var nextFrame = 0
    private var bogusFrameTime: Int64 = 0
    private var audio: [AudioLane] = []
    private var paused = false
    private var pauseDone = false
    private var resumeDone = false
    private var disconnectDone = false
    private var videoDiscontinuity = false
    /// When the buffer was last drawn; a flood re-sends it until the next frame is due, so the
    /// flood is as fast as the socket, not as slow as drawing.
    private var lastDrawn: UInt64?

    private struct AudioLane {
        var format: SimulatedAudio
        /// Next sample to send, counted from `origin`.
        var position = 0
        var chunkIndex = 0
        var discontinuity = false
        var nextSize: Int { SimulatedAudio.chunkSizes[chunkIndex % SimulatedAudio.chunkSizes.count] }
    }

    init(options: CaptureSimulatorOptions, screen: SyntheticScreenSource, writer: FullRangeNV12Writer, logger: Logger) {
        self.options = options
        self.screen = screen
        self.writer = writer
        self.logger = logger
        self.audio = options.audioSources.map { AudioLane(format: SimulatedAudio.of($0)) }
    }

    var hello: IngestHello {
        IngestHello(role: .capture, capabilities: options.capabilities, name: options.name)
    }

    mutating func start() async throws(IngestError) {
        client = try await IngestClient.connect(to: options.address, hello: hello)
        summary.connections = 1
        origin = MonotonicClock.now()
        logger.info(
            "connected",
            metadata: ["host": "\(client?.hostHello.name ?? "")", "address": "\(options.address)"]
        )
    }

    private func time(_ seconds: Double) -> UInt64 { origin + UInt64(seconds * 1e9) }
    private func frameDue(_ index: Int) -> UInt64 {
        origin + UInt64(index) * 1_000_000_000 / UInt64(options.frameRate)
    }
    private func chunkDue(_ lane: AudioLane) -> UInt64 {
        origin + UInt64(lane.position + lane.nextSize) * 1_000_000_000 / UInt64(lane.format.sampleRate)
    }

    /// The main loop: sleep until the next thing is due, do everything that is due, repeat.
    mutating func play() async {
        let end = time(options.duration)
        while let client {
            if let hostEnd = client.hostEnd {
                summary.hostEnd = hostEnd
                logger.warning("the host ended the session", metadata: ["reason": "\(hostEnd)"])
                await client.close()
                return
            }
            var due = [end]
            if !paused {
                due.append(options.flood ? MonotonicClock.now() : frameDue(nextFrame))
                due += audio.map(chunkDue)
            }
            if let at = options.pauseAt, !pauseDone { due.append(time(at)) }
            if let at = options.resumeAt, !resumeDone { due.append(time(at)) }
            if let at = options.disconnectAt, !disconnectDone { due.append(time(at)) }
            let next = due.min() ?? end
            let now = MonotonicClock.now()
            if next > now {
                // A sleep cut short by cancellation just leads to the next check.
                try? await Task.sleep(nanoseconds: next - now)
                continue
            }
            if now >= end {
                await client.finish(reason: .captureFinished, message: "broadcast finished")
                summary.completed = true
                return
            }
            guard await step(client, now: now) else { return }
        }
    }

    /// Does whatever is due at `now`; false when the run is over.
    private mutating func step(_ client: IngestClient, now: UInt64) async -> Bool {
        do {
            if let at = options.disconnectAt, !disconnectDone, now >= time(at) {
                disconnectDone = true
                return await reconnect(client)
            }
            if let at = options.pauseAt, !pauseDone, now >= time(at) {
                pauseDone = true
                paused = true
                try await client.send(.control(.pause))
            }
            if let at = options.resumeAt, !resumeDone, now >= time(at) {
                resumeDone = true
                paused = false
                realign(to: MonotonicClock.now())
                try await client.send(.control(.resume))
            }
            guard !paused else { return true }
            // Audio first and all of it: it is cheap, and ReplayKit delivers it whatever the
            // video does, so a slow frame must not make it fall behind.
            for index in audio.indices {
                while now >= chunkDue(audio[index]) {
                    try await sendChunk(client, lane: index)
                }
            }
            if options.flood || now >= frameDue(nextFrame) {
                try await sendFrame(client, now: now)
                if let garbage = options.garbage {
                    await sendGarbage(garbage, client)
                    return false
                }
            }
            return true
        } catch {
            // A failed send: the host closed on us. Report its reason when it gave one.
            summary.hostEnd =
                await client.waitForEnd(timeout: .seconds(1))
                ?? IngestSessionEnd(
                    reason: .disconnected,
                    message: error.message
                )
            await client.close()
            return false
        }
    }

    private mutating func sendFrame(_ client: IngestClient, now: UInt64) async throws(IngestError) {
        // More than a frame behind (a slow machine): skip to the newest due frame, as a capture
        // device drops frames rather than delivering them late.
        let newest = Int((now - origin) * UInt64(options.frameRate) / 1_000_000_000)
        if newest > nextFrame {
            summary.videoFramesSkipped += newest - nextFrame
            nextFrame = newest
            videoDiscontinuity = true
        }
        let captureTime = frameDue(nextFrame)
        let timestamp: IngestTimestamp
        if options.bogusTimestamps {
            bogusFrameTime += 1000
            timestamp = IngestTimestamp(value: bogusFrameTime, timescale: 1000)
        } else {
            timestamp = .nanoseconds(captureTime)
        }
        do {
            let drawInterval = 1_000_000_000 / UInt64(options.frameRate)
            if !options.flood || lastDrawn.map({ now >= $0 + drawInterval }) ?? true {
                try writer.write(bufferPicture(index: nextFrame, captureTime: captureTime))
                lastDrawn = now
            }
            let frame = try writer.frame(rotation: options.rotation, captureTime: captureTime)
            try await client.send(
                .video(IngestVideo(frame: frame, timestamp: timestamp, flags: videoDiscontinuity ? .discontinuity : []))
            )
        } catch let error as IngestError {
            throw error
        } catch {
            throw IngestError(.invalidOption, "cannot render frame \(nextFrame): \(error)")
        }
        videoDiscontinuity = false
        nextFrame += 1
        summary.videoFramesSent += 1
    }

    /// The upright picture, or with a rotation the picture as the device buffer holds it: turned
    /// by the opposite angle, so that applying the frame's rotation makes it upright again.
    private func bufferPicture(index: Int, captureTime: UInt64) throws -> VideoFrame {
        let upright = screen.videoFrame(index: index, captureTime: captureTime)
        guard let opposite = Rotation(rawValue: (360 - options.rotation.rawValue) % 360), opposite != .none else {
            return upright
        }
        return try turner.convert(
            RawVideoFrame(upright, rotation: opposite),
            width: writer.width,
            height: writer.height
        )
    }

    private mutating func sendChunk(_ client: IngestClient, lane index: Int) async throws(IngestError) {
        let lane = audio[index]
        let format = lane.format
        let base = Int64(origin / 1_000) * Int64(format.sampleRate) / 1_000_000
        let message = IngestAudio(
            source: format.source,
            sampleRate: format.sampleRate,
            channels: format.channels,
            samples: format.samples(start: lane.position, frames: lane.nextSize),
            timestamp: IngestTimestamp(value: base + Int64(lane.position), timescale: Int32(format.sampleRate)),
            flags: lane.discontinuity ? .discontinuity : []
        )
        try await client.send(.audio(message))
        audio[index].position += lane.nextSize
        audio[index].chunkIndex += 1
        audio[index].discontinuity = false
        if format.source == .app { summary.appChunksSent += 1 } else { summary.micChunksSent += 1 }
    }

    /// After a gap (resume, reconnect) the next frame and samples are the ones due now: real
    /// time went on, and the timestamps show the gap.
    mutating func realign(to now: UInt64) {
        let elapsed = now - origin
        let frame = Int((elapsed * UInt64(options.frameRate) + 999_999_999) / 1_000_000_000)
        nextFrame = max(nextFrame, frame)
        videoDiscontinuity = true
        for index in audio.indices {
            let position = Int(elapsed / 1_000 * UInt64(audio[index].format.sampleRate) / 1_000_000)
            audio[index].position = max(audio[index].position, position)
            audio[index].discontinuity = true
        }
    }
}
