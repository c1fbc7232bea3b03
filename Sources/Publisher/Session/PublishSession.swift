import Capture
import Ingest
import JSEP
import Logging
import Media
import MediaPipeline
import ProcessSupport
import SRTP
import SendEngine
import SignalingClient
import SignalingProtocol
import SystemAudio
import Transport
import WebRTC

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What `rtc-publish` runs: everything is opened and checked first (bad input → a usage error,
/// exit code 2, nothing started), then the SDP files are written, then media flows while the
/// room presence runs beside it, a status line appears every second, and a stop (duration,
/// end of input, SIGINT/SIGTERM through `stop()`) ends with BYE, unpublish and leave.
///
/// With `--ingest` the stream cannot be described before the capture process has sent its first
/// picture (its size decides the stream's): the listening socket opens at once, and the SDP
/// files and the room offer follow that first picture, still before the first packet.
public final class PublishSession: @unchecked Sendable {
    public let options: PublishOptions
    private let logger: Logger
    private let output: PublishOutput
    private let control: SessionControl
    private let room: RoomID
    private let uid: MemberID
    private let statsFile: StatsFile?
    private let start: UInt64
    /// The file and test inputs' media thread, opened in `init`; nil with `--ingest`.
    private let fileLoop: MediaLoop?
    /// `--video x11`: the display, opened in `init` (so its errors are usage errors); the
    /// media thread that grabs it is made in `run`.
    private var screenCapture: X11Capture?
    /// `--audio system`: the sound server, connected and its sources checked in `init` (exit 2
    /// when it cannot be), its streams started with the media thread.
    private let systemAudio: SystemAudioCapture?
    /// The preview and `--to` destinations and the SDP file each gets.
    private let announcedTargets: [(destination: Destination, path: String)]
    /// The room offer, once the stream is described: at once for files, at the first captured
    /// picture with `--ingest`.
    private let offers: AsyncStream<String>
    private let offerContinuation: AsyncStream<String>.Continuation
    private let written = Locked<[String]>([])
    /// WebRTC subscribers' transports (the certificate is made or read in `init`).
    /// Nil when no WebRTC peer can come (no room, no WHIP): then no certificate is made and
    /// OpenSSL is never initialised.
    private let webRTC: WebRTCSubscribers?
    /// `--whip`: the endpoint's session, on the same certificate and ICE settings.
    private let whip: WHIPPublication?
    /// The stream's SPS and PPS once it is described (for the WHIP offer).
    private let parameterSets: Locked<(sps: [UInt8], pps: [UInt8])?>
    /// Set when the WHIP endpoint refused the first offer with a 4xx: `run` ends with it.
    private let whipRefusal = Locked<String?>(nil)

    /// SDP files written so far (with `--ingest`, none until the first captured picture).
    public var sdpFiles: [String] { written.withLock { $0 } }

    /// Validates and opens everything; throws a usage error (`PublishError.Code.usage`) for anything the user must fix.
    /// `output` takes progress lines and, apart, refusals and errors (`PublishOutput`).
    public init(options: PublishOptions, logger: Logger, output: PublishOutput) throws {
        self.options = options
        self.logger = logger
        self.output = output
        do {
            room = try RoomID(validating: options.room)
            uid = try MemberID(validating: options.uid)
        } catch {
            throw PublishError(.usage, error.message)
        }
        var opened: (video: VideoInput, encoder: H264Encoder)?
        do throws(SystemAudioError) {
            systemAudio = try options.systemAudio.map(SystemAudioCapture.init)
        } catch {
            throw PublishError(.usage, "--audio system: \(error.message)")
        }
        // The display and the target are checked now, so their errors are usage errors (exit 2).
        do throws(CaptureError) {
            screenCapture = try options.screenCapture.map(X11Capture.init)
        } catch {
            throw PublishError(.usage, "--video x11: \(error.message)")
        }
        do throws(MediaError) {
            guard options.width > 0, options.height > 0 else {
                throw MediaError(.invalidDimensions, "size \(options.width)x\(options.height) is empty")
            }
            if case .wav(let path) = options.audio { _ = try WAVReader(path: path) }
            if options.screenCapture != nil {
                // The encoder opens in `run`, at the captured area's size; its settings are
                // checked now, on a small picture.
                _ = try H264Encoder(
                    H264Encoder.Configuration(
                        width: 320,
                        height: 180,
                        frameRate: options.frameRate,
                        bitrateKbps: options.videoBitrateKbps,
                        keyFrameInterval: options.keyFrameInterval,
                        keyFrames: .onRequest,
                        preset: options.preset,
                        threads: options.encoderThreads
                    )
                )
            } else if options.ingest == nil {
                let video = try VideoInput(
                    options.video,
                    width: options.width,
                    height: options.height,
                    frameRate: options.frameRate,
                    loop: options.loop
                )
                let encoder = try H264Encoder(
                    options.media.coding(
                        video.encoderConfiguration(
                            bitrateKbps: options.videoBitrateKbps,
                            keyFrameInterval: options.keyFrameInterval,
                            keyFrames: .onRequest,
                            preset: options.preset,
                            threads: options.encoderThreads
                        ),
                        capturedScreen: false
                    )
                )
                opened = (video, encoder)
            } else {
                // The real encoder opens at the first captured picture; its settings are
                // checked now, on a small picture, so a bad preset fails before listening.
                _ = try H264Encoder(
                    H264Encoder.Configuration(
                        width: 320,
                        height: 180,
                        frameRate: options.frameRate,
                        bitrateKbps: options.videoBitrateKbps,
                        keyFrameInterval: options.keyFrameInterval,
                        keyFrames: .onRequest,
                        preset: options.preset,
                        threads: options.encoderThreads
                    )
                )
            }
        } catch {
            throw PublishError(.usage, error.message)
        }
        if let path = options.statsJSONPath {
            do {
                statsFile = try StatsFile(path: path)
            } catch {
                throw PublishError(.usage, "--stats-json: \(error.message)")
            }
        } else {
            statsFile = nil
        }
        start = MonotonicClock.now() + (options.ingest == nil ? UInt64(options.startDelay * 1e9) : 0)
        var configuration = MediaSender.Configuration(cname: options.uid)
        configuration.suite = options.suite
        configuration.mtu = options.mtu
        configuration.sessionBandwidth = Double(options.videoBitrateKbps * 1000 + options.audioBitrate)
        configuration.feedback.bitrate.start = options.videoBitrateKbps * 1000
        configuration.feedback.bitrate.minimum = min(options.minVideoBitrateKbps, options.videoBitrateKbps) * 1000
        configuration.feedback.bitrate.maximum = (options.maxVideoBitrateKbps ?? options.videoBitrateKbps) * 1000
        configuration.congestion = options.congestion
        // The receivers' estimates are wire rates: leave room for the packet headers (≈ 58 of a
        // 1200-byte packet: IP, UDP, RTP with its extension, the SRTP tag) and for Opus with
        // its headers (50 packets a second).
        configuration.congestion.videoShare = 0.95
        configuration.congestion.reservedBitrate = options.hasAudio ? options.audioBitrate + 50 * 58 * 8 : 0
        // An SFU takes every layer (WHIP); each viewer of the room watches the one it carries.
        if let layers = options.simulcast {
            configuration.simulcast = MediaSender.Simulcast(
                rids: layers.map(\.rid),
                mid: PublishOffer.videoMid,
                needs: SimulcastEncoding.needs(of: layers)
            )
        }
        let sender: MediaSender
        do {
            sender = try MediaSender(configuration: configuration, origin: start)
        } catch {
            throw PublishError(.usage, "cannot set up the stream: \(error)")
        }
        let hasAudio = options.hasAudio
        var targets: [(destination: Destination, path: String)] = []
        do {
            if options.preview {
                let address = try DestinationAddress(
                    host: options.previewHost,
                    videoPort: options.previewVideoPort,
                    audioPort: hasAudio ? options.previewAudioPort : nil
                )
                targets.append(
                    (
                        try sender.addDestination(id: "preview", address: address, options: options.destinationOptions),
                        options.previewSDPPath
                    )
                )
            }
            for to in options.staticDestinations {
                let address = try DestinationAddress(
                    host: to.host,
                    videoPort: to.port,
                    audioPort: hasAudio ? to.port + 2 : nil
                )
                targets.append(
                    (
                        try sender.addDestination(
                            id: "to:\(to)",
                            address: address,
                            options: options.destinationOptions
                        ),
                        options.sdpPath(for: to)
                    )
                )
            }
        } catch {
            throw PublishError(.usage, "\(error)")
        }
        announcedTargets = targets
        control = SessionControl(media: MediaControl(sender: sender))
        var transportConfiguration: WebRTCTransport.Configuration?
        if options.signal != nil || options.whip != nil {
            do {
                let webRTCOptions = options.webRTC
                let log = logger
                let configuration = WebRTCTransport.Configuration(
                    certificate: try WebRTCSubscribers.certificate(webRTCOptions),
                    localAddresses: webRTCOptions.iceAddresses,
                    stunServer: webRTCOptions.stunServer,
                    turnServer: webRTCOptions.turnServer,
                    relayOnly: webRTCOptions.relayOnly,
                    portRange: options.icePortRange,
                    handshakeTimeout: webRTCOptions.handshakeTimeout,
                    connectTimeout: webRTCOptions.connectTimeout,
                    log: { log.info("\($0)") }
                )
                transportConfiguration = configuration
                // Viewers run full ICE and check at once; a WHIP endpoint may be ICE-lite and never check.
                var viewerConfiguration = configuration
                viewerConfiguration.firstCheckTimeout = webRTCOptions.firstCheckTimeout
                webRTC = WebRTCSubscribers(configuration: viewerConfiguration, control: control, options: options)
            } catch {
                throw PublishError(.usage, "WebRTC: \(error)")
            }
        } else {
            webRTC = nil
        }
        let parameterSets = Locked<(sps: [UInt8], pps: [UInt8])?>(nil)
        self.parameterSets = parameterSets
        let sharedControl = control
        whip = options.whip.flatMap { whipOptions in
            transportConfiguration.map { transportConfiguration in
                WHIPPublication(
                    options: whipOptions,
                    control: sharedControl,
                    publish: options,
                    transportConfiguration: transportConfiguration,
                    logger: logger,
                    output: output,
                    described: { parameterSets.withLock { $0 } }
                )
            }
        }
        (offers, offerContinuation) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingNewest(1))
        if let opened {
            fileLoop = MediaLoop(
                control: control.media,
                video: opened.video,
                encoder: opened.encoder,
                options: options.media,
                start: start
            )
            do {
                try announce(parameterSets: opened.encoder.parameterSets())
            } catch let error as PublishError where error.code == .usage {
                throw error
            } catch {
                throw PublishError(.usage, "cannot describe the stream: \(error)")
            }
        } else {
            fileLoop = nil
        }
    }

    /// Writes each destination's SDP file and makes the room offer: the stream is described.
    private func announce(parameterSets sets: (sps: [UInt8], pps: [UInt8])) throws {
        let offer = try control.sender.withLock { sender in
            for target in announcedTargets {
                let sdp = try StreamSDP.playerFile(
                    for: target.destination,
                    sender: sender,
                    sps: sets.sps,
                    pps: sets.pps
                )
                guard FileManager.default.createFile(atPath: target.path, contents: Data(sdp.utf8)) else {
                    throw PublishError(.usage, "cannot write \(target.path)")
                }
                written.withLock { $0.append(target.path) }
                output.progress(
                    "SDP written: \(target.path)   play: ffplay -protocol_whitelist file,udp,rtp -i \(target.path)"
                )
            }
            return try StreamSDP.offer(
                sender: sender,
                sps: sets.sps,
                pps: sets.pps,
                audio: options.hasAudio,
                retransmission: options.retransmission
            )
        }
        parameterSets.withLock { $0 = sets }
        offerContinuation.yield(offer)
        offerContinuation.finish()
    }

    /// Ends the session: the media thread stops at its next frame and `run()` cleans up.
    public func stop() { control.stop() }

    /// Streams until the duration, the end of the input, or `stop()`. Returns the final counters.
    /// With `--ingest`, a socket that cannot be opened is a usage error (`PublishError.Code.usage`).
    ///
    /// The counters come back boxed: Swift 6.3's optimizer miscompiles a throwing async function
    /// that returns a struct this large (the caller's task allocator is popped out of order:
    /// "freed pointer was not the last allocation", swiftlang/swift#87481), and rtc-publish's
    /// release build aborted at the end of every run that way.
    public func run() async throws -> PublishResult {
        let control = self.control
        let thread: MediaThread
        var ingest: (server: IngestServer, tasks: [Task<Void, Never>])?
        if let fileLoop {
            thread = fileLoop
        } else if let screenCapture {
            self.screenCapture = nil
            do {
                thread = try ScreenCaptureLoop(
                    control: control.media,
                    capture: screenCapture,
                    options: options.media,
                    start: start,
                    output: output,
                    announce: { [self] path in try announce(parameterSets: path.parameterSets()) }
                )
            } catch let error as PublishError where error.code == .usage {
                throw error
            } catch {
                throw PublishError(.usage, "--video x11: \(error)")
            }
        } else if let address = options.ingest {
            let server: IngestServer
            do {
                server = try await IngestServer.bind(
                    address,
                    configuration: IngestServerConfiguration(hostName: "rtc-publish \(options.uid)"),
                    logger: logger
                )
            } catch {
                throw PublishError(.usage, "--ingest \(address): \(error.message)")
            }
            let mailbox = IngestMailbox()
            thread = try IngestLoop(
                control: control.media,
                mailbox: mailbox,
                server: server,
                options: options.media,
                start: start,
                logger: logger,
                output: output,
                announce: { [self] path in try announce(parameterSets: path.parameterSets()) }
            )
            let serving = Task { await server.run() }
            let pumping = Task {
                for await event in server.events { mailbox.put(event) }
                mailbox.close()
            }
            ingest = (server, [serving, pumping])
            output.progress(
                "waiting for a capture process on \(server.address) (rtc-capture-sim --ingest \(server.address))"
            )
        } else {
            throw PublishError(.usage, "no video input")
        }
        // The sound server's streams start with the media thread, which drains them.
        let sound = systemAudio.map { SystemAudioPump(capture: $0, control: control.media, output: output) }
        defer { sound?.stop() }
        thread.sound = sound
        if !SRTPSession.usesNettle {
            // Still correct, about five times the CPU per packet (Debian's libsrtp2 is built on NSS).
            logger.warning("SRTP is not on Nettle", metadata: ["implementation": "\(SRTPSession.cryptoImplementation)"])
        }
        control.media.statistics.withLock {
            $0.videoBitrateTargetKbps = options.videoBitrateKbps
            $0.destinations = announcedTargets.count
        }
        control.statistics.withLock { $0.signaling = options.signal == nil ? "off" : "connecting" }
        // Two threads: the media thread encodes and sends (MediaControl.deliver), or queues
        // for the sender thread, which drains the queue and answers feedback. A sender that
        // fails stops the media thread too (its puts return at once).
        let senderThread = SenderThread(control: control.media)
        let sending = Self.onThread(named: "rtc-publish send") {
            do {
                try senderThread.run()
            } catch {
                control.stop()
                control.outbox.close()
                throw error
            }
        }
        let mediaDone = Self.onThread(named: "rtc-publish media") { try thread.run() }
        let client = try options.signal.map { signal in
            var configuration = SignalingClient.Configuration(host: signal.host, port: signal.port)
            if options.signalTLS || options.signalCertificateAuthority != nil {
                do {
                    try configuration.useTLS(trusting: options.signalCertificateAuthority)
                } catch {
                    throw PublishError(.usage, "--signal-ca: \(error)")
                }
            }
            return SignalingClient(configuration: configuration, logger: logger)
        }
        let presence = client.map { client in
            Task { [room, uid, options, offers, logger, output, webRTC] in
                // The room hears of the stream once it can be described.
                var offerIterator = offers.makeAsyncIterator()
                guard let offer = await offerIterator.next(), let webRTC else { return }
                let presence = RoomPresence(
                    options: options,
                    control: control,
                    offer: offer,
                    audio: options.hasAudio,
                    logger: logger,
                    output: output,
                    webRTC: webRTC
                )
                await presence.run(client: client, room: room, uid: uid)
            }
        }
        let publishing = whip.map { whip in
            Task { [whipRefusal] in
                await whip.run { line in
                    whipRefusal.withLock { $0 = line }
                    control.stop()
                }
            }
        }
        let reporter = Task { await self.report() }
        // What the media thread queued still goes out (the sender thread drains, then ends).
        let mediaFailure = await mediaDone.value
        control.outbox.close()
        let sendFailure = await sending.value
        let failure = mediaFailure ?? sendFailure
        reporter.cancel()
        offerContinuation.finish()
        if let ingest {
            ingest.server.shutdown()
            for task in ingest.tasks { await task.value }
        }
        // ffmpeg reads pending RTCP before pending RTP, and a BYE ends its stream at once: a BYE
        // that overtook the last media packets would cut them off. Let them land first.
        try? await Task.sleep(for: .milliseconds(200))
        control.sender.withLock { $0.sendGoodbye(reason: "publisher stopped") }
        // The WHIP session ends with a DELETE of its resource (RFC 9725 §4.4).
        publishing?.cancel()
        await publishing?.value
        if let client {
            try? await client.unpublish(.screen)
            try? await client.leave()
            await client.close()
        }
        presence?.cancel()
        webRTC?.stopAll()
        _ = await reporter.value
        let final = control.snapshot()
        var frameLatency = senderThread.latency
        frameLatency.merge(thread.sendLatency)
        writeFinalRecord(final, latency: (frameLatency.summary, thread.encodeTime))
        if let refusal = whipRefusal.withLock({ $0 }) { throw PublishError(.usage, refusal) }
        if let failure { throw failure }
        return PublishResult(final)
    }

    /// Runs `body` on a thread of its own (media work blocks for milliseconds and must never
    /// hold up the async side); the task's value is what it threw, or nil.
    private static func onThread(
        named name: String,
        _ body: @escaping @Sendable () throws -> Void
    ) -> Task<Error?, Never> {
        Task.detached {
            await withCheckedContinuation { continuation in
                let failure = MediaThreadRunner.start(named: name) {
                    do {
                        try body()
                        continuation.resume(returning: nil)
                    } catch {
                        continuation.resume(returning: error)
                    }
                }
                if let failure { continuation.resume(returning: PublishError(.usage, failure)) }
            }
        }
    }

    /// The last `--stats-json` line: totals and the per-frame timings (benchmarks read these).
    private func writeFinalRecord(
        _ totals: PublishStatistics,
        latency: (frame: LatencySummary?, encode: LatencySummary?)
    ) {
        guard let statsFile else { return }
        struct Record: Encodable {
            var final = true
            var frames: Int
            var frameLatencyMs: LatencySummary?
            var encodeMs: LatencySummary?
            /// The process's peak resident memory (getrusage), in KiB.
            var peakRSSKiB: Int
            var totals: PublishStatistics
        }
        let record = Record(
            frames: totals.framesOut,
            frameLatencyMs: latency.frame,
            encodeMs: latency.encode,
            peakRSSKiB: Self.peakResidentKiB(),
            totals: totals
        )
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        if let data = try? encoder.encode(record) {
            statsFile.write(String(decoding: data, as: UTF8.self) + "\n")
        }
    }

    /// This process's peak resident memory, from `/proc/self/status` (VmHWM): `getrusage` would
    /// report the parent's if it was larger, since Linux carries `ru_maxrss` across the exec of
    /// a process spawned with a shared address space (posix_spawn, as test harnesses do).
    static func peakResidentKiB() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") })
        else { return 0 }
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }

    /// The status line once a second (a line each, so logs and pipes keep the history), and the
    /// JSON record with it.
    private func report() async {
        let started = MonotonicClock.now()
        var last = control.snapshot()
        var lastTime = started
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(1))
            let now = MonotonicClock.now()
            webRTC?.refreshStatistics()
            whip?.refreshStatistics()
            let current = control.snapshot()
            let seconds = Double(now - lastTime) / 1e9
            let line = PublishStatistics.line(from: last, to: current, seconds: seconds)
            output.progress(line)
            if let statsFile {
                let record = current.jsonLine(since: last, seconds: seconds, time: Double(now - started) / 1e9) + "\n"
                statsFile.write(record)
            }
            last = current
            lastTime = now
        }
    }
}
