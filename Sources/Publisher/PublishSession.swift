import Foundation
import Logging
import Media
import SignalingClient
import SignalingProtocol
import Transport

/// What `rtc-publish` runs: everything is opened and checked first (bad input → `UsageError`,
/// exit code 2, nothing started), then the SDP files are written, then media flows while the
/// room presence runs beside it, a status line appears every second, and a stop (duration,
/// end of input, SIGINT/SIGTERM through `stop()`) ends with BYE, unpublish and leave.
public final class PublishSession: @unchecked Sendable {
    /// Bad arguments or inputs, found before anything starts.
    public struct UsageError: Error, CustomStringConvertible {
        public let description: String
        public init(_ description: String) { self.description = description }
    }

    public let options: PublishOptions
    private let logger: Logger
    private let print: @Sendable (String) -> Void
    private let loop: MediaLoop
    private let room: RoomID
    private let uid: MemberID
    private let offer: String
    private let statsFile: FileHandle?
    /// SDP files written, for the caller to show.
    public let sdpFiles: [String]

    /// Validates and opens everything; throws `UsageError` for anything the user must fix.
    public init(options: PublishOptions, logger: Logger, print: @escaping @Sendable (String) -> Void) throws {
        self.options = options
        self.logger = logger
        self.print = print
        do {
            room = try RoomID(validating: options.room)
            uid = try MemberID(validating: options.uid)
        } catch {
            throw UsageError(error.message)
        }
        let video: VideoInput
        let encoder: H264Encoder
        do throws(MediaError) {
            guard options.width > 0, options.height > 0 else {
                throw MediaError(.invalidDimensions, "size \(options.width)x\(options.height) is empty")
            }
            if case .wav(let path) = options.audio { _ = try WAVReader(path: path) }
            video = try VideoInput(
                options.video,
                width: options.width,
                height: options.height,
                frameRate: options.frameRate,
                loop: options.loop
            )
            encoder = try H264Encoder(
                video.encoderConfiguration(
                    bitrateKbps: options.videoBitrateKbps,
                    keyFrameInterval: options.keyFrameInterval,
                    preset: options.preset,
                    threads: options.encoderThreads
                )
            )
        } catch {
            throw UsageError(error.message)
        }
        if let path = options.statsJSONPath {
            guard FileManager.default.createFile(atPath: path, contents: nil),
                let handle = FileHandle(forWritingAtPath: path)
            else { throw UsageError("--stats-json \(path): cannot create the file") }
            statsFile = handle
        } else {
            statsFile = nil
        }
        let start = MonotonicClock.now() + UInt64(options.startDelay * 1e9)
        var configuration = MediaSender.Configuration(cname: options.uid)
        configuration.suite = options.suite
        configuration.mtu = options.mtu
        configuration.sessionBandwidth = Double(options.videoBitrateKbps * 1000 + options.audioBitrate)
        let sender: MediaSender
        let sets: (sps: [UInt8], pps: [UInt8])
        do {
            sender = try MediaSender(configuration: configuration, origin: start)
            sets = try encoder.parameterSets()
        } catch {
            throw UsageError("cannot set up the stream: \(error)")
        }
        let hasAudio = options.audio != .none
        var files: [String] = []
        do {
            var targets: [(id: String, address: DestinationAddress, path: String)] = []
            if options.preview {
                let address = try DestinationAddress(
                    host: options.previewHost,
                    videoPort: options.previewVideoPort,
                    audioPort: hasAudio ? options.previewAudioPort : nil
                )
                targets.append(("preview", address, options.previewSDPPath))
            }
            for to in options.staticDestinations {
                let address = try DestinationAddress(
                    host: to.host,
                    videoPort: to.port,
                    audioPort: hasAudio ? to.port + 2 : nil
                )
                targets.append(("to:\(to)", address, options.sdpPath(for: to)))
            }
            for target in targets {
                let destination = try sender.addDestination(id: target.id, address: target.address)
                let sdp = try StreamSDP.playerFile(for: destination, sender: sender, sps: sets.sps, pps: sets.pps)
                guard FileManager.default.createFile(atPath: target.path, contents: Data(sdp.utf8)) else {
                    throw UsageError("cannot write \(target.path)")
                }
                files.append(target.path)
            }
            offer = try StreamSDP.offer(sender: sender, sps: sets.sps, pps: sets.pps, audio: hasAudio)
        } catch let error as UsageError {
            throw error
        } catch {
            throw UsageError("\(error)")
        }
        sdpFiles = files
        loop = MediaLoop(sender: sender, video: video, encoder: encoder, options: options, start: start)
    }

    /// Ends the session: the media loop stops at its next frame and `run()` cleans up.
    public func stop() { loop.stop() }

    /// Streams until the duration, the end of the input, or `stop()`. Returns the final counters.
    public func run() async throws -> PublishStatistics {
        let loop = self.loop
        loop.statistics.withLock {
            $0.destinations = sdpFiles.count
            $0.signaling = options.signal == nil ? "off" : "connecting"
        }
        let mediaDone: Task<Error?, Never> = Task.detached {
            await withCheckedContinuation { continuation in
                let thread = Thread { continuation.resume(returning: loop.run()) }
                thread.name = "rtc-publish media"
                thread.qualityOfService = .userInteractive
                thread.start()
            }
        }
        let client = options.signal.map {
            SignalingClient(configuration: .init(host: $0.host, port: $0.port), logger: logger)
        }
        let presence = client.map { client in
            let presence = RoomPresence(
                options: options,
                loop: loop,
                offer: offer,
                audio: options.audio != .none,
                logger: logger,
                status: print
            )
            return Task { [room, uid] in await presence.run(client: client, room: room, uid: uid) }
        }
        let reporter = Task { await self.report() }
        let failure = await mediaDone.value
        reporter.cancel()
        // ffmpeg reads pending RTCP before pending RTP, and a BYE ends its stream at once: a BYE
        // that overtook the last media packets would cut them off. Let them land first.
        try? await Task.sleep(for: .milliseconds(200))
        loop.sender.withLock { $0.sendGoodbye(reason: "publisher stopped") }
        if let client {
            try? await client.unpublish(.screen)
            try? await client.leave()
            await client.close()
        }
        presence?.cancel()
        _ = await reporter.value
        let final = loop.snapshot()
        try? statsFile?.close()
        if let failure { throw failure }
        return final
    }

    /// The status line once a second (a line each, so logs and pipes keep the history), and the
    /// JSON record with it.
    private func report() async {
        let started = MonotonicClock.now()
        var last = loop.snapshot()
        var lastTime = started
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(1))
            let now = MonotonicClock.now()
            let current = loop.snapshot()
            let seconds = Double(now - lastTime) / 1e9
            let line = PublishStatistics.line(from: last, to: current, seconds: seconds)
            print(line)
            if let statsFile {
                let record = current.jsonLine(since: last, seconds: seconds, time: Double(now - started) / 1e9) + "\n"
                statsFile.write(Data(record.utf8))
            }
            last = current
            lastTime = now
        }
    }
}
