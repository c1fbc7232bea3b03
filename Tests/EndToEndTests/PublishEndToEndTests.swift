import Foundation
import Media
import TestSupport
import Testing

/// The product as users run it: the real rtc-signal, rtc-publish and rtc-subscribe executables,
/// and a stock ffmpeg reading the SDP files they write. Serialized: each test is a real-time
/// stream that should have the machine's cores to itself.
@Suite(.serialized) struct PublishEndToEndTests {
    static let width = 640
    static let height = 360

    /// Preview path: 5 s at 30 fps to the local preview, played from `<uid>.sdp`.
    @Test func previewPlaysAtThirtyFramesPerSecond() throws {
        let directory = try TemporaryDirectory()
        let ports = try LoopbackUDPSocket.freePortPairs(2)
        let publish = try BackgroundProcess(
            try builtProgram("rtc-publish"),
            [
                "--room", "123456", "--uid", "alice_sub", "--no-signal", "--size", "\(Self.width)x\(Self.height)",
                "--preview", "127.0.0.1:\(ports[0])", "--duration", "5", "--start-delay", "2",
                "--stats-json", "stats.jsonl",
            ],
            directory: directory
        )
        let sdp = directory.path + "/alice_sub.sdp"
        try publish.waitUntil(deadlineSeconds: 20, "alice_sub.sdp written") {
            FileManager.default.fileExists(atPath: sdp)
        }
        let receiver = try Receiver(
            sdp: sdp,
            width: Self.width,
            height: Self.height,
            directory: directory,
            name: "preview"
        )
        // A machine too busy to start ffmpeg within the start delay loses the first pictures to
        // that, not to the publisher: the checks of the stream's start then do not apply.
        let onTime = try receiver.listens(on: Int(ports[0]), within: 1.5)
        #expect(publish.waitForExit(deadlineSeconds: 30), "\(publish.output)")
        #expect(publish.exitStatus == 0, "\(publish.output)")
        #expect(
            try receiver.ffmpeg.waitForExit(deadlineSeconds: 20),
            "ffmpeg did not end on BYE:\n\(receiver.ffmpeg.standardError)"
        )
        let got = try Received(base: receiver.base, width: Self.width, height: Self.height)
        // Frames 0…149, whatever a busy machine made the publisher leave out (counted).
        let totals = try PublisherTotals(statsFile: directory.path + "/stats.jsonl")
        expectIntact(
            got,
            totals,
            firstFrameBefore: onTime ? 0 : .max,
            lastFrameAfter: 149 - 15,
            receiverStartedLate: !onTime
        )
        #expect(got.audioSeconds >= 4.5, "audio is paced by its own clock, not the pictures: \(got)")
        #expect(publish.output.contains("fps in"), "a status line every second")
        print("preview: \(got); \(totals); clock error \(got.worstClockError) s")
    }

    /// The seed's bug end to end: frames stamped +1 s each still play at about 30 fps.
    @Test func bogusCaptureTimestampsStillPlayAtThirtyFramesPerSecond() throws {
        let directory = try TemporaryDirectory()
        let ports = try LoopbackUDPSocket.freePortPairs(2)
        let publish = try BackgroundProcess(
            try builtProgram("rtc-publish"),
            [
                "--room", "r", "--uid", "seed", "--no-signal", "--size", "\(Self.width)x\(Self.height)",
                "--preview", "127.0.0.1:\(ports[0])", "--duration", "4", "--start-delay", "2", "--bogus-timestamps",
                "--stats-json", "stats.jsonl",
            ],
            directory: directory
        )
        let sdp = directory.path + "/seed.sdp"
        try publish.waitUntil(deadlineSeconds: 20, "seed.sdp written") { FileManager.default.fileExists(atPath: sdp) }
        let receiver = try Receiver(
            sdp: sdp,
            width: Self.width,
            height: Self.height,
            directory: directory,
            name: "seed"
        )
        // A machine too busy to start ffmpeg within the start delay loses the first pictures to
        // that, not to the publisher: the checks of the stream's start then do not apply.
        let onTime = try receiver.listens(on: Int(ports[0]), within: 1.5)
        #expect(
            publish.waitForExit(deadlineSeconds: 30) && publish.exitStatus == 0,
            "exit \(publish.exitStatus.map(String.init) ?? "none"): \(publish.output)"
        )
        _ = try receiver.ffmpeg.waitForExit(deadlineSeconds: 20)
        let got = try Received(base: receiver.base, width: Self.width, height: Self.height)
        // Seed 001's stamps are replaced by the capture clock: pictures a 30th of a second apart.
        let totals = try PublisherTotals(statsFile: directory.path + "/stats.jsonl")
        expectIntact(
            got,
            totals,
            firstFrameBefore: onTime ? 0 : .max,
            lastFrameAfter: 119 - 15,
            receiverStartedLate: !onTime
        )
        let stats = try String(contentsOfFile: directory.path + "/stats.jsonl", encoding: .utf8)
        #expect(stats.contains("\"timestampsRepaired\""), "\(stats)")
        print("bogus timestamps: \(got); \(totals); clock error \(got.worstClockError) s")
    }

    /// Room path: two viewers with their own keys; when one leaves, the other keeps receiving.
    @Test func twoViewersInARoomEachWithTheirOwnKeys() throws {
        let directory = try TemporaryDirectory()
        let (signal, port) = try startRoomServer(in: directory)
        let publish = try BackgroundProcess(
            try builtProgram("rtc-publish"),
            [
                "--room", "123456", "--uid", "alice_sub", "--signal", "127.0.0.1:\(port)", "--no-preview",
                "--size", "\(Self.width)x\(Self.height)", "--duration", "11", "--stats-json", "stats.jsonl",
            ],
            directory: directory
        )
        try publish.waitUntil(deadlineSeconds: 20, "joined the room") { publish.output.contains("signaling in room") }
        var viewers: [String: BackgroundProcess] = [:]
        for (uid, seconds) in [("bob", "8"), ("carol", "3")] {
            viewers[uid] = try BackgroundProcess(
                try builtProgram("rtc-subscribe"),
                [
                    "--room", "123456", "--uid", uid, "--from", "alice_sub", "--signal", "127.0.0.1:\(port)",
                    "--duration", seconds, "--play", Receiver.playCommand(base: directory.path + "/" + uid),
                ],
                directory: directory,
                name: uid
            )
        }
        for (uid, viewer) in viewers {
            #expect(viewer.waitForExit(deadlineSeconds: 30), "\(uid): \(viewer.output)")
            #expect(viewer.exitStatus == 0, "\(uid): \(viewer.output)")
        }
        #expect(
            publish.waitForExit(deadlineSeconds: 30) && publish.exitStatus == 0,
            "exit \(publish.exitStatus.map(String.init) ?? "none"): \(publish.output)"
        )
        let bob = try Received(base: directory.path + "/bob", width: Self.width, height: Self.height)
        let carol = try Received(base: directory.path + "/carol", width: Self.width, height: Self.height)
        // Both decoded whole pictures in order, every gap one the publisher counted; carol's
        // 3 s and bob's 8 s show as the frames their streams span; bob kept receiving for
        // seconds after carol left.
        let totals = try PublisherTotals(statsFile: directory.path + "/stats.jsonl")
        for (viewer, got) in [("bob", bob), ("carol", carol)] {
            #expect(got.timecodes.readable == got.timecodes.pictures, "\(viewer): \(got)")
            #expect(got.timecodes.outOfOrder == 0 && got.timecodes.repeated == 0, "\(viewer): \(got)")
            #expect(got.timecodes.missing <= totals.framesLeftOut, "\(viewer): \(got); \(totals)")
            #expect(
                got.worstClockError <= 0.5 && got.clockDrift <= 0.5,
                "\(viewer): \(got); clock error \(got.worstClockError) s"
            )
        }
        let span = { (got: Received) in Int(got.timecodes.lastFrame ?? 0) - Int(got.timecodes.firstFrame ?? 0) + 1 }
        #expect(span(carol) >= 45, "carol: \(carol)")
        #expect(span(bob) >= 180, "bob: \(bob)")
        #expect((bob.timecodes.lastFrame ?? 0) >= (carol.timecodes.lastFrame ?? 0) + 90, "bob: \(bob) carol: \(carol)")
        #expect(publish.output.contains("subscriber carol left"), "\(publish.output)")
        // Their keys differ.
        let keys = try ["bob", "carol"].map { uid in
            try String(contentsOfFile: directory.path + "/\(uid).sdp", encoding: .utf8)
                .split(separator: "\r\n").filter { $0.hasPrefix("a=crypto:") }
        }
        #expect(keys[0].count == 2 && keys[1].count == 2 && Set(keys[0]).isDisjoint(with: keys[1]))
        print("room: bob \(bob) | carol \(carol)")
        signal.interrupt()
    }

    /// The room server restarts mid-stream: the publisher is back in the room within seconds and
    /// the preview never stopped.
    @Test func signalingRestartDoesNotStopThePreview() throws {
        let directory = try TemporaryDirectory()
        let port = try freeTCPPort()
        let ports = try LoopbackUDPSocket.freePortPairs(2)
        var signal = try BackgroundProcess(try builtProgram("rtc-signal"), ["--port", "\(port)"], directory: directory)
        try signal.waitUntil(deadlineSeconds: 20, "listening") { signal.output.contains("listening") }
        let publish = try BackgroundProcess(
            try builtProgram("rtc-publish"),
            [
                "--room", "123456", "--uid", "alice_sub", "--signal", "127.0.0.1:\(port)",
                "--preview", "127.0.0.1:\(ports[0])", "--size", "\(Self.width)x\(Self.height)",
                "--duration", "10", "--start-delay", "2", "--stats-json", "stats.jsonl",
            ],
            directory: directory
        )
        let sdp = directory.path + "/alice_sub.sdp"
        try publish.waitUntil(deadlineSeconds: 20, "SDP written") { FileManager.default.fileExists(atPath: sdp) }
        let receiver = try Receiver(
            sdp: sdp,
            width: Self.width,
            height: Self.height,
            directory: directory,
            name: "restart"
        )
        // A machine too busy to start ffmpeg within the start delay loses the first pictures to
        // that, not to the publisher: the checks of the stream's start then do not apply.
        let onTime = try receiver.listens(on: Int(ports[0]), within: 1.5)
        try publish.waitUntil(deadlineSeconds: 20, "joined") { publish.output.contains("signaling in room") }
        sleep(2)
        signal.kill()
        _ = signal.waitForExit(deadlineSeconds: 5)
        sleep(1)
        signal = try BackgroundProcess(try builtProgram("rtc-signal"), ["--port", "\(port)"], directory: directory)
        try signal.waitUntil(deadlineSeconds: 15, "the publisher re-joined") {
            signal.output.contains("uid=alice_sub") && signal.output.contains("publish")
        }
        #expect(
            publish.waitForExit(deadlineSeconds: 30) && publish.exitStatus == 0,
            "exit \(publish.exitStatus.map(String.init) ?? "none"): \(publish.output)"
        )
        _ = try receiver.ffmpeg.waitForExit(deadlineSeconds: 20)
        let got = try Received(base: receiver.base, width: Self.width, height: Self.height)
        // The preview never stopped: frames 0…299 with no gap the publisher did not count.
        let totals = try PublisherTotals(statsFile: directory.path + "/stats.jsonl")
        expectIntact(
            got,
            totals,
            firstFrameBefore: onTime ? 0 : .max,
            lastFrameAfter: 299 - 15,
            receiverStartedLate: !onTime
        )
        print("restart: \(got); \(totals); clock error \(got.worstClockError) s")
    }

    /// No server at start: media flows anyway and rtc-publish retries; when the server comes up
    /// it joins and publishes; Ctrl-C then ends with unpublish, leave and exit 0.
    @Test func unreachableServerThenJoinThenInterrupt() throws {
        let directory = try TemporaryDirectory()
        let port = try freeTCPPort()
        let ports = try LoopbackUDPSocket.freePortPairs(2)
        let publish = try BackgroundProcess(
            try builtProgram("rtc-publish"),
            [
                "--room", "123456", "--uid", "alice_sub", "--signal", "127.0.0.1:\(port)",
                "--preview", "127.0.0.1:\(ports[0])", "--size", "320x180",
            ],
            directory: directory,
            separateErrors: true
        )
        // An error, so on stderr; stdout keeps the progress (status lines, SDP written).
        try publish.waitUntil(deadlineSeconds: 20, "said the server is unreachable (stderr)") {
            publish.errors.contains("signaling server 127.0.0.1:\(port) unreachable")
        }
        #expect(!publish.output.contains("unreachable"), "an error on stdout:\n\(publish.everything)")
        try publish.waitUntil(deadlineSeconds: 20, "media flowing meanwhile") {
            publish.output.contains("packets ") && !publish.output.contains("| packets 0 |")
        }
        let signal = try BackgroundProcess(try builtProgram("rtc-signal"), ["--port", "\(port)"], directory: directory)
        try signal.waitUntil(deadlineSeconds: 30, "the publisher joined and published") {
            signal.output.contains("kind=screen room=123456 uid=alice_sub")
        }
        publish.interrupt()
        #expect(publish.waitForExit(deadlineSeconds: 20), "\(publish.everything)")
        #expect(publish.exitStatus == 0, "\(publish.everything)")
        try signal.waitUntil(deadlineSeconds: 10, "unpublish and leave") {
            signal.output.contains("unpublish") && signal.output.contains("reason=left room=123456 uid=alice_sub")
        }
        #expect(publish.output.contains("stopped:"), "\(publish.output)")
    }

    /// Bad arguments as users meet them: exit status 2 and one line on stderr. rtc-publish's
    /// refusals are table-tested in-process (PublishCommandTests.BadArgumentTests); here one of
    /// them shows the executable's side (the line, the status, the stream), and the one found
    /// only when the session opens its socket path. rtc-encode and rtc-subscribe have no
    /// in-process tests of their own.
    @Test(arguments: [
        ("rtc-publish", ["--room", "r", "--uid", "a", "--signal", "nowhere"], "--signal 'nowhere' is not HOST:PORT"),
        (
            "rtc-publish", ["--room", "r", "--uid", "a", "--no-signal", "--ingest", "unix:/dev/null"],
            "the path exists and is not a socket"
        ),
        ("rtc-encode", ["encode", "--audio-complexity", "12"], "--audio-complexity 12 is outside 0...10"),
        ("rtc-subscribe", ["--room", "r", "--uid", "b", "--from", "bad uid"], "uid \"bad uid\" must be"),
        ("rtc-subscribe", ["--room", "r", "--uid", "b", "--from", "a", "--port", "5001"], "must be even"),
    ])
    func badArgumentsExitTwoWithOneLine(program: String, arguments: [String], message: String) throws {
        let directory = try TemporaryDirectory()
        let run = try BackgroundProcess(
            try builtProgram(program),
            arguments,
            directory: directory,
            separateErrors: true
        )
        #expect(run.waitForExit(deadlineSeconds: 20))
        #expect(run.exitStatus == 2, "\(run.everything)")
        #expect(run.errors.hasPrefix("\(program): ") && run.errors.contains(message), "\(run.everything)")
        #expect(run.errors.split(separator: "\n").count == 1, "one line: \(run.everything)")
    }

    /// `--to-file`: one destination per line, comments allowed.
    @Test func destinationsFromAFile() throws {
        let directory = try TemporaryDirectory()
        let ports = try LoopbackUDPSocket.freePortPairs(4)
        let list = "# viewers\n127.0.0.1:\(ports[0])\n\n127.0.0.1:\(ports[2])  # second\n"
        try list.write(toFile: directory.path + "/to.txt", atomically: true, encoding: .utf8)
        let publish = try BackgroundProcess(
            try builtProgram("rtc-publish"),
            [
                "--room", "r", "--uid", "a", "--no-signal", "--no-preview", "--to-file", "to.txt", "--duration", "1",
                "--size", "320x180",
            ],
            directory: directory
        )
        #expect(publish.waitForExit(deadlineSeconds: 20) && publish.exitStatus == 0, "\(publish.output)")
        for port in [ports[0], ports[2]] {
            let sdp = try String(contentsOfFile: directory.path + "/a-127.0.0.1-\(port).sdp", encoding: .utf8)
            #expect(sdp.contains("m=video \(port) RTP/SAVP 96"))
        }
        // A bad line is named: PublishCommandTests.BadArgumentTests.
    }

    @Test func subscribePortInUseIsRefused() throws {
        let directory = try TemporaryDirectory()
        let ports = try LoopbackUDPSocket.freePortPairs(1)
        let holder = try LoopbackUDPSocket()
        #expect(holder.bind(port: ports[0] + 2))
        let run = try BackgroundProcess(
            try builtProgram("rtc-subscribe"),
            ["--room", "r", "--uid", "b", "--from", "a", "--port", "\(ports[0])"],
            directory: directory
        )
        #expect(run.waitForExit(deadlineSeconds: 20) && run.exitStatus == 2, "\(run.output)")
        #expect(run.output.contains("port \(ports[0] + 2) on 127.0.0.1 is in use"), "\(run.output)")
    }
}
