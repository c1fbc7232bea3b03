import Foundation
import TestSupport
import Testing

/// WebRTC subscribers of the real rtc-publish through the real rtc-signal: aiortc and GStreamer's
/// webrtcbin (Tests/Peers) offer, our publisher answers, ICE (libnice) and DTLS-SRTP (OpenSSL)
/// connect on loopback, and the peers decode the synthetic screen. Part of the serialized
/// end-to-end suite: each test streams in real time.
extension PublishEndToEndTests {
    /// rtc-signal and an rtc-publish that gathers ICE on loopback only, streaming for `seconds`;
    /// `arguments` go to rtc-publish too, both start through `launcher` (a namespace's);
    /// `separateErrors`: rtc-publish's stderr apart from its stdout (`BackgroundProcess.errors`).
    static func webRTCRoom(
        _ directory: TemporaryDirectory,
        seconds: Int,
        arguments: [String] = [],
        launcher: [String] = [],
        separateErrors: Bool = false
    ) throws -> (signal: BackgroundProcess, publish: BackgroundProcess, port: Int) {
        let (signal, port) = try startRoomServer(in: directory, launcher: launcher)
        let publish = try BackgroundProcess(
            try builtProgram("rtc-publish"),
            [
                "--room", "123456", "--uid", "alice_sub", "--signal", "127.0.0.1:\(port)", "--no-preview",
                "--ice-address", "127.0.0.1", "--size", "\(width)x\(height)", "--duration", "\(seconds)",
                "--stats-json", "stats.jsonl",
            ] + arguments,
            directory: directory,
            launcher: launcher,
            separateErrors: separateErrors
        )
        try publish.waitUntil(deadlineSeconds: 20, "joined the room") { publish.output.contains("signaling in room") }
        return (signal, publish, port)
    }

    /// A WebRTC viewer `uid` (default bob_sub) of alice_sub in room 123456.
    static func viewerOfAlice(
        _ peer: WebRTCSubscriber.Peer = .aiortc,
        port: Int,
        uid: String = "bob_sub",
        options: WebRTCSubscriber.Options,
        directory: TemporaryDirectory,
        launcher: [String] = []
    ) throws -> WebRTCSubscriber {
        try WebRTCSubscriber(
            peer,
            signalPort: port,
            room: "123456",
            uid: uid,
            publisher: "alice_sub",
            options: options,
            directory: directory,
            launcher: launcher
        )
    }

    /// The host candidate port our answer names (the publisher's end of the 5-tuple).
    static func answeredPort(_ answer: String) -> Int? {
        answer.split(separator: "\r\n").lazy.compactMap { line -> Int? in
            guard line.hasPrefix("a=candidate:") else { return nil }
            let fields = line.split(separator: " ")
            return fields.count > 5 && fields[4] == "127.0.0.1" ? Int(fields[5]) : nil
        }.first
    }

    /// Datagrams of every RFC 7983 class that are not what they claim: STUN with a bad length
    /// and no integrity, DTLS records with nonsense, "SRTCP" that fails authentication.
    static func garbage(count: Int) -> [[UInt8]] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { index in
            var bytes = (0..<(20 + index % 180)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            switch index % 3 {
            case 0: bytes[0] = UInt8(index % 4)  // STUN's first byte 0–3
            case 1: bytes[0...2] = [22, 0xFE, 0xFD]  // a DTLS 1.2 handshake record header
            default: bytes[0...1] = [0x80, 201]  // RTCP RR type: "SRTCP" with a made-up tag
            }
            return bytes
        }
    }

    /// A viewer of each stack subscribes with its offer and decodes the screen: whole pictures in
    /// order, at the capture rate by RTP time, its Opus too, and its PLI reaches the publisher.
    /// Meanwhile garbage of every RFC 7983 class hits the publisher's ICE port: nothing breaks.
    /// The publisher's ICE port is within its `--ice-ports`.
    @Test(arguments: WebRTCSubscriber.Peer.allCases)
    func aWebRTCViewerDecodesTheScreenShare(peer: WebRTCSubscriber.Peer) throws {
        let directory = try TemporaryDirectory()
        let icePorts = 43250...43259
        let (signal, publish, port) = try Self.webRTCRoom(
            directory,
            seconds: 16,
            arguments: ["--ice-ports", "\(icePorts.lowerBound)-\(icePorts.upperBound)"]
        )
        let viewer = try Self.viewerOfAlice(
            peer,
            port: port,
            options: .init(seconds: 7, sendPLIAt: 3, deadline: 60),
            directory: directory
        )
        // Once the answer is out, garbage to the port it names, from another socket.
        let answerFile = viewer.outputDirectory + "/answer.sdp"
        try viewer.process.waitUntil(deadlineSeconds: 30, "the answer") {
            FileManager.default.fileExists(atPath: answerFile)
        }
        let answer = try String(contentsOfFile: answerFile, encoding: .utf8)
        let mediaPort = try #require(Self.answeredPort(answer), "no 127.0.0.1 candidate in the answer:\n\(answer)")
        #expect(icePorts.contains(mediaPort), "\(peer): ICE port \(mediaPort) outside --ice-ports \(icePorts)")
        let attacker = try LoopbackUDPSocket()
        for datagram in Self.garbage(count: 300) {
            try datagram.withUnsafeBytes { try attacker.send($0, to: UInt16(mediaPort)) }
        }

        #expect(viewer.waitForExit(deadlineSeconds: 60), "\(peer):\n\(viewer.output)")
        #expect(viewer.exitStatus == 0, "\(peer):\n\(viewer.output)\n\(publish.output)")
        #expect(publish.waitForExit(deadlineSeconds: 30) && publish.exitStatus == 0, "\(publish.output)")
        signal.interrupt()
        let got = try viewer.received()
        let totals = try PublisherTotals(statsFile: directory.path + "/stats.jsonl")

        // The answer: what the issue's SDP section asks for.
        for line in ["a=setup:active", "a=fingerprint:sha-256 ", "a=ice-ufrag:", "a=rtcp-mux", "a=sendonly"] {
            #expect(answer.contains(line), "\(peer): no \(line) in the answer:\n\(answer)")
        }
        #expect(answer.contains("packetization-mode=1"), "\(answer)")
        Self.expectScreenDecoded(got, totals: totals, seconds: 7, label: "\(peer)")
        let fps = got.framesPerSecondByRTP ?? 0
        // Its key-frame request reached the publisher through SRTCP (the inbox), verified with its
        // DTLS keys: aiortc sends a PLI, webrtcbin turns the request into a FIR (RFC 5104).
        let feedback = try Self.finalFeedback(directory, destination: "sub:bob_sub")
        let requests = (feedback["pictureLossIndications"] as? Int ?? 0) + (feedback["fullIntraRequests"] as? Int ?? 0)
        #expect(requests >= 1, "\(peer): \(feedback)")
        #expect((feedback["rtcpAuthenticationFailures"] as? Int ?? 0) == 0, "\(peer): \(feedback)")
        #expect(publish.output.contains("WebRTC subscriber bob_sub connected"), "\(publish.output)")
        #expect(publish.output.contains("webrtc bob_sub connected"), "status line: \(publish.output)")
        let transport = try Self.finalWebRTCViewer(directory, uid: "bob_sub")
        #expect((transport["path"] as? String)?.contains(" host -> ") ?? false, "\(transport)")
        #expect((transport["srtcpReceived"] as? Int ?? 0) > 0, "\(transport)")
        print("webrtc \(peer): \(got); fps \(fps); feedback \(feedback); transport \(transport)")
    }

    /// What every WebRTC viewer must have received over `seconds`: whole pictures, in order,
    /// none repeated; ≥ 95 % of those the stream spans (frames the publisher left out under load
    /// are counted and forgiven); 30 fps ± 10 % by RTP time; Opus at 48 kHz for most of the time.
    static func expectScreenDecoded(_ got: WebRTCReceived, totals: PublisherTotals, seconds: Double, label: String) {
        let timecodes = got.timecodes
        let span = Int(timecodes.lastFrame ?? 0) - Int(timecodes.firstFrame ?? 0) + 1
        #expect(Double(timecodes.pictures) >= 0.7 * 30 * seconds, "\(label): \(got)")
        #expect(timecodes.readable == timecodes.pictures, "\(label): \(got)")
        #expect(timecodes.outOfOrder == 0 && timecodes.repeated == 0, "\(label): \(got)")
        #expect(
            Double(timecodes.pictures) >= 0.95 * Double(span - totals.framesLeftOut),
            "\(label): \(got); \(totals)"
        )
        let fps = got.framesPerSecondByRTP ?? 0
        #expect(fps >= 27 && fps <= 33, "\(label): \(fps) fps by RTP time; \(got)")
        #expect(got.summary.audio.sampleRate == 48_000, "\(label): \(got.summary.audio)")
        #expect(got.summary.audio.seconds >= seconds - 2, "\(label): \(got.summary.audio)")
    }

    /// Offers the publisher cannot serve are refused, each with the reason named, and the
    /// viewer that came with a wrong fingerprint never gets a DTLS session: refused and logged.
    /// Refusals and removals are problems: rtc-publish writes them to stderr, not stdout.
    @Test func offersThePublisherCannotServeAreRefusedByName() throws {
        let directory = try TemporaryDirectory()
        let (signal, publish, port) = try Self.webRTCRoom(directory, seconds: 25, separateErrors: true)
        let forger = try Self.viewerOfAlice(
            port: port,
            uid: "mallory_sub",
            options: .init(seconds: 3, deadline: 40, wrongFingerprint: true),
            directory: directory
        )
        #expect(forger.waitForExit(deadlineSeconds: 60), "\(forger.output)")
        #expect(forger.exitStatus == 1, "\(forger.output)")
        // Our DTLS client refuses the certificate with an alert: the forger's DTLS fails at once.
        #expect(forger.output.contains("DTLS failed"), "\(forger.output)")
        #expect(
            publish.errors.contains("WebRTC subscriber mallory_sub removed: DTLS: the peer's certificate"),
            "\(publish.everything)"
        )
        // Malformed and unservable offers, straight from a signaling client: what is not shaped
        // as SDP lines rtc-signal refuses itself; an SDP that is no WebRTC offer, and one
        // with only AV1 (none of H.264, VP8, VP9), the publisher refuses, each naming why.
        let refusals = try Self.subscribeWithOffers(
            port: port,
            [
                "v=0\r\nthis is not SDP\r\n",
                "v=0\r\nx=this is not a WebRTC offer\r\n",
                Self.offerWithNoCodecWeSend,
            ]
        )
        #expect(refusals.count == 3, "\(refusals)")
        #expect(
            refusals.first
                == #"invalid-field: subscribe: field "receive.offer" is not an SDP: line 2 has no "=" after its type"#,
            "\(refusals)"
        )
        #expect(
            refusals.dropFirst().allSatisfy { $0.hasPrefix("subscribe-rejected: ") && $0.contains("offer refused: ") },
            "\(refusals)"
        )
        #expect(refusals.dropFirst().first?.contains("line 2") ?? false, "\(refusals)")
        #expect(refusals.last?.contains("we send H264, VP8, VP9") ?? false, "\(refusals)")
        #expect(refusals.last?.contains("AV1/90000") ?? false, "\(refusals)")
        #expect(publish.waitForExit(deadlineSeconds: 40) && publish.exitStatus == 0, "\(publish.everything)")
        // Every refusal the publisher made (rtc-signal may refuse what is not SDP itself).
        let refusedLines = publish.errors.split(separator: "\n").filter {
            $0.hasPrefix("WebRTC subscriber probe_sub refused: offer refused: ")
        }
        let byPublisher = refusals.filter { $0.hasPrefix("subscribe-rejected: ") }.count
        #expect(byPublisher >= 1 && refusedLines.count == byPublisher, "\(refusals)\n\(publish.everything)")
        #expect(!publish.output.contains("refused"), "a refusal on stdout:\n\(publish.everything)")
        #expect(!publish.output.contains("removed: DTLS"), "a removal on stdout:\n\(publish.everything)")
        signal.interrupt()
        print("refusals: \(refusals)")
    }

    /// While rtc-publish's signaling was down the server ended every subscription to it; a
    /// viewer that is not in the room when it is back would stream on as an orphan nobody can
    /// end. Here a WHEP player (aiortc; its session lives in the room server, its media does
    /// not need it) watches while the room server restarts: the session is gone with the old
    /// server. rtc-publish ends the viewer as soon as it is back in the room, well before
    /// consent would (the player goes on answering checks).
    @Test func aViewerGoneFromTheRoomIsEndedWhenSignalingIsBack() throws {
        let directory = try TemporaryDirectory()
        let (signal, publish, port) = try Self.webRTCRoom(directory, seconds: 30)
        let viewer = try Self.viewerOfAlice(
            port: port,
            options: .init(seconds: 20, deadline: 60, whep: "http://127.0.0.1:\(port)/rooms/123456/whep/alice_sub"),
            directory: directory
        )
        try publish.waitUntil(deadlineSeconds: 30, "the viewer connected") {
            publish.output.contains("WebRTC subscriber whep_") && publish.output.contains(" connected: ")
        }
        signal.kill()
        #expect(signal.waitForExit(deadlineSeconds: 10))
        let restarted = try restartRoomServer(port: port, in: directory)
        let back = Date()
        try publish.waitUntil(deadlineSeconds: 20, "back in the room") {
            publish.output.contains("signaling: back in room 123456")
        }
        try publish.waitUntil(deadlineSeconds: 10, "the orphan ended") {
            publish.output.contains("removed: no longer in the room when signaling came back")
        }
        let after = Date().timeIntervalSince(back)
        #expect(after < 15, "ended \(after) s after the restart: consent, not the rejoin, ended it")
        publish.interrupt()
        restarted.interrupt()
        _ = viewer.process.waitForExit(deadlineSeconds: 30)
        #expect(publish.waitForExit(deadlineSeconds: 20), "\(publish.output)")
        print("orphan ended \(after) s after the room server restarted")
    }

    /// A viewer that vanishes without a word (its ICE sockets closed, its signaling still up) is
    /// dropped by consent freshness (RFC 7675) within 30 s, and told so.
    @Test func aVanishedViewerIsDroppedByConsentFreshness() throws {
        let directory = try TemporaryDirectory()
        let (signal, publish, port) = try Self.webRTCRoom(directory, seconds: 45)
        let viewer = try Self.viewerOfAlice(
            port: port,
            options: .init(seconds: 40, deadline: 80, dropMediaAfter: 2),
            directory: directory
        )
        #expect(viewer.waitForExit(deadlineSeconds: 80), "\(viewer.output)")
        #expect(viewer.exitStatus == 0, "\(viewer.output)")
        let got = try viewer.received()
        let dropped = try #require(got.summary.times["mediaDropped"], "\(viewer.output)")
        let ended = try #require(got.summary.times["ended"], "the publisher never ended it:\n\(viewer.output)")
        #expect(ended - dropped <= 30, "removed \(ended - dropped) s after the viewer vanished")
        #expect(got.summary.endReason?.contains("consent lost") ?? false, "\(got.summary)")
        #expect(publish.output.contains("WebRTC subscriber bob_sub removed: consent lost"), "\(publish.output)")
        publish.interrupt()
        signal.interrupt()
        print("consent: removed \(ended - dropped) s after the viewer's media vanished")
    }
}
