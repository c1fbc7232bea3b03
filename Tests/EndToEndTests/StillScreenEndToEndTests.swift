import Foundation
import Media
import TestSupport
import Testing

extension PublishEndToEndTests {
    /// A still screen costs next to nothing (Docs/cadence.md): a private Xvfb shows a desktop (a
    /// flat background, an xterm full of text) and, in its top-left corner, `rtc-testscreen`'s
    /// first picture, still for 12 s before its timecodes start moving. `rtc-publish --video x11`
    /// shares it into a room and aiortc watches over WebRTC. Nested in PublishEndToEndTests,
    /// whose `.serialized` keeps it alone on the machine.
    @Suite struct StillScreenEndToEndTests {
        /// rtc-testscreen's frame 0 stays this long before frame 1.
        static let hold = 14.0
        /// The timecode window, at the screen's top-left corner.
        static let windowWidth = 320
        static let windowHeight = 180

        /// The timecode of a decoded 1280x720 picture, read from the window's corner of it.
        static func timecode(_ gray: [UInt8], at offset: Int) -> TimecodeStrip.Value? {
            gray.withUnsafeBufferPointer { all in
                TimecodeStrip.decode(
                    luma: UnsafeBufferPointer(rebasing: all[offset..<(offset + 1280 * 720)]),
                    width: windowWidth,
                    height: windowHeight,
                    stride: 1280
                )
            }
        }

        /// BT.601 video-range luma of packed BGRX, as libyuv's ARGBToI420 computes it.
        static func luma(bgrx: [UInt8], width: Int, height: Int) -> [UInt8] {
            var luma = [UInt8](repeating: 0, count: width * height)
            for index in 0..<(width * height) {
                let b = Int(bgrx[4 * index])
                let g = Int(bgrx[4 * index + 1])
                let r = Int(bgrx[4 * index + 2])
                luma[index] = UInt8((66 * r + 129 * g + 25 * b + 0x1080) >> 8)
            }
            return luma
        }

        /// Luma PSNR of `a` against `b` (same size), in dB; 99 for identical pictures.
        static func psnr(_ a: ArraySlice<UInt8>, _ b: [UInt8]) -> Double {
            var squares = 0.0
            for (x, y) in zip(a, b) {
                let d = Double(Int(x) - Int(y))
                squares += d * d
            }
            guard squares > 0 else { return 99 }
            return 10 * log10(255 * 255 / (squares / Double(b.count)))
        }

        /// One run: the codec aiortc asks for in its offer, the content hint, and how sharp the
        /// converged picture must be.
        struct Case: Sendable, CustomTestStringConvertible {
            var codec: String
            /// `--content-hint`; nil: a captured screen's default, `detail`.
            var hint: String?
            /// The converged still picture's luma PSNR at least. Measured here: H.264 at
            /// `detail`'s converged QP 24 44.9–45.0 dB, at `text`'s QP 12 50.7 dB; VP8 at
            /// `detail`'s quantizer 24 42.9 dB (at `text`'s 8, 49.0–49.7 dB).
            var minimumPSNR: Double
            var testDescription: String { codec + (hint.map { " --content-hint \($0)" } ?? "") }
        }

        /// With H.264 (the main encoder; the default hint and `text`) and with VP8 (a codec
        /// group's encoder, its own cadence: Docs/codecs.md).
        @Test(arguments: [
            Case(codec: "h264", minimumPSNR: 42), Case(codec: "h264", hint: "text", minimumPSNR: 48),
            Case(codec: "vp8", minimumPSNR: 40),
        ])
        func aStillScreenGoesQuietAfterConvergingAndAChangeLeavesAtOnce(_ run: Case) throws {
            let codec = run.codec
            let directory = try TemporaryDirectory()
            let xvfb = try XvfbServer(width: 1280, height: 720)
            let (background, _) = try ScreenCaptureEndToEndTests.testScreen(
                xvfb,
                ["--size", "1280x720", "--solid", "2A4D7A", "--title", "background"],
                directory: directory
            )
            let terminal = try BackgroundProcess(
                "/usr/bin/xterm",
                [
                    "-geometry", "90x34+560+150", "-e",
                    "ls -la /usr/bin | head -32; printf 'still screen, sharp text'; sleep 120",
                ],
                directory: directory,
                environment: ["DISPLAY": xvfb.display]
            )
            let (screen, _) = try ScreenCaptureEndToEndTests.testScreen(
                xvfb,
                ["--size", "\(Self.windowWidth)x\(Self.windowHeight)", "--hold", "\(Self.hold)"],
                directory: directory
            )
            let screenStart = Date()
            let (signal, port) = try startRoomServer(in: directory)
            let publish = try BackgroundProcess(
                try builtProgram("rtc-publish"),
                [
                    "--room", "123456", "--uid", "alice_sub", "--signal", "127.0.0.1:\(port)", "--no-preview",
                    "--ice-address", "127.0.0.1", "--video", "x11:\(xvfb.display)", "--cursor", "off",
                    "--audio", "none", "--size", "1280x720", "--duration", "22", "--stats-json", "stats.jsonl",
                ] + (run.hint.map { ["--content-hint", $0] } ?? []),
                directory: directory
            )
            try publish.waitUntil(deadlineSeconds: 20, "joined the room") {
                publish.output.contains("signaling in room")
            }
            let viewer = try viewerOfAlice(
                port: port,
                options: .init(seconds: 15, deadline: 60, videoCodec: codec),
                directory: directory
            )
            // The screen as the X server has it, while it is still: the reference the decoded
            // picture is measured against.
            Thread.sleep(forTimeInterval: max(0, 7 - Date().timeIntervalSince(screenStart)))
            let grab = directory.path + "/screen.bgr0"
            let grabbing = try FFmpegRun(
                arguments: [
                    "-loglevel", "error", "-f", "x11grab", "-draw_mouse", "0",
                    "-video_size", "1280x720", "-i", xvfb.display, "-frames:v", "1",
                    "-f", "rawvideo", "-pix_fmt", "bgr0", "-y", grab,
                ],
                directory: directory
            )
            #expect(
                try grabbing.waitForExit(deadlineSeconds: 20) && grabbing.exitStatus == 0,
                "\(grabbing.standardError)"
            )
            let reference = Self.luma(
                bgrx: [UInt8](try Data(contentsOf: URL(fileURLWithPath: grab))),
                width: 1280,
                height: 720
            )
            #expect(viewer.waitForExit(deadlineSeconds: 70), "\(viewer.output)")
            #expect(viewer.exitStatus == 0, "\(viewer.output)\n\(publish.output)")
            #expect(publish.waitForExit(deadlineSeconds: 30) && publish.exitStatus == 0, "\(publish.output)")
            signal.interrupt()
            screen.interrupt()
            terminal.interrupt()
            background.interrupt()
            let got = try viewer.received()
            let frames = got.summary.video.frameTimes
            let gray = [UInt8](try Data(contentsOf: URL(fileURLWithPath: viewer.outputDirectory + "/video.gray")))
            #expect(frames.allSatisfy { $0.width == 1280 && $0.height == 720 }, "\(got)")
            let offsets = frames.indices.map { $0 * 1280 * 720 }
            let values = offsets.map { $0 + 1280 * 720 <= gray.count ? Self.timecode(gray, at: $0) : nil }

            // Still phase: the pictures showing frame 0. The last idle repeat before the change
            // is the converged screen, as sharp as the hint converges. Not the very last picture showing frame 0:
            // the grab that sees the change may catch the test screen half drawn, its timecode
            // corner still frame 0 and the rest new (34 dB in one run under load).
            let still = values.enumerated().filter { $0.element?.frame == 0 }.map(\.offset)
            let lastStill = try #require(still.dropLast().last, "no picture of the still screen decoded: \(got)")
            let offset = offsets[lastStill]
            let quality = Self.psnr(gray[offset..<(offset + 1280 * 720)], reference)
            #expect(quality >= run.minimumPSNR, "luma PSNR \(quality) dB of the converged still picture")

            // The publisher's encoder went quiet: from 7 s into the run (the viewer joined at
            // about 3 s) until the change, about one picture a second (the idle repeat), against
            // 30 while refreshing.
            let records = try String(contentsOfFile: directory.path + "/stats.jsonl", encoding: .utf8)
                .split(separator: "\n")
                .compactMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            let stillRecords = records.filter {
                guard let time = $0["time"] as? Double else { return false }
                return time >= 7 && time <= Self.hold - 3
            }
            // H.264's figures are the record's own; VP8's are its group encoder's (`encoders`).
            func encoder(_ record: [String: Any]) -> [String: Any]? {
                ((record["totals"] as? [String: Any])?["encoders"] as? [[String: Any]])?.first
            }
            let rates: [Double]
            let cadences: [String]
            if codec == "h264" {
                rates = stillRecords.compactMap { $0["fpsOut"] as? Double }
                cadences = stillRecords.compactMap { ($0["totals"] as? [String: Any])?["cadence"] as? String }
                #expect(publish.output.contains("out 1.0 (still qp 51) |"), "the status line shows the cadence")
            } else {
                let counts = stillRecords.compactMap { record -> (Double, Int)? in
                    guard let time = record["time"] as? Double, let frames = encoder(record)?["frames"] as? Int else {
                        return nil
                    }
                    return (time, frames)
                }
                rates = zip(counts, counts.dropFirst()).map { Double($1.1 - $0.1) / max(0.001, $1.0 - $0.0) }
                cadences = stillRecords.compactMap { encoder($0)?["cadence"] as? String }
                #expect(publish.output.contains("fps (still)"), "the status line shows VP8's cadence")
            }
            #expect(rates.count >= 3, "\(records.count) stats records")
            #expect(rates.allSatisfy { $0 <= 2.1 }, "encoded pictures per second while still: \(rates)")
            #expect(cadences.count >= 3 && cadences.allSatisfy { $0 == "still" }, "\(cadences)")
            // No key-frame request storm from the viewer: the one it joined with, at most one more.
            let totals = records.last?["totals"] as? [String: Any] ?? [:]
            let requests = (totals["keyFrameRequests"] as? [String: Any])?["requests"] as? Int ?? -1
            #expect(requests <= 2, "key-frame requests: \(totals["keyFrameRequests"] ?? "none")")
            #expect(got.summary.pli.filter(\.sent).count <= 1, "\(got.summary.pli)")
            // aiortc kept decoding the repeats: no gap near its 3 s key-frame timer.
            let stillArrivals = still.map { frames[$0].arrival }
            let longestStillGap = zip(stillArrivals, stillArrivals.dropFirst()).map { $1 - $0 }.max() ?? 0
            #expect(longestStillGap <= 1.6, "longest gap between still pictures: \(longestStillGap) s")

            // The change: every moving picture arrives, in order, and the first of them as soon
            // after it was painted as the ones that follow (same-host clocks: the timecode holds
            // the paint time on CLOCK_MONOTONIC, the peer its arrival on the same clock).
            let moving = values.enumerated().compactMap { index, value -> (Int, TimecodeStrip.Value)? in
                guard let value, value.frame > 0 else { return nil }
                return (index, value)
            }
            #expect(moving.count >= 60, "moving pictures decoded: \(moving.count); \(got)")
            // In order, never back (the still phase repeats frame 0 by design). A grab that caught
            // the painter mid-paint shows the previous timecode with other parts already changed:
            // a real picture of the screen, coded as one (2 in 90 under load once); at most 3.
            let order = moving.map(\.1.frame)
            #expect(zip(order, order.dropFirst()).allSatisfy { $0 <= $1 }, "moving timecodes out of order: \(order)")
            let repeats = zip(order, order.dropFirst()).filter { $0 == $1 }.count
            #expect(repeats <= 3, "moving timecodes repeated \(repeats) times: \(order)")
            let start = try #require(got.summary.monotonicStart, "the peer gave no monotonicStart")
            let delays = moving.map { index, value -> Double in
                let arrivalMs = UInt64((start + frames[index].arrival) * 1000) & 0xFFFF_FFFF
                return Double(Int32(bitPattern: UInt32(arrivalMs) &- value.timeMs))
            }
            let typical = delays.dropFirst().sorted()[delays.count / 2]
            #expect(
                moving.first?.1.frame ?? 99 <= 2,
                "the first moving picture decoded: \(moving.first.map { "\($0.1)" } ?? "none")"
            )
            #expect(
                (delays.first ?? .infinity) <= typical + 100,
                "screen-to-viewer delay of the change \(delays.first ?? -1) ms, typical \(typical) ms"
            )
            print(
                "still screen (\(run.testDescription)): PSNR \(quality) dB; encoded fps while still \(rates); still pictures \(still.count), "
                    + "longest gap \(longestStillGap) s; change delay \(delays.first ?? -1) ms, typical \(typical) ms; "
                    + "key-frame requests \(requests); \(got)"
            )
        }
    }
}
