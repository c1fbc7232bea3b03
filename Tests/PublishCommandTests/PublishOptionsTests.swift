import ArgumentParser
import ICE
import Ingest
import Media
import PublishCommand
import Publisher
import Testing
import Transport

/// Good command lines: the `PublishOptions` the validation makes of them.
@Suite struct PublishOptionsTests {
    func options(_ arguments: [String], files: MemoryFiles = MemoryFiles()) throws -> PublishOptions {
        try PublishArguments.parse(["--room", "r", "--uid", "a_sub"] + arguments).publishOptions(files: files)
    }

    @Test func theDefaults() throws {
        let options = try options([])
        #expect(options.room == "r" && options.uid == "a_sub")
        #expect(options.signal?.host == "127.0.0.1" && options.signal?.port == 8443)
        #expect(options.video == .synthetic && options.audio == .synthetic)
        #expect(options.screenCapture == nil && options.systemAudio == nil && options.ingest == nil)
        #expect(options.width == 1280 && options.height == 720 && options.frameRate == 30)
        #expect(options.videoBitrateKbps == 1800 && options.minVideoBitrateKbps == 150)
        #expect(options.maxVideoBitrateKbps == nil)
        #expect(options.audioBitrate == 96_000 && options.audioComplexity == OpusEncoder.defaultComplexity)
        #expect(options.retransmission == .sameSSRC && !options.advertiseFeedback && !options.acceptClearFeedback)
        #expect(options.suite == .default && options.mtu == 1200)
        #expect(options.preview && options.previewHost == "127.0.0.1")
        #expect(options.previewVideoPort == 5004 && options.previewAudioPort == 5006)
        #expect(options.staticDestinations.isEmpty && options.sdpPath == nil && options.statsJSONPath == nil)
        #expect(options.congestion.transportWide && options.congestion.probing)
        #expect(options.congestion.pacing?.burstAllowanceUs == 40_000)
        #expect(options.webRTC.iceAddresses.isEmpty && !options.webRTC.relayOnly)
        #expect(options.icePortRange == nil && options.maxViewers == PublishOptions.defaultMaxViewers)
        #expect(options.whip == nil && options.duration == nil && options.startDelay == 0)
    }

    @Test func everyGroupReachesItsOptions() throws {
        let files = MemoryFiles(files: [
            "clip.y4m": "", "list.txt": "# viewers\n127.0.0.1:6000\n\n[::1]:6004  # second\n",
        ])
        let options = try options(
            [
                "--no-signal", "--video", "clip.y4m", "--audio", "none", "--loop", "--size", "640x360", "--fps", "25",
                "--duration", "3", "--start-delay", "1.5", "--video-bitrate", "900", "--min-video-bitrate", "100",
                "--max-video-bitrate", "2000", "--keyint", "50", "--preset", "ultrafast", "--threads", "2",
                "--audio-complexity", "5", "--nack", "rtx", "--rtcp-fb", "--no-pacing", "--no-probing",
                "--no-transport-cc", "--srtp-suite", "AEAD_AES_128_GCM", "--mtu", "1400", "--preview", "[::1]:7000",
                "--to", "127.0.0.1:5010", "--to-file", "list.txt", "--ice-address", "127.0.0.1", "--ice-ports",
                "40000-40010", "--stun", "127.0.0.1:3478", "--turn", "turn:u:p:w@127.0.0.1:3479",
                "--ice-transport-policy", "relay", "--max-viewers", "0", "--whip", "http://127.0.0.1:7080/whip/x",
                "--whip-token", "abc.def", "--whip-ca", "ca.pem",
            ],
            files: files
        )
        #expect(options.signal == nil)
        #expect(options.video == .y4m(path: "clip.y4m") && options.audio == AudioInputKind.none && options.loop)
        #expect(options.width == 640 && options.height == 360 && options.frameRate == 25)
        #expect(options.duration == 3 && options.startDelay == 1.5)
        #expect(options.videoBitrateKbps == 900 && options.minVideoBitrateKbps == 100)
        #expect(options.maxVideoBitrateKbps == 2000 && options.keyFrameInterval == 50)
        #expect(options.preset == "ultrafast" && options.encoderThreads == 2 && options.audioComplexity == 5)
        #expect(options.retransmission == .rtx && options.advertiseFeedback)
        #expect(options.congestion.pacing == nil && !options.congestion.probing && !options.congestion.transportWide)
        #expect(options.suite == .aeadAES128GCM && options.mtu == 1400)
        #expect(options.previewHost == "::1" && options.previewVideoPort == 7000 && options.previewAudioPort == 7002)
        #expect(options.staticDestinations.map(\.description) == ["127.0.0.1:5010", "127.0.0.1:6000", "[::1]:6004"])
        #expect(options.webRTC.iceAddresses == ["127.0.0.1"] && options.icePortRange == 40000...40010)
        #expect(options.webRTC.stunServer == ICEAgent.Server(host: "127.0.0.1", port: 3478))
        #expect(options.webRTC.turnServer?.username == "u" && options.webRTC.turnServer?.password == "p:w")
        #expect(options.webRTC.turnServer?.server == ICEAgent.Server(host: "127.0.0.1", port: 3479))
        #expect(options.webRTC.relayOnly && options.maxViewers == 0)
        #expect(options.whip?.endpoint.description == "http://127.0.0.1:7080/whip/x")
        #expect(options.whip?.token == "abc.def" && options.whip?.certificateAuthority == "ca.pem")
    }

    /// A shared screen or a capture process has no test tone unless one is asked for.
    @Test func screenAndIngestInputs() throws {
        let screen = try options(["--video", "x11:99", "--capture-region", "640x360+10+20", "--cursor", "off"])
        #expect(screen.screenCapture?.display == "99")
        #expect(screen.screenCapture?.cursor == false && screen.audio == AudioInputKind.none)
        let withTone = try options(["--video", "x11", "--audio", "test"])
        #expect(withTone.screenCapture != nil && withTone.audio == .synthetic)
        let ingest = try options(["--ingest", "unix:/tmp/publish.sock"])
        #expect(ingest.ingest == .unix(path: "/tmp/publish.sock") && ingest.audioFromCapture)
        #expect(ingest.audio == AudioInputKind.none)
        let ingestWithFile = try options(["--ingest", "tcp:127.0.0.1:9000", "--audio", "test"])
        #expect(!ingestWithFile.audioFromCapture && ingestWithFile.audio == .synthetic)
        let system = try options(["--audio", "system", "--mic", "none"])
        #expect(system.systemAudio?.app == "@DEFAULT_MONITOR@" && system.systemAudio?.mic == nil)
        #expect(system.audio == AudioInputKind.none && system.hasAudio)
    }

    /// The help shows each option's default as it would be typed, as before the options had types.
    @Test func theHelpShowsTheDefaultsAsText() {
        let help = PublishArguments.helpMessage(columns: 400)
        for text in [
            "Signaling server HOST:PORT. (default: 127.0.0.1:8443)",
            "('on' or 'off'). (default: on)",
            "with --ingest the box captured pictures are fitted into. (default: 1280x720)",
            "advertised in the SDP files) or off. (default: same-ssrc)",
            "AEAD_AES_128_GCM. (default: AES_CM_128_HMAC_SHA1_80)",
            "(audio on VIDEOPORT + 2). (default: 127.0.0.1:5004)",
            "default 'all'. (default: all)",
        ] {
            #expect(help.contains(text), "\(text)")
        }
        #expect(!help.contains("(values:"))
    }
}
