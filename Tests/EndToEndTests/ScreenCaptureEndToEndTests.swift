import Foundation
import Media
import TestSupport
import Testing

extension PublishEndToEndTests {
    /// A real X display shared end to end: a private Xvfb, real X clients drawing on it (our
    /// `rtc-testscreen` painting the synthetic screen with its timecode strip, xdotool moving the
    /// pointer and windows, xrandr defining monitors), `rtc-publish --video x11` or `rtc-capture`
    /// into `rtc-publish --ingest`, and a stock ffmpeg or headless Chromium as the receiver.
    /// Nested in PublishEndToEndTests, whose `.serialized` covers its nested suites: every real-time
    /// end-to-end stream runs alone, never beside another suite's.
    @Suite struct ScreenCaptureEndToEndTests {
        /// The stream's box: the 1280x720 screen is scaled into it (the timecode strip scales along).
        static let width = 640
        static let height = 360

        /// `rtc-testscreen` on `xvfb`; returns it and its window id once the window is up.
        static func testScreen(
            _ xvfb: XvfbServer,
            _ arguments: [String],
            directory: TemporaryDirectory
        ) throws -> (process: BackgroundProcess, window: String) {
            let screen = try BackgroundProcess(
                try builtProgram("rtc-testscreen"),
                ["--display", xvfb.display] + arguments,
                directory: directory
            )
            try screen.waitUntil(deadlineSeconds: 10, "window mapped") { screen.output.contains("window 0x") }
            let line = screen.output.split(separator: "\n").first { $0.hasPrefix("window 0x") } ?? ""
            return (screen, String(line.dropFirst("window ".count)))
        }

        /// rtc-publish without a room, its preview on a free port, played by ffmpeg.
        static func publishToPreview(
            _ arguments: [String],
            seconds: Int,
            directory: TemporaryDirectory,
            width: Int = width,
            height: Int = height,
            environment: [String: String] = [:],
            beforeTheSDP: (BackgroundProcess) throws -> Void = { _ in }
        ) throws -> (publish: BackgroundProcess, receiver: Receiver, onTime: Bool) {
            let ports = try LoopbackUDPSocket.freePortPairs(2)
            let publish = try BackgroundProcess(
                try builtProgram("rtc-publish"),
                [
                    "--room", "123456", "--uid", "alice_sub", "--no-signal", "--size", "\(width)x\(height)",
                    "--preview", "127.0.0.1:\(ports[0])", "--duration", "\(seconds)", "--start-delay", "2",
                    "--stats-json", "stats.jsonl",
                ] + arguments,
                directory: directory,
                separateErrors: true,
                environment: environment
            )
            try beforeTheSDP(publish)
            let sdp = directory.path + "/alice_sub.sdp"
            try publish.waitUntil(deadlineSeconds: 20, "alice_sub.sdp written") {
                FileManager.default.fileExists(atPath: sdp)
            }
            let receiver = try Receiver(sdp: sdp, width: width, height: height, directory: directory, name: "preview")
            let onTime = try receiver.listens(on: Int(ports[0]), within: 1.5)
            return (publish, receiver, onTime)
        }

        /// ≥ 95 % of the painted frame numbers between the first and last read, none backwards,
        /// advancing at 30 fps ± 10 % by their own capture times, in a stream of `streamRate` frames
        /// a second by the receiver's timestamps.
        ///
        /// The painter and the grab are two 30 Hz clocks with a fixed phase between them: when the
        /// phase is within the grab's jitter, the grab takes some frames twice and misses the next
        /// for the whole run (a quarter of them, in one run). Tests that count every painted frame
        /// therefore grab at 60 fps (``countingRate``): each frame is on screen for two grabs.
        static func expectTimecodes(
            _ got: Received,
            _ context: String,
            streamRate: ClosedRange<Double> = 54...66
        ) {
            let report = got.timecodes
            let span = Int(report.lastFrame ?? 0) - Int(report.firstFrame ?? 0) + 1
            let distinct = report.readable - report.repeated
            #expect(span > 60 && Double(distinct) >= 0.95 * Double(span), "\(report)\n\(context)")
            #expect(report.outOfOrder == 0, "\(report)\n\(context)")
            #expect((27...33).contains(report.captureFrameRate ?? 0), "\(report)\n\(context)")
            #expect(streamRate.contains(got.framesPerSecond ?? 0), "fps \(got.framesPerSecond ?? 0)\n\(context)")
        }

        /// The grab rate of the tests that count painted frames (see ``expectTimecodes``).
        static let countingRate = ["--fps", "60"]

        @Test func anXDisplayPlaysWithItsTimecodesInOrder() throws {
            let directory = try TemporaryDirectory()
            let xvfb = try XvfbServer(width: 1280, height: 720)
            let (screen, _) = try Self.testScreen(xvfb, ["--size", "1280x720"], directory: directory)
            let (publish, receiver, _) = try Self.publishToPreview(
                ["--video", "x11:\(xvfb.display)", "--audio", "test"] + Self.countingRate,
                seconds: 8,
                directory: directory
            )
            #expect(publish.waitForExit(deadlineSeconds: 30), "\(publish.everything)")
            #expect(publish.exitStatus == 0, "\(publish.everything)")
            #expect(try receiver.ffmpeg.waitForExit(deadlineSeconds: 20), "\(receiver.ffmpeg.standardError)")
            let got = try Received(base: receiver.base, width: Self.width, height: Self.height, sourceWidth: 1280)
            Self.expectTimecodes(got, publish.everything)
            #expect(
                publish.output.contains("capture: screen 1280x720 on \(xvfb.display) (MIT-SHM)"),
                "\(publish.output)"
            )
            #expect(publish.output.contains("| capture x11 \(xvfb.display) screen 1280x720 shm"), "\(publish.output)")
            let stats = try String(contentsOfFile: directory.path + "/stats.jsonl", encoding: .utf8)
            #expect(stats.contains("\"sharedMemory\":true"), "\(stats.suffix(2000))")
            screen.interrupt()
            print("x11 → ffmpeg: \(got.timecodes), \(got.framesPerSecond ?? 0) fps")
        }

        /// The pointer, placed by xdotool, is in the decoded pictures where it was, and only with
        /// `--cursor on`.
        @Test(arguments: [true, false]) func thePointerIsDrawnWhereItIs(cursor: Bool) throws {
            let directory = try TemporaryDirectory()
            let xvfb = try XvfbServer(width: 1280, height: 720)
            let (screen, _) = try Self.testScreen(
                xvfb,
                ["--size", "1280x720", "--solid", "404040"],
                directory: directory
            )
            _ = try xvfb.run("xdotool", ["mousemove", "300", "200"])
            // A 256x256 region from (200, 100): the pointer at (100, 100) in it, then (200, 180).
            let (publish, receiver, _) = try Self.publishToPreview(
                [
                    "--video", "x11:\(xvfb.display)", "--audio", "test", "--capture-region", "256x256+200+100",
                    "--cursor", cursor ? "on" : "off",
                ],
                seconds: 6,
                directory: directory,
                width: 256,
                height: 256
            )
            try publish.waitUntil(deadlineSeconds: 20, "streaming") { publish.output.contains("fps in") }
            Thread.sleep(forTimeInterval: 3)
            _ = try xvfb.run("xdotool", ["mousemove", "400", "280"])
            #expect(publish.waitForExit(deadlineSeconds: 30), "\(publish.everything)")
            #expect(try receiver.ffmpeg.waitForExit(deadlineSeconds: 20), "\(receiver.ffmpeg.standardError)")
            // The screen is still but for the pointer (Docs/cadence.md): the first picture and
            // its refreshes, a repeat a second, the pointer's move and its refreshes.
            let frames = try Self.grayFrames(receiver.base, width: 256, height: 256)
            try #require(frames.count >= 3, "\(frames.count) pictures")
            #expect(frames.count < 60, "a still region is not re-sent 30 times a second: \(frames.count) pictures")
            let background = frames[frames.count / 2][250 * 256 + 250]
            let first = Self.marked(frames[0], around: (100, 100), background: background)
            let last = Self.marked(frames[frames.count - 1], around: (200, 180), background: background)
            let firstElsewhere = Self.marked(frames[0], around: (200, 180), background: background)
            if cursor {
                #expect(first > 20 && last > 20, "pointer pixels: \(first) then \(last)")
                #expect(firstElsewhere < 5, "the first pointer place is not where it moved: \(firstElsewhere)")
            } else {
                #expect(first == 0 && last == 0, "no pointer with --cursor off: \(first), \(last)")
            }
            screen.interrupt()
        }

        /// Pixels in the 24x24 square from `point` (the pointer's hotspot lies inside its sprite)
        /// whose luma differs from the background by more than 24.
        static func marked(_ frame: [UInt8], around point: (Int, Int), background: UInt8) -> Int {
            var count = 0
            for y in max(0, point.1 - 12)..<min(256, point.1 + 24) {
                for x in max(0, point.0 - 12)..<min(256, point.0 + 24)
                where abs(Int(frame[y * 256 + x]) - Int(background)) > 24 {
                    count += 1
                }
            }
            return count
        }

        static func grayFrames(_ base: String, width: Int, height: Int) throws -> [[UInt8]] {
            let data = [UInt8]((try? Data(contentsOf: URL(fileURLWithPath: base + ".gray"))) ?? Data())
            let size = width * height
            return (0..<(data.count / size)).map { Array(data[($0 * size)..<(($0 + 1) * size)]) }
        }

        /// Two RandR monitors on one screen, dark left and light right: `--capture-monitor` streams
        /// exactly its half (every pixel of it light, or dark).
        @Test(arguments: ["B", "0"]) func oneMonitorOfTwo(monitor: String) throws {
            let directory = try TemporaryDirectory()
            let xvfb = try XvfbServer(width: 1280, height: 720)
            _ = try xvfb.run("xrandr", ["--setmonitor", "A", "640/170x720/340+0+0", "none"])
            _ = try xvfb.run("xrandr", ["--setmonitor", "B", "640/170x720/340+640+0", "none"])
            let (left, _) = try Self.testScreen(
                xvfb,
                ["--size", "640x720", "--position", "0,0", "--solid", "202020"],
                directory: directory
            )
            let (right, _) = try Self.testScreen(
                xvfb,
                ["--size", "640x720", "--position", "640,0", "--solid", "e0e0e0"],
                directory: directory
            )
            let (publish, receiver, _) = try Self.publishToPreview(
                ["--video", "x11:\(xvfb.display)", "--audio", "test", "--capture-monitor", monitor, "--cursor", "off"],
                seconds: 4,
                directory: directory,
                width: 640,
                height: 720
            )
            #expect(publish.waitForExit(deadlineSeconds: 30), "\(publish.everything)")
            #expect(try receiver.ffmpeg.waitForExit(deadlineSeconds: 20), "\(receiver.ffmpeg.standardError)")
            // A still half: the first picture, its refreshes and a repeat a second.
            let frames = try Self.grayFrames(receiver.base, width: 640, height: 720)
            try #require(frames.count >= 2, "\(frames.count) pictures\n\(publish.everything)")
            let picture = frames[frames.count - 1]
            let (low, high) = (picture.min() ?? 0, picture.max() ?? 0)
            if monitor == "B" {
                #expect(low > 150, "monitor B is the light half, all of it: luma \(low)…\(high)")
                #expect(publish.output.contains("monitor 'B'"), "\(publish.output)")
            } else {
                #expect(high < 80, "monitor 0 (A) is the dark half, all of it: luma \(low)…\(high)")
            }
            left.interrupt()
            right.interrupt()
        }

        /// `--capture-window`: the window moved stays whole in the stream (its timecodes read on),
        /// resized to another shape it re-opens the encoder and frames go on, and closing it ends
        /// the capture with a line, a BYE and status 0.
        @Test func aWindowFollowedThroughAMoveAndAResizeThenClosed() throws {
            let directory = try TemporaryDirectory()
            let xvfb = try XvfbServer(width: 1280, height: 720)
            let (screen, window) = try Self.testScreen(
                xvfb,
                ["--size", "640x360", "--position", "100,100"],
                directory: directory
            )
            let (publish, receiver, _) = try Self.publishToPreview(
                ["--video", "x11:\(xvfb.display)", "--audio", "test", "--capture-window", window] + Self.countingRate,
                seconds: 30,
                directory: directory
            )
            try publish.waitUntil(deadlineSeconds: 20, "streaming") { publish.output.contains("fps in") }
            Thread.sleep(forTimeInterval: 3)
            _ = try xvfb.run("xdotool", ["windowmove", window, "500", "300"])
            Thread.sleep(forTimeInterval: 3)
            // 4:3 in the 640x360 box: the stream re-opens at 480x360.
            _ = try xvfb.run("xdotool", ["windowsize", window, "480", "360"])
            try publish.waitUntil(deadlineSeconds: 10, "re-opened") {
                publish.output.contains("captured area now 480x360")
            }
            Thread.sleep(forTimeInterval: 2)
            screen.interrupt()
            #expect(publish.waitForExit(deadlineSeconds: 15), "the window's end ends the run\n\(publish.everything)")
            #expect(publish.exitStatus == 0, "\(publish.everything)")
            #expect(publish.everything.contains("window \(window) was closed"), "\(publish.everything)")
            #expect(
                try receiver.ffmpeg.waitForExit(deadlineSeconds: 20),
                "BYE ends ffmpeg\n\(receiver.ffmpeg.standardError)"
            )
            #expect(publish.output.contains("re-opened at 480x360"), "\(publish.output)")
            // ffmpeg scales the 480x360 pictures after the re-open to its first size, 640x360: the
            // strip's 6-pixel blocks become 8 wide again, so those pictures read on as well.
            let got = try Received(base: receiver.base, width: Self.width, height: Self.height)
            let report = got.timecodes
            #expect(report.outOfOrder == 0, "\(report)")
            let span = Int(report.lastFrame ?? 0) - Int(report.firstFrame ?? 0) + 1
            #expect(span > 150 && Double(report.readable - report.repeated) >= 0.95 * Double(span), "\(report)")
        }

        /// The X server gone mid-stream: rtc-publish says so in one line, says goodbye (the BYE ends
        /// ffmpeg's stream) and exits 1.
        @Test func theDisplayGoingAwayEndsTheStreamWithAGoodbye() throws {
            let directory = try TemporaryDirectory()
            let xvfb = try XvfbServer(width: 1280, height: 720)
            let (screen, _) = try Self.testScreen(xvfb, ["--size", "1280x720"], directory: directory)
            let (publish, receiver, _) = try Self.publishToPreview(
                ["--video", "x11:\(xvfb.display)", "--audio", "test"],
                seconds: 30,
                directory: directory
            )
            try publish.waitUntil(deadlineSeconds: 20, "streaming") { publish.output.contains("fps in") }
            Thread.sleep(forTimeInterval: 3)
            xvfb.stop()
            #expect(publish.waitForExit(deadlineSeconds: 10), "\(publish.everything)")
            #expect(publish.exitStatus == 1, "\(publish.everything)")
            let lines = publish.errors.split(separator: "\n")
            #expect(
                lines.count == 1 && publish.errors.contains("display \(xvfb.display) is gone"),
                "\(publish.everything)"
            )
            #expect(
                try receiver.ffmpeg.waitForExit(deadlineSeconds: 10),
                "BYE ends ffmpeg\n\(receiver.ffmpeg.standardError)"
            )
            let got = try Received(base: receiver.base, width: Self.width, height: Self.height, sourceWidth: 1280)
            #expect(got.timecodes.readable > 30 && got.timecodes.outOfOrder == 0, "\(got.timecodes)")
            screen.interrupt()
        }

        /// `rtc-capture` into `rtc-publish --ingest`: the same screen arrives; the X server killed
        /// ends the session with `display-gone`, and the publisher keeps its stream going.
        @Test func rtcCaptureIntoIngestThenTheDisplayGoes() throws {
            let directory = try TemporaryDirectory()
            let xvfb = try XvfbServer(width: 1280, height: 720)
            let (screen, _) = try Self.testScreen(xvfb, ["--size", "1280x720"], directory: directory)
            let socket = directory.path + "/ingest.sock"
            var started: BackgroundProcess?
            // With --ingest the SDP is written at the first picture: rtc-capture comes first.
            let (publish, receiver, _) = try Self.publishToPreview(
                ["--ingest", "unix:\(socket)", "--audio", "test"] + Self.countingRate,
                seconds: 14,
                directory: directory
            ) { publish in
                try publish.waitUntil(deadlineSeconds: 20, "listening") {
                    FileManager.default.fileExists(atPath: socket)
                }
                started = try BackgroundProcess(
                    try builtProgram("rtc-capture"),
                    ["--ingest", "unix:\(socket)", "--display", xvfb.display] + Self.countingRate,
                    directory: directory,
                    separateErrors: true
                )
            }
            let capture = try #require(started)
            try publish.waitUntil(deadlineSeconds: 20, "connected") {
                publish.output.contains("capture client 'rtc-capture'")
            }
            Thread.sleep(forTimeInterval: 6)
            xvfb.stop()
            #expect(capture.waitForExit(deadlineSeconds: 10), "\(capture.everything)")
            #expect(capture.exitStatus == 1, "\(capture.everything)")
            #expect(capture.errors.contains("display-gone"), "\(capture.everything)")
            try publish.waitUntil(deadlineSeconds: 10, "the session's end") {
                publish.output.contains("capture session ended (display-gone")
            }
            #expect(publish.isRunning, "the publisher keeps its room: \(publish.everything)")
            #expect(publish.waitForExit(deadlineSeconds: 30), "\(publish.everything)")
            #expect(publish.exitStatus == 0, "\(publish.everything)")
            #expect(try receiver.ffmpeg.waitForExit(deadlineSeconds: 20), "\(receiver.ffmpeg.standardError)")
            let got = try Received(base: receiver.base, width: Self.width, height: Self.height, sourceWidth: 1280)
            let report = got.timecodes
            let span = Int(report.lastFrame ?? 0) - Int(report.firstFrame ?? 0) + 1
            #expect(span > 120 && Double(report.readable - report.repeated) >= 0.95 * Double(span), "\(report)")
            #expect(report.outOfOrder == 0, "\(report)")
            screen.interrupt()
        }

        /// An X server without MIT-SHM: GetImage instead, said once, and the stream is the same.
        @Test func withoutSharedMemoryGetImageServes() throws {
            let directory = try TemporaryDirectory()
            let xvfb = try XvfbServer(width: 1280, height: 720, extraArguments: ["-extension", "MIT-SHM"])
            let (screen, _) = try Self.testScreen(xvfb, ["--size", "1280x720"], directory: directory)
            let (publish, receiver, _) = try Self.publishToPreview(
                ["--video", "x11:\(xvfb.display)", "--audio", "test"] + Self.countingRate,
                seconds: 6,
                directory: directory
            )
            #expect(publish.waitForExit(deadlineSeconds: 30), "\(publish.everything)")
            #expect(try receiver.ffmpeg.waitForExit(deadlineSeconds: 20), "\(receiver.ffmpeg.standardError)")
            #expect(publish.errors.contains("MIT-SHM"), "one line says why: \(publish.everything)")
            #expect(publish.output.contains("(GetImage)"), "\(publish.output)")
            let got = try Received(base: receiver.base, width: Self.width, height: Self.height, sourceWidth: 1280)
            Self.expectTimecodes(got, publish.everything)
            screen.interrupt()
        }

        /// What cannot be captured is refused at start: status 2 and one line that names it. These
        /// need the X server; the capture options' own mistakes (an empty display name, a region
        /// that is not one, --fps out of range, a capture option without --video x11) are
        /// PublishCommandTests.BadArgumentTests.
        @Test func startUpErrorsExitTwoWithOneLine() throws {
            let directory = try TemporaryDirectory()
            let xvfb = try XvfbServer(width: 1280, height: 720)
            _ = try xvfb.run("xrandr", ["--setmonitor", "A", "640/170x720/340+0+0", "none"])
            let cases: [([String], String)] = [
                (["--video", "x11:\(xvfb.display)9", "--no-signal"], "\(xvfb.display)9"),
                (
                    ["--video", "x11:\(xvfb.display)", "--no-signal", "--capture-region", "2000x100+0+0"],
                    "2000x100+0+0"
                ),
                (["--video", "x11:\(xvfb.display)", "--no-signal", "--capture-region", "2000x100+0+0"], "1280x720"),
                (["--video", "x11:\(xvfb.display)", "--no-signal", "--capture-monitor", "Z"], "A"),
                (["--video", "x11:\(xvfb.display)", "--no-signal", "--capture-window", "0x7fff0001"], "0x7fff0001"),
            ]
            for (arguments, text) in cases {
                let run = try BackgroundProcess(
                    try builtProgram("rtc-publish"),
                    ["--room", "123456", "--uid", "alice_sub"] + arguments,
                    directory: directory,
                    separateErrors: true
                )
                #expect(run.waitForExit(deadlineSeconds: 10), "\(arguments)")
                #expect(run.exitStatus == 2, "\(arguments): \(run.everything)")
                let lines = run.errors.split(separator: "\n")
                #expect(lines.count == 1 && run.errors.contains(text), "\(arguments): \(run.everything)")
            }
        }

        /// The room's viewer page in headless Chromium plays a shared X display; the screen-to-viewer
        /// delay (timecode painted → frame shown) is printed for Docs/benchmarks.md. Counted from
        /// 3 s after the first frame: a new viewer starts at 300 kbit/s (D33) and x264 takes a
        /// few seconds after the probes to bring its QP down (Docs/cadence.md), so the join's
        /// first pictures are too coarse for every timecode strip to be read.
        @Test func theViewerPagePlaysASharedDisplay() throws {
            let directory = try TemporaryDirectory()
            let xvfb = try XvfbServer(width: 1280, height: 720)
            let (screen, _) = try Self.testScreen(xvfb, ["--size", "1280x720"], directory: directory)
            let (signal, port) = try startRoomServer(in: directory)
            let publish = try BackgroundProcess(
                try builtProgram("rtc-publish"),
                [
                    "--room", "123456", "--uid", "alice_sub", "--signal", "127.0.0.1:\(port)", "--no-preview",
                    "--ice-address", "127.0.0.1", "--video", "x11:\(xvfb.display)", "--audio", "test",
                    "--duration", "40", "--stats-json", "stats.jsonl",
                ],
                directory: directory
            )
            try publish.waitUntil(deadlineSeconds: 20, "joined the room") {
                publish.output.contains("signaling in room")
            }
            let browser = try ChromiumViewer(
                url: "http://127.0.0.1:\(port)/rooms/123456",
                options: .init(seconds: 10, warmup: 3, deadline: 90),
                directory: directory
            )
            #expect(browser.process.waitForExit(deadlineSeconds: 100), "\(browser.output)")
            let summary = try browser.summary()
            #expect(summary.ok, "\(summary.error ?? "")\n\(browser.output)\n\(publish.output)")
            let tab = try #require(summary.tabs.first)
            #expect(tab.width == 1280 && tab.height == 720, "\(tab.width)x\(tab.height)")
            // As expectPlayed, but a painted frame the 30 fps grab took twice may show twice (the
            // painter's and the grab's clocks beat; see expectTimecodes): never one backwards.
            let timeline = PublisherTimeline(statsFile: directory.path + "/stats.jsonl")
            #expect((tab.playbackQuality.fps ?? 0) >= 27, "\(tab.playbackQuality); \(timeline)")
            #expect(tab.frames.freezes == 0, "\(tab.frames)")
            #expect(tab.audio.arriving, "\(tab.audio)")
            #expect(Double(tab.timecodes.count) >= 0.8 * 30 * 10, "\(tab.timecodes); \(timeline)")
            #expect(tab.timecodes.backwards == 0, "\(tab.timecodes)")
            #expect(tab.glassToGlassMs.count > 0, "\(tab.glassToGlassMs)")
            publish.interrupt()
            signal.interrupt()
            screen.interrupt()
            print("x11 → chromium: \(PublishEndToEndTests.line(tab))")
        }
    }
}
