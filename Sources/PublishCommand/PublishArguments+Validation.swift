import Cadence
import Capture
import ICE
import Ingest
import Media
import MediaPipeline
import Publisher
import SDP
import SignalingProtocol
import SystemAudio
import Transport
import WHIP

/// The validation: the parsed groups in, the session's `PublishOptions` out, or the usage error
/// (`PublishError.Code.usage`: exit status 2, one line) that names what the user must fix.
///
/// Pure but for `FileAccess`, the one place it touches the file system (inputs that must exist,
/// `--to-file`). Resources that can only be checked by opening them (an X display, the sound
/// server, a socket to bind, the DTLS certificate) are the session's to check when it starts.
extension PublishArguments {
    public func publishOptions(files: any FileAccess = LocalFiles()) throws(PublishError) -> PublishOptions {
        var options = try signaling.options()
        try input.apply(to: &options, files: files)
        try encoder.apply(to: &options)
        try feedback.apply(to: &options)
        try output.apply(to: &options, files: files)
        try webRTC.apply(to: &options)
        try whip.apply(to: &options)
        return options
    }
}

extension SignalingArguments {
    func options() throws(PublishError) -> PublishOptions {
        do {
            _ = try RoomID(validating: room)
            _ = try MemberID(validating: uid)
        } catch {
            throw PublishError(.usage, error.message)
        }
        var options = PublishOptions(room: room, uid: uid)
        if noSignal {
            options.signal = nil
        } else {
            let server = try signal.value("--signal")
            options.signal = (server.host, server.port)
        }
        options.token = token
        options.signalTLS = signalTLS
        options.signalCertificateAuthority = signalCa
        return options
    }
}

extension InputArguments {
    func apply(to options: inout PublishOptions, files: any FileAccess) throws(PublishError) {
        if let ingest {
            let address = try ingest.value("--ingest")
            do {
                try address.requireLoopback(unless: false)
            } catch {
                throw PublishError(.usage, "--ingest \(address): \(error.message)")
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
            options.ingest = address
            options.audioFromCapture = audio == nil
        }
        switch try video?.value("--video") {
        case .x11(let display)?:
            options.screenCapture = try screenCapture(display: display)
        case .input(let kind)?:
            try refuseCaptureOptions()
            options.video = kind
        case nil:
            try refuseCaptureOptions()
            options.video = .synthetic
        }
        let audioSource = try audio?.value("--audio")
        options.systemAudio = try systemAudio(audioSource == .system)
        switch audioSource {
        case .system?: options.audio = .none
        case .input(let kind)?: options.audio = kind
        // A shared screen has no test tone unless one is asked for.
        case nil: options.audio = options.audioFromCapture || options.screenCapture != nil ? .none : .synthetic
        }
        if case .y4m(let path) = options.video, !files.fileExists(atPath: path) {
            throw PublishError(.usage, "--video \(path): no such file")
        }
        if case .wav(let path) = options.audio, !files.fileExists(atPath: path) {
            throw PublishError(.usage, "--audio \(path): no such file")
        }
        options.loop = loop
        let frame = try size.value("--size")
        (options.width, options.height) = (frame.width, frame.height)
        options.frameRate = fps
        if let duration, !(duration > 0) { throw PublishError(.usage, "--duration must be positive") }
        options.duration = duration
        guard startDelay >= 0, startDelay <= 60 else {
            throw PublishError(.usage, "--start-delay is outside 0...60")
        }
        options.startDelay = startDelay
        options.bogusTimestamps = bogusTimestamps
        options.unpaced = unpaced
    }

    /// `--video x11[:DISPLAY]` and the capture options.
    private func screenCapture(display: String?) throws(PublishError) -> X11CaptureConfiguration {
        guard (1...60).contains(fps) else {
            throw PublishError(.usage, "--fps \(fps) is outside 1...60 for --video x11")
        }
        guard !unpaced, !bogusTimestamps else {
            throw PublishError(.usage, "--unpaced and --bogus-timestamps are for files and the test source")
        }
        let pointer = try cursor.value("--cursor")
        do {
            return try X11CaptureConfiguration.fromArguments(
                display: display,
                monitor: captureMonitor,
                window: captureWindow,
                region: captureRegion,
                cursor: pointer.rawValue
            )
        } catch {
            throw PublishError(.usage, "--video \(video?.text ?? "x11"): \(error.message)")
        }
    }

    /// Other video has no use for the capture options.
    private func refuseCaptureOptions() throws(PublishError) {
        let named = [
            ("--capture-monitor", captureMonitor != nil), ("--capture-window", captureWindow != nil),
            ("--capture-region", captureRegion != nil), ("--cursor", cursor.text != "on"),
        ]
        if let option = named.first(where: \.1)?.0 {
            throw PublishError(.usage, "\(option) needs --video x11")
        }
    }

    /// `--audio system` with `--app-audio` and `--mic`; nil for other audio (whose use of those
    /// two is an error).
    private func systemAudio(_ system: Bool) throws(PublishError) -> SystemAudioConfiguration? {
        guard system else {
            if let option = appAudio != nil ? "--app-audio" : mic != nil ? "--mic" : nil {
                throw PublishError(.usage, "\(option) needs --audio system")
            }
            return nil
        }
        func source(_ value: String?, _ fallback: String, _ option: String) throws(PublishError) -> String? {
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
}

extension EncoderArguments {
    func apply(to options: inout PublishOptions) throws(PublishError) {
        options.videoBitrateKbps = videoBitrate
        options.audioBitrate = audioBitrate
        guard OpusEncoder.complexityRange.contains(audioComplexity) else {
            throw PublishError(
                .usage,
                "--audio-complexity \(audioComplexity) is outside \(OpusEncoder.complexityRange)"
            )
        }
        options.audioComplexity = audioComplexity
        let bitrates = H264Encoder.Configuration.bitrateRange
        guard bitrates.contains(minVideoBitrate), minVideoBitrate <= videoBitrate else {
            throw PublishError(
                .usage,
                "--min-video-bitrate \(minVideoBitrate) must be within \(bitrates) and at most --video-bitrate"
            )
        }
        options.minVideoBitrateKbps = minVideoBitrate
        if let maxVideoBitrate {
            guard bitrates.contains(maxVideoBitrate), maxVideoBitrate >= videoBitrate else {
                throw PublishError(
                    .usage,
                    "--max-video-bitrate \(maxVideoBitrate) must be within \(bitrates) and at least --video-bitrate"
                )
            }
            options.maxVideoBitrateKbps = maxVideoBitrate
        }
        options.keyFrameInterval = keyint
        if let contentHint {
            guard let hint = FrameRateGovernor.Hint(rawValue: contentHint) else {
                let names = FrameRateGovernor.Hint.allCases.map(\.rawValue).joined(separator: ", ")
                throw PublishError(.usage, "--content-hint '\(contentHint)' is not one of \(names)")
            }
            options.contentHint = hint
        }
        options.preset = preset
        options.encoderThreads = threads
        if let simulcastLayers {
            do {
                options.simulcast = try SimulcastEncoding.parse(simulcastLayers, frameRate: options.frameRate)
            } catch {
                throw PublishError(.usage, "--simulcast-layers: \(error)")
            }
        } else if simulcast {
            options.simulcast = SimulcastEncoding.defaults(
                width: options.width,
                frameRate: options.frameRate,
                bitrateKbps: options.videoBitrateKbps
            )
        }
    }
}

extension FeedbackArguments {
    func apply(to options: inout PublishOptions) throws(PublishError) {
        options.retransmission = try nack.value("--nack")
        options.advertiseFeedback = rtcpFb
        options.acceptClearFeedback = acceptClearFeedback
        options.congestion.transportWide = !noTransportCc
        guard (0...100).contains(pacingBurstMs) else {
            throw PublishError(.usage, "--pacing-burst-ms must be 0-100; got \(pacingBurstMs)")
        }
        options.congestion.pacing?.burstAllowanceUs = Int64(pacingBurstMs) * 1000
        if noPacing { options.congestion.pacing = nil }
        options.congestion.probing = !noProbing
    }
}

extension OutputArguments {
    /// Static destinations a file may list: each costs two sockets and one SRTP protect and send
    /// per packet (the benchmarks hold 100 at 720p30 on two cores).
    public static let maximumStaticDestinations = 256

    func apply(to options: inout PublishOptions, files: any FileAccess) throws(PublishError) {
        options.suite = try srtpSuite.value("--srtp-suite")
        guard (200...9000).contains(mtu) else { throw PublishError(.usage, "--mtu \(mtu) is outside 200...9000") }
        options.mtu = mtu
        options.preview = !noPreview
        let previewAddress = try preview.value("--preview")
        options.previewHost = previewAddress.host
        options.previewVideoPort = previewAddress.port
        options.previewAudioPort = previewAddress.port + 2
        options.sdpPath = sdp
        options.staticDestinations = []
        for destination in to { options.staticDestinations.append(try destination.value("--to")) }
        if let toFile {
            guard let contents = files.contents(atPath: toFile) else {
                throw PublishError(.usage, "--to-file \(toFile): cannot read the file")
            }
            options.staticDestinations += try Self.destinations(in: contents, path: toFile)
        }
        options.statsJSONPath = statsJson
    }

    /// `--to-file`: one HOST:PORT per line, blank lines and `#` comments ignored; an error names
    /// the file and the line.
    static func destinations(in contents: [UInt8], path: String) throws(PublishError) -> [UDPAddress] {
        guard contents.count <= 64 * 1024 else {
            throw PublishError(.usage, "--to-file \(path): larger than 64 KiB")
        }
        var result: [UDPAddress] = []
        let lines = String(decoding: contents, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        for (number, raw) in lines.enumerated() {
            let line = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let text = String(line.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
            guard !text.isEmpty else { continue }
            do {
                result.append(try UDPAddress.parse(text))
            } catch {
                throw PublishError(.usage, "--to-file \(path) line \(number + 1): \(error.reason)")
            }
        }
        guard result.count <= maximumStaticDestinations else {
            throw PublishError(.usage, "--to-file \(path): more than \(maximumStaticDestinations) destinations")
        }
        return result
    }
}

extension WebRTCArguments {
    /// The highest `--max-viewers`: each WebRTC viewer holds a thread and about five
    /// descriptors, so beyond this the process meets the usual thread and file limits first.
    public static let maximumViewers = 1000

    func apply(to options: inout PublishOptions) throws(PublishError) {
        var webRTC = WebRTCOptions()
        guard iceAddress.count <= ICEAgent.maximumLocalAddresses else {
            throw PublishError(.usage, "--ice-address: at most \(ICEAgent.maximumLocalAddresses) addresses")
        }
        for address in iceAddress {
            webRTC.iceAddresses.append(try address.value("--ice-address").text)
        }
        if let stun {
            let server = try stun.value("--stun")
            webRTC.stunServer = ICEAgent.Server(host: server.host, port: UInt16(server.port))
        }
        webRTC.turnServer = try turn?.value("--turn")
        switch try iceTransportPolicy.value("--ice-transport-policy") {
        case .all:
            webRTC.relayOnly = false
        case .relay:
            guard webRTC.turnServer != nil else {
                throw PublishError(.usage, "--ice-transport-policy relay needs --turn")
            }
            webRTC.relayOnly = true
        }
        guard (dtlsCert == nil) == (dtlsKey == nil) else {
            throw PublishError(.usage, "--dtls-cert and --dtls-key go together")
        }
        webRTC.certificatePath = dtlsCert
        webRTC.privateKeyPath = dtlsKey
        options.webRTC = webRTC
        options.icePortRange = try icePorts?.value("--ice-ports").ports
        guard (0...Self.maximumViewers).contains(maxViewers) else {
            throw PublishError(.usage, "--max-viewers must be 0-\(Self.maximumViewers); got \(maxViewers)")
        }
        options.maxViewers = maxViewers
        switch VideoCodec.list(codecs) {
        case .success(let list): options.codecs = list
        case .failure(let error): throw PublishError(.usage, "--codecs: \(error.reason)")
        }
    }
}

extension WHIPArguments {
    func apply(to options: inout PublishOptions) throws(PublishError) {
        guard let whip else {
            guard whipToken == nil, whipCa == nil else {
                throw PublishError(.usage, "--whip-token and --whip-ca need --whip")
            }
            return
        }
        let endpoint = try whip.value("--whip")
        let token = try whipToken?.value("--whip-token")
        options.whip = WHIPOptions(endpoint: endpoint, token: token?.token, certificateAuthority: whipCa)
    }
}
