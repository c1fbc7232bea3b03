import ArgumentParser
import Capture
import Dispatch
import Ingest
import Logging
import Media
import ProcessSupport
import Publisher
import SRTP
import SystemAudio
import Transport

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// rtc-publish: streams the screen (the built-in test source by default) as H.264 + Opus over
/// SRTP into a room, to a local preview and to any static destinations.
///
/// A synchronous command: the main thread parses, then waits in `runBlocking` while the session
/// runs on its own threads and the cooperative pool (see `runBlocking` for why not `async`).
@main
struct RTCPublish: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rtc-publish",
        abstract: "Publish a screen share (H.264 + Opus over SRTP) into a room and to a local preview.",
        discussion: """
            With no input named, streams the built-in synthetic screen (1280x720, 30 fps) and its test \
            tone. Writes the preview SDP (<uid>.sdp) before the first packet; play it with
              ffplay -protocol_whitelist file,udp,rtp -i <uid>.sdp
            Share the X display with --video x11 (the one in $DISPLAY) or --video x11:DISPLAY; pick a \
            monitor, a window or a rectangle with --capture-monitor, --capture-window, --capture-region.
            """
    )

    @Option(help: "Room to publish into (1–64 of A-Z a-z 0-9 _ -).") var room: String
    @Option(help: "Your uid in the room; '<owner>_sub' marks a screen share of <owner>.") var uid: String
    @Option(help: "Signaling server HOST:PORT.") var signal = "127.0.0.1:8443"
    @Flag(help: "Do not join a room; send only to the preview and --to destinations.") var noSignal = false
    @Option(help: "Join token (rtc-signal --secret).") var token: String?
    @Flag(help: "Signaling over TLS (rtc-signal --tls-cert), verified against the system's trust roots.")
    var signalTLS = false
    @Option(help: "Signaling over TLS, trusting only the PEM certificates in this file (a private CA).")
    var signalCa: String?
    @Option(help: "Video input: 'test', a .y4m file, or 'x11' / 'x11:DISPLAY' (an X display's screen).")
    var video: String?
    @Option(help: "With --video x11: capture one RandR monitor, by name or index (xrandr --listactivemonitors).")
    var captureMonitor: String?
    @Option(help: "With --video x11: capture one window (id, decimal or 0x hex), following it as it moves.")
    var captureWindow: String?
    @Option(help: "With --video x11: capture the rectangle WIDTHxHEIGHT+X+Y of the screen.")
    var captureRegion: String?
    @Option(help: "With --video x11: draw the pointer into the picture ('on' or 'off').") var cursor = "on"
    @Option(
        help: ArgumentHelp(
            "Audio input: 'system', 'test', a .wav file, or 'none' (with --ingest: the capture's app + mic audio).",
            discussion: "'system': what the computer plays and the microphone, from PulseAudio or PipeWire."
        )
    )
    var audio: String?
    @Option(help: "With --audio system: the app-audio source (default @DEFAULT_MONITOR@, what is played), or 'none'.")
    var appAudio: String?
    @Option(help: "With --audio system: the microphone source (default @DEFAULT_SOURCE@), or 'none'.")
    var mic: String?
    @Option(
        help: ArgumentHelp(
            "Listen for a capture process (unix:/path or tcp:127.0.0.1:PORT); its frames and audio are the input.",
            discussion: "Try it with rtc-capture-sim --ingest <same address>."
        )
    )
    var ingest: String?
    @Flag(help: "Loop file inputs.") var loop = false
    @Option(help: "Test-source size WIDTHxHEIGHT; with --ingest the box captured pictures are fitted into.")
    var size = "1280x720"
    @Option(help: "Frame rate: the test source's; the most captured per second with --video x11 (1-60) or --ingest.")
    var fps = 30
    @Option(help: "Video bitrate, kbit/s.") var videoBitrate = 1800
    @Option(help: "Lowest video bitrate receivers' loss may push the encoder to, kbit/s.") var minVideoBitrate = 150
    @Option(help: "Highest video bitrate the rate control may return to, kbit/s (default: --video-bitrate).")
    var maxVideoBitrate: Int?
    @Option(help: "Resend NACKed packets: same-ssrc, rtx (RFC 4588, advertised in the SDP files) or off.")
    var nack = "same-ssrc"
    @Flag(help: "Write RTP/SAVPF and a=rtcp-fb (nack, nack pli, ccm fir, goog-remb) into the SDP files.")
    var rtcpFb = false
    @Flag(help: "Accept clear (unauthenticated) RTCP feedback from the preview and --to receivers (Janus).")
    var acceptClearFeedback = false
    @Flag(help: "Neither offer nor answer transport-cc: no transport-wide numbers, no delay-based estimate.")
    var noTransportCc = false
    @Flag(help: "Send each picture's packets at once instead of pacing them at 2.5 x the target rate.")
    var noPacing = false
    @Option(
        help:
            "Data the pacer lets leave at once while a viewer's link has room, ms of its rate (0-100; Chromium: 40; 0 spreads every picture)."
    )
    var pacingBurstMs = 40
    @Flag(help: "Do not probe for capacity above the estimate (RTX padding) with transport-cc receivers.")
    var noProbing = false
    @Option(help: "Opus bitrate, bit/s.") var audioBitrate = 96_000
    @Option(help: "Opus complexity 0-10: lower costs less CPU and some audio quality.")
    var audioComplexity = OpusEncoder.defaultComplexity
    @Option(help: "Frames between key frames (default: 2 s).") var keyint: Int?
    @Option(help: "x264 preset.") var preset = "veryfast"
    @Option(help: "Encoder threads.") var threads = 1
    @Option(help: "SRTP suite: AES_CM_128_HMAC_SHA1_80, AES_CM_128_HMAC_SHA1_32, AEAD_AES_128_GCM.")
    var srtpSuite = SRTPSuite.default.sdpName
    @Option(help: "Largest UDP payload in bytes (RTP header + payload + SRTP tag).") var mtu = 1200
    @Flag(help: "No local preview; send only to subscribers and --to destinations.") var noPreview = false
    @Option(help: "Preview destination HOST:VIDEOPORT (audio on VIDEOPORT + 2).") var preview = "127.0.0.1:5004"
    @Option(help: "Preview SDP file (default <uid>.sdp).") var sdp: String?
    @Option(help: "Static destination HOST:PORT (video PORT, audio PORT+2), own keys and SDP; repeatable.")
    var to: [String] = []
    @Option(help: "A file of static destinations, one HOST:PORT per line (blank lines and # comments ignored).")
    var toFile: String?
    @Option(help: "Stop after this many seconds.") var duration: Double?
    @Option(help: "Seconds between writing the SDP files and the first packet.") var startDelay = 0.0
    @Option(help: "Write the status as JSON lines to this file.") var statsJson: String?
    @Flag(help: "Read and encode file or test frames as fast as possible (benchmarks); no pacing.")
    var unpaced = false
    @Flag(help: "Stamp frames like seed 001's bug (+1 s per frame) to show the clock rules repair them.")
    var bogusTimestamps = false
    @Flag(help: "Log signaling and lifecycle details.") var verbose = false
    @Option(
        help: ArgumentHelp(
            "WebRTC: gather ICE host candidates only on this address (repeatable).",
            discussion: "Without it every interface but loopback; loopback only when named."
        )
    )
    var iceAddress: [String] = []
    @Option(
        help: ArgumentHelp(
            "WebRTC: bind ICE host candidates to this UDP range MIN-MAX, for firewalls and traffic shaping.",
            discussion: "Each viewer (and --whip) takes one port per ICE address; default any port."
        )
    )
    var icePorts: String?
    @Option(help: "WebRTC: STUN server HOST:PORT (server-reflexive candidates).") var stun: String?
    @Option(help: "WebRTC: TURN server turn:USER:PASS@HOST:PORT (UDP relay candidates).") var turn: String?
    @Option(help: "WebRTC: 'relay' sends media only through --turn (no local address is offered); default 'all'.")
    var iceTransportPolicy = "all"
    @Option(
        help: ArgumentHelp(
            "Subscribers served at once (WebRTC and SDES); one more is refused with subscribe-reject.",
            discussion: "Each WebRTC viewer costs a thread, about five descriptors and about 1 MB (Docs/webrtc.md)."
        )
    )
    var maxViewers = PublishOptions.defaultMaxViewers
    @Option(help: "WebRTC: DTLS certificate (PEM), with --dtls-key; default a fresh ECDSA P-256 one.")
    var dtlsCert: String?
    @Option(help: "WebRTC: the DTLS certificate's private key (PEM).") var dtlsKey: String?
    @Option(
        help: ArgumentHelp(
            "Also publish into this WHIP endpoint (RFC 9725), e.g. http://HOST:7080/whip/endpoint/ID.",
            discussion: "With --no-signal --no-preview it is the only destination."
        )
    )
    var whip: String?
    @Option(help: "WHIP: bearer token for the endpoint (never logged).") var whipToken: String?
    @Option(help: "WHIP: for an https endpoint, trust only the PEM certificates in this file.") var whipCa: String?

    mutating func run() throws {
        let options: PublishOptions
        do {
            options = try makeOptions()
        } catch {
            fail("\(error)")
        }
        FrameMemory.keepLargeBuffersMapped()
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = .warning
            return handler
        }
        var logger = Logger(label: "rtc-publish")
        logger.logLevel = verbose ? .info : .warning
        let session: PublishSession
        do {
            session = try PublishSession(
                options: options,
                logger: logger,
                output: PublishOutput(progress: { emit($0) }, problem: { writeLine($0, to: STDERR_FILENO) })
            )
        } catch {
            fail("\(error)")
        }
        let signals = Self.onTermination { session.stop() }
        defer { signals.forEach { $0.cancel() } }
        do {
            let totals = try runBlocking { try await session.run() }
            emit(
                "\nstopped: \(totals.framesOut) frames, \(totals.audioPackets) audio packets, "
                    + "\(totals.packetsSent) packets sent, \(totals.framesDropped) frames dropped"
            )
        } catch let error as PublishError where error.code == .usage {
            fail("\(error)")
        } catch {
            writeLine("rtc-publish: \(error)", to: STDERR_FILENO)
            throw ExitCode(1)
        }
    }

    /// `--video x11[:DISPLAY]` and the capture options; nil for other inputs (whose use of the
    /// capture options is an error).
    func screenCapture() throws -> X11CaptureConfiguration? {
        guard let video, video == "x11" || video.hasPrefix("x11:") else {
            let named = [
                ("--capture-monitor", captureMonitor), ("--capture-window", captureWindow),
                ("--capture-region", captureRegion), ("--cursor", cursor == "on" ? nil : cursor),
            ]
            if let option = named.first(where: { $0.1 != nil })?.0 {
                throw PublishError(.usage, "\(option) needs --video x11")
            }
            return nil
        }
        guard (1...60).contains(fps) else {
            throw PublishError(.usage, "--fps \(fps) is outside 1...60 for --video x11")
        }
        guard !unpaced, !bogusTimestamps else {
            throw PublishError(.usage, "--unpaced and --bogus-timestamps are for files and the test source")
        }
        do {
            return try X11CaptureConfiguration.fromArguments(
                display: video.hasPrefix("x11:") ? String(video.dropFirst(4)) : nil,
                monitor: captureMonitor,
                window: captureWindow,
                region: captureRegion,
                cursor: cursor
            )
        } catch {
            throw PublishError(.usage, "--video \(video): \(error.message)")
        }
    }

    /// `--audio system` with `--app-audio` and `--mic`; nil for other audio (whose use of those
    /// two is an error).
    func systemAudio() throws -> SystemAudioConfiguration? {
        guard audio == "system" else {
            if let option = appAudio != nil ? "--app-audio" : mic != nil ? "--mic" : nil {
                throw PublishError(.usage, "\(option) needs --audio system")
            }
            return nil
        }
        let source = { (value: String?, fallback: String, option: String) throws -> String? in
            guard let value else { return fallback }
            guard !value.isEmpty else { throw PublishError(.usage, "\(option) is empty") }
            return value == "none" ? nil : value
        }
        let configuration = SystemAudioConfiguration(
            app: try source(appAudio, "@DEFAULT_MONITOR@", "--app-audio"),
            mic: try source(mic, "@DEFAULT_SOURCE@", "--mic")
        )
        guard configuration.app != nil || configuration.mic != nil else {
            throw PublishError(.usage, "--app-audio none and --mic none leave --audio system nothing to capture")
        }
        return configuration
    }

    func makeOptions() throws -> PublishOptions {
        var o = PublishOptions(room: room, uid: uid)
        o.signal = noSignal ? nil : try Self.hostPort(signal, what: "--signal")
        o.token = token
        o.signalTLS = signalTLS
        o.signalCertificateAuthority = signalCa
        if let ingest {
            do {
                o.ingest = try IngestAddress(parsing: ingest)
            } catch {
                throw PublishError(.usage, "--ingest '\(ingest)': \(error.message)")
            }
            guard video == nil else {
                throw PublishError(
                    .usage,
                    "--video and --ingest both name the video; the capture process sends it with --ingest"
                )
            }
            guard !unpaced else { throw PublishError(.usage, "--unpaced reads files; a capture process is live") }
            guard !bogusTimestamps else {
                throw PublishError(
                    .usage,
                    "--bogus-timestamps is for the test source; use rtc-capture-sim --bogus-timestamps"
                )
            }
            o.audioFromCapture = audio == nil
        }
        o.screenCapture = try screenCapture()
        if o.screenCapture == nil {
            o.video = try VideoInputKind(argument: video ?? "test")
        }
        // A shared screen has no test tone unless one is asked for.
        let quiet = o.audioFromCapture || o.screenCapture != nil
        o.systemAudio = try systemAudio()
        o.audio = try AudioInputKind(argument: o.systemAudio != nil ? "none" : audio ?? (quiet ? "none" : "test"))
        if case .y4m(let path) = o.video, !FileManager.default.fileExists(atPath: path) {
            throw PublishError(.usage, "--video \(path): no such file")
        }
        if case .wav(let path) = o.audio, !FileManager.default.fileExists(atPath: path) {
            throw PublishError(.usage, "--audio \(path): no such file")
        }
        o.loop = loop
        let dims = size.split(separator: "x").compactMap { Int($0) }
        guard dims.count == 2, dims[0] > 0, dims[1] > 0 else {
            throw PublishError(.usage, "--size '\(size)' is not WIDTHxHEIGHT with positive numbers")
        }
        (o.width, o.height) = (dims[0], dims[1])
        o.frameRate = fps
        o.videoBitrateKbps = videoBitrate
        o.audioBitrate = audioBitrate
        guard OpusEncoder.complexityRange.contains(audioComplexity) else {
            throw PublishError(
                .usage,
                "--audio-complexity \(audioComplexity) is outside \(OpusEncoder.complexityRange)"
            )
        }
        o.audioComplexity = audioComplexity
        guard H264Encoder.Configuration.bitrateRange.contains(minVideoBitrate),
            minVideoBitrate <= videoBitrate
        else {
            throw PublishError(
                .usage,
                "--min-video-bitrate \(minVideoBitrate) must be within \(H264Encoder.Configuration.bitrateRange) and at most --video-bitrate"
            )
        }
        o.minVideoBitrateKbps = minVideoBitrate
        if let maxVideoBitrate {
            guard H264Encoder.Configuration.bitrateRange.contains(maxVideoBitrate), maxVideoBitrate >= videoBitrate
            else {
                throw PublishError(
                    .usage,
                    "--max-video-bitrate \(maxVideoBitrate) must be within \(H264Encoder.Configuration.bitrateRange) and at least --video-bitrate"
                )
            }
            o.maxVideoBitrateKbps = maxVideoBitrate
        }
        switch nack {
        case "same-ssrc": o.retransmission = .sameSSRC
        case "rtx": o.retransmission = .rtx
        case "off": o.retransmission = .off
        default: throw PublishError(.usage, "--nack '\(nack)' is not same-ssrc, rtx or off")
        }
        o.advertiseFeedback = rtcpFb
        o.acceptClearFeedback = acceptClearFeedback
        o.keyFrameInterval = keyint
        o.preset = preset
        o.encoderThreads = threads
        guard let suite = SRTPSuite(sdpName: srtpSuite) else {
            throw PublishError(
                .usage,
                "--srtp-suite '\(srtpSuite)' is not one of \(SRTPSuite.allCases.map(\.sdpName).joined(separator: ", "))"
            )
        }
        o.suite = suite
        guard (200...9000).contains(mtu) else { throw PublishError(.usage, "--mtu \(mtu) is outside 200...9000") }
        o.mtu = mtu
        o.preview = !noPreview
        let previewAddress = try UDPAddress(parsing: preview)
        o.previewHost = previewAddress.host
        o.previewVideoPort = previewAddress.port
        o.previewAudioPort = previewAddress.port + 2
        o.sdpPath = sdp
        o.staticDestinations = try to.map { try UDPAddress(parsing: $0) }
        if let toFile { o.staticDestinations += try Self.destinations(inFile: toFile) }
        if let duration, !(duration > 0) { throw PublishError(.usage, "--duration must be positive") }
        o.duration = duration
        guard startDelay >= 0, startDelay <= 60 else {
            throw PublishError(.usage, "--start-delay is outside 0...60")
        }
        o.startDelay = startDelay
        o.statsJSONPath = statsJson
        o.bogusTimestamps = bogusTimestamps
        o.unpaced = unpaced
        o.webRTC = try WebRTCArguments.options(
            iceAddresses: iceAddress,
            stun: stun,
            turn: turn,
            transportPolicy: iceTransportPolicy,
            certificate: dtlsCert,
            privateKey: dtlsKey
        )
        o.icePortRange = try icePorts.map(WebRTCArguments.portRange)
        guard (0...Self.maximumViewers).contains(maxViewers) else {
            throw PublishError(.usage, "--max-viewers must be 0-\(Self.maximumViewers); got \(maxViewers)")
        }
        o.maxViewers = maxViewers
        o.congestion.transportWide = !noTransportCc
        guard (0...100).contains(pacingBurstMs) else {
            throw PublishError(.usage, "--pacing-burst-ms must be 0-100; got \(pacingBurstMs)")
        }
        o.congestion.pacing?.burstAllowanceUs = Int64(pacingBurstMs) * 1000
        if noPacing { o.congestion.pacing = nil }
        o.congestion.probing = !noProbing
        o.whip = try WebRTCArguments.whip(url: whip, token: whipToken, certificateAuthority: whipCa)
        return o
    }

    /// The highest `--max-viewers`: each WebRTC viewer holds a thread and about five
    /// descriptors, so beyond this the process meets the usual thread and file limits first.
    static let maximumViewers = 1000

    /// Static destinations a file may list: each costs two sockets and one SRTP protect and send
    /// per packet (the benchmarks hold 100 at 720p30 on two cores).
    static let maximumStaticDestinations = 256

    /// Reads `--to-file`: one HOST:PORT per line; an error names the file and line.
    static func destinations(inFile path: String) throws -> [UDPAddress] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw PublishError(.usage, "--to-file \(path): cannot read the file")
        }
        guard data.count <= 64 * 1024 else { throw PublishError(.usage, "--to-file \(path): larger than 64 KiB") }
        var result: [UDPAddress] = []
        for (number, raw) in String(decoding: data, as: UTF8.self).split(
            separator: "\n",
            omittingEmptySubsequences: false
        )
        .enumerated() {
            let line = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let text = String(line.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
            guard !text.isEmpty else { continue }
            do {
                result.append(try UDPAddress(parsing: text))
            } catch {
                throw PublishError(.usage, "--to-file \(path) line \(number + 1): \(error.message)")
            }
        }
        guard result.count <= Self.maximumStaticDestinations else {
            throw PublishError(
                .usage,
                "--to-file \(path): more than \(Self.maximumStaticDestinations) destinations"
            )
        }
        return result
    }

    static func hostPort(_ text: String, what: String) throws -> (host: String, port: Int) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
            (1...65535).contains(port), colon > text.startIndex
        else { throw PublishError(.usage, "\(what) '\(text)' is not HOST:PORT") }
        return (String(text[..<colon]), port)
    }

    /// SIGINT and SIGTERM end the session cleanly (BYE, unpublish, leave) instead of killing it.
    static func onTermination(_ handler: @escaping @Sendable () -> Void) -> [DispatchSourceSignal] {
        [SIGINT, SIGTERM].map { number in
            Glibc.signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler(handler: handler)
            source.resume()
            return source
        }
    }
}

/// Writes a line to stdout unbuffered, so into a pipe too the SDP path and the status lines
/// appear in order and live.
func emit(_ line: String) {
    writeLine(line, to: STDOUT_FILENO)
}

/// One line naming the problem, exit code 2, before anything has started.
func fail(_ message: String) -> Never {
    writeLine("rtc-publish: \(message)", to: STDERR_FILENO)
    exit(2)
}

/// `line` and a newline in as few `write(2)` calls as the descriptor takes; a closed pipe loses
/// the line, not the stream.
func writeLine(_ line: String, to descriptor: Int32) {
    var text = line + "\n"
    text.withUTF8 { bytes in
        guard let base = bytes.baseAddress else { return }
        var offset = 0
        while offset < bytes.count {
            let written = write(descriptor, base + offset, bytes.count - offset)
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { return }
            offset += written
        }
    }
}
