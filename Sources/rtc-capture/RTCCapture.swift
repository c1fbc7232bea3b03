import ArgumentParser
import Capture
import Dispatch
import Ingest
import Logging
import Media
import ProcessSupport
import Synchronization
import SystemAudio

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// `rtc-capture`: the X11 capture as a process of its own, a capture client of
/// `rtc-publish --ingest` (Docs/capture.md). The grabber can run as the desktop's user while the
/// publisher runs elsewhere on the machine, and a grabber that crashes never takes the room down.
@main
struct RTCCapture: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rtc-capture",
        abstract: "Capture an X display and send it to rtc-publish --ingest.",
        discussion: """
            Grabs the screen (or one monitor, window or rectangle) with the pointer drawn in, at up to \
            --fps frames a second, and sends each picture as BGRA over the ingest socket; with --audio \
            system also what the computer plays (app audio) and the microphone. Ends its session \
            with a reason the host shows: capture-finished (stopped, --duration), display-gone (the X server \
            went away), target-gone (the captured window was closed). Exit status: 0 when the run finished or \
            the host ended the session, 1 when the host could not be reached or the display went away, \
            2 for bad arguments or a display or target that cannot be captured.
            """
    )

    @Option(help: "Host address: unix:/path or tcp:HOST:PORT (loopback only), as rtc-publish --ingest.")
    var ingest: String
    @Option(help: "X display (default: $DISPLAY).") var display: String?
    @Option(help: "Capture one RandR monitor, by name or index (xrandr --listactivemonitors).")
    var captureMonitor: String?
    @Option(help: "Capture one window (id, decimal or 0x hex), following it as it moves.") var captureWindow: String?
    @Option(help: "Capture the rectangle WIDTHxHEIGHT+X+Y of the screen.") var captureRegion: String?
    @Option(help: "Draw the pointer into the picture ('on' or 'off').") var cursor = "on"
    @Option(help: "Most frames captured per second (1-60).") var fps = 30
    @Option(help: "Seconds to capture (default: until stopped).") var duration: Double?
    @Option(help: "Name sent in the hello.") var name = "rtc-capture"
    @Option(help: "Audio: 'system' (app audio and mic from PulseAudio or PipeWire) or 'none'.") var audio = "none"
    @Option(help: "With --audio system: the app-audio source (default @DEFAULT_MONITOR@), or 'none'.")
    var appAudio: String?
    @Option(help: "With --audio system: the microphone source (default @DEFAULT_SOURCE@), or 'none'.")
    var mic: String?

    /// Argument errors are one line and status 2 (ArgumentParser's default is the usage text and
    /// status 64); `--help` still prints the help.
    static func main() async {
        let command: RTCCapture
        do {
            command = try parse()
        } catch {
            guard exitCode(for: error) == .validationFailure else { exit(withError: error) }
            fail(message(for: error), status: 2)
        }
        await command.capture()
    }

    func capture() async {
        guard (1...60).contains(fps) else { Self.fail("--fps \(fps) is outside 1...60", status: 2) }
        if let duration, !(duration > 0) { Self.fail("--duration must be positive", status: 2) }
        // The grab and the reference are 8 MB each at 1080p: only the pages touched stay resident.
        FrameMemory.avoidHugePages()
        let address: IngestAddress
        let grabber: X11Capture
        do {
            address = try IngestAddress(parsing: ingest)
        } catch {
            Self.fail("--ingest '\(ingest)': \(error.message)", status: 2)
        }
        do {
            let configuration = try X11CaptureConfiguration.fromArguments(
                display: display,
                monitor: captureMonitor,
                window: captureWindow,
                region: captureRegion,
                cursor: cursor
            )
            grabber = try X11Capture(configuration)
        } catch {
            Self.fail(error.message, status: 2)
        }
        Self.say(
            "capturing \(grabber.targetDescription) on \(grabber.displayName) "
                + "(\(grabber.usesSharedMemory ? "MIT-SHM" : "GetImage")) at up to \(fps) fps"
        )
        if let reason = grabber.sharedMemoryFallbackReason { Self.warn(reason) }
        let sound: SystemAudioCapture?
        do {
            sound = try systemAudio()
        } catch {
            Self.fail(error.message, status: 2)
        }
        var capabilities: IngestCapabilities = [.video]
        if let sources = sound?.statistics.keys {
            if sources.contains(.app) { capabilities.insert(.appAudio) }
            if sources.contains(.mic) { capabilities.insert(.micAudio) }
        }
        let client: IngestClient
        do {
            client = try await IngestClient.connect(
                to: address,
                hello: IngestHello(role: .capture, capabilities: capabilities, name: name)
            )
        } catch {
            Self.fail(error.message, status: 1)
        }
        Self.say("connected to \(client.hostHello.name) at \(address)")
        let stop = StopFlag()
        let signals = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number)
            source.setEventHandler { stop.set() }
            source.resume()
            return source
        }
        defer { signals.forEach { $0.cancel() } }
        if let sound {
            sound.start()
            Self.say("audio: system sound from \(sound.serverDescription)")
        }
        defer { sound?.stop() }
        var sender = PictureSender(grabber: grabber, client: client, sound: sound)
        let outcome = await sender.run(fps: fps, duration: duration, stop: stop)
        switch outcome {
        case .finished:
            await client.finish(reason: .captureFinished, message: "")
            Self.say("finished: \(sender.sent) pictures sent")
        case .hostEnded(let end):
            Self.say("the host ended the session (\(end)); \(sender.sent) pictures sent")
        case .captureFailed(let error):
            let reason: IngestEndReason = error.code == .displayGone ? .displayGone : .targetGone
            await client.finish(reason: reason, message: error.message)
            Self.fail("\(error.message); session ended (\(reason))", status: error.code == .displayGone ? 1 : 0)
        case .sendFailed(let error):
            Self.fail(error.message, status: 1)
        }
    }

    /// `--audio system` opened (sources checked), or nil for `--audio none`.
    func systemAudio() throws(SystemAudioError) -> SystemAudioCapture? {
        switch audio {
        case "none":
            guard appAudio == nil, mic == nil else {
                throw SystemAudioError(.noSuchSource, "--app-audio and --mic need --audio system")
            }
            return nil
        case "system":
            let app = appAudio ?? "@DEFAULT_MONITOR@"
            let microphone = mic ?? "@DEFAULT_SOURCE@"
            guard app != "none" || microphone != "none" else {
                throw SystemAudioError(.noSuchSource, "--app-audio none and --mic none leave nothing to capture")
            }
            return try SystemAudioCapture(
                SystemAudioConfiguration(app: app == "none" ? nil : app, mic: microphone == "none" ? nil : microphone)
            )
        default:
            throw SystemAudioError(.noSuchSource, "--audio '\(audio)' is not system or none")
        }
    }

    /// Progress on stdout, one line each.
    static func say(_ line: String) { write(line + "\n", to: STDOUT_FILENO) }
    static func warn(_ line: String) { write("rtc-capture: \(line)\n", to: STDERR_FILENO) }

    /// One line on standard error and the exit status; what a script or a person reads.
    static func fail(_ message: String, status: Int32) -> Never {
        warn(message.split(separator: "\n").joined(separator: " "))
        Glibc.exit(status)
    }

    private static func write(_ text: String, to descriptor: Int32) {
        var text = text
        text.withUTF8 { bytes in
            guard let base = bytes.baseAddress else { return }
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(descriptor, base + offset, bytes.count - offset)
                if written < 0, errno == EINTR { continue }
                guard written > 0 else { return }
                offset += written
            }
        }
    }
}

/// Set from a signal handler's queue, read by the capture loop.
final class StopFlag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .relaxed) }
    var isSet: Bool { value.load(ordering: .relaxed) }
}

/// Grab → copy with the cursor drawn in → send, on absolute deadlines.
struct PictureSender {
    let grabber: X11Capture
    let client: IngestClient
    let sound: SystemAudioCapture?
    private(set) var sent = 0
    /// The picture as sent: BGRA rows without padding; reused (the message lets go of it once
    /// written, so the next copy goes into the same storage).
    private var buffer: [UInt8] = []

    init(grabber: X11Capture, client: IngestClient, sound: SystemAudioCapture?) {
        self.grabber = grabber
        self.client = client
        self.sound = sound
    }

    enum Outcome {
        case finished
        case hostEnded(IngestSessionEnd)
        case captureFailed(CaptureError)
        case sendFailed(IngestError)
    }

    mutating func run(fps: Int, duration: Double?, stop: StopFlag) async -> Outcome {
        let period = 1_000_000_000 / UInt64(fps)
        let first = MonotonicClock.now()
        let end = duration.map { first + UInt64($0 * 1e9) }
        var index: UInt64 = 0
        while !stop.isSet {
            if let hostEnd = client.hostEnd { return .hostEnded(hostEnd) }
            var due = first + index * period
            if let end, due >= end { return .finished }
            let now = MonotonicClock.now()
            if now > due + period {
                // Behind (a slow host): skip to the next due frame, never burst.
                index = (now - first) / period + 1
                due = first + index * period
            }
            await Self.sleep(until: due)
            index += 1
            let captureTime = MonotonicClock.now()
            let frame: RawVideoFrame
            do {
                frame = try copy(grabber.grab(at: captureTime))
            } catch let error as CaptureError {
                return .captureFailed(error)
            } catch {
                return .captureFailed(CaptureError(.x11, "\(error)"))
            }
            for line in grabber.drainEvents() { RTCCapture.say(line) }
            let timestamp = IngestTimestamp(value: Int64(captureTime), timescale: 1_000_000_000)
            do {
                try await client.send(.video(IngestVideo(frame: frame, timestamp: timestamp)))
            } catch {
                if let hostEnd = client.hostEnd { return .hostEnded(hostEnd) }
                return .sendFailed(error)
            }
            sent += 1
            do {
                try await sendAudio()
            } catch {
                if let hostEnd = client.hostEnd { return .hostEnded(hostEnd) }
                return .sendFailed(error)
            }
        }
        return .finished
    }

    /// What the sound server captured since the last picture, each chunk stamped with its
    /// capture time on the same clock as the pictures.
    private func sendAudio() async throws(IngestError) {
        guard let sound else { return }
        var chunks: [(AudioSource, AudioChunk)] = []
        sound.drain { chunks.append(($0, $1)) }
        for line in sound.drainEvents() { RTCCapture.say("audio: \(line)") }
        for (source, chunk) in chunks {
            let message = IngestAudio(
                source: source,
                sampleRate: chunk.sampleRate,
                channels: chunk.channels,
                samples: .f32(chunk.samples),
                timestamp: IngestTimestamp(value: Int64(chunk.captureTime), timescale: 1_000_000_000)
            )
            try await client.send(.audio(message))
        }
    }

    /// The grabbed picture copied out of the shared segment, the cursor blended into the copy.
    private mutating func copy(_ grab: ScreenGrab) throws -> RawVideoFrame {
        let picture = grab.picture
        let rowBytes = picture.width * 4
        if buffer.count != rowBytes * picture.height {
            buffer = [UInt8](repeating: 0, count: rowBytes * picture.height)
        }
        buffer.withUnsafeMutableBytes { destination in
            guard let base = destination.baseAddress else { return }
            for row in 0..<picture.height {
                base.advanced(by: row * rowBytes).copyMemory(
                    from: picture.base.advanced(by: row * picture.stride),
                    byteCount: rowBytes
                )
            }
            grab.cursor?.blend(into: base, stride: rowBytes, width: picture.width, height: picture.height)
        }
        return try RawVideoFrame(
            format: .bgra,
            width: picture.width,
            height: picture.height,
            planes: [buffer],
            strides: [rowBytes],
            captureTime: picture.captureTime
        )
    }

    private static func sleep(until deadline: UInt64) async {
        let now = MonotonicClock.now()
        guard deadline > now else { return }
        try? await Task.sleep(nanoseconds: deadline - now)
    }
}
