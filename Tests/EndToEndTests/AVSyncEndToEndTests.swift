import Foundation
import TestSupport
import Testing

extension PublishEndToEndTests {
    /// Lip sync end to end: `rtc-testscreen --av-marker-every` flashes its Xvfb window white at the
    /// instant it plays a click into a private PulseAudio's null sink "app" (the default sink);
    /// `rtc-publish --video x11 --audio system --mic none` captures both; a stock ffmpeg takes the
    /// SDP and copies both streams into one NUT file, whose timestamps are ffmpeg's RTCP-aligned
    /// ones (one timeline for both). Each decoded flash's first picture and each decoded click's
    /// first loud sample are paired, and offset = click − flash must stay inside ±45 ms (p95): the
    /// tighter, "audio early" side of ITU-R BT.1359's detectability bounds (+45/−125 ms).
    ///
    /// The period (1.37 s, 41.1 frame periods) is not a whole number of frames, so the flashes land
    /// at every phase of the 30 fps capture: a flash's capture lags its paint by 0…33 ms, and that
    /// is measured, not averaged away.
    /// Nested in PublishEndToEndTests, whose `.serialized` covers its nested suites: every real-time
    /// end-to-end stream runs alone, never beside another suite's.
    @Suite struct AVSyncEndToEndTests {
        static let width = 640
        static let height = 360
        static let markerSeconds = 1.37
        static let publishSeconds = 16
        /// ffmpeg's RTP demuxer aligns the streams at the first RTCP sender report; before it the
        /// streams carry start-up offsets of their own.
        static let settleSeconds = 2.0

        @Test func aFlashAndItsClickArriveTogether() throws {
            let directory = try TemporaryDirectory()
            let pulse = try PulseServer()
            try pulse.addNullSink("app")
            try pulse.setDefaults(sink: "app", source: nil)
            let xvfb = try XvfbServer(width: Self.width, height: Self.height)
            let screen = try BackgroundProcess(
                try builtProgram("rtc-testscreen"),
                [
                    "--display", xvfb.display, "--size", "\(Self.width)x\(Self.height)", "--av-marker-every",
                    "\(Self.markerSeconds)", "--pulse-sink", "app", "--stats", "--duration",
                    "\(Self.publishSeconds + 10)",
                ],
                directory: directory,
                separateErrors: true,
                environment: ["PULSE_SERVER": pulse.server]
            )
            try screen.waitUntil(deadlineSeconds: 10, "window mapped") { screen.output.contains("window 0x") }

            let ports = try LoopbackUDPSocket.freePortPairs(2)
            let publish = try BackgroundProcess(
                try builtProgram("rtc-publish"),
                [
                    "--room", "123456", "--uid", "alice_sub", "--no-signal", "--size", "\(Self.width)x\(Self.height)",
                    "--preview", "127.0.0.1:\(ports[0])", "--duration", "\(Self.publishSeconds)", "--start-delay", "2",
                    "--video", "x11:\(xvfb.display)", "--audio", "system", "--mic", "none",
                ],
                directory: directory,
                separateErrors: true,
                environment: ["PULSE_SERVER": pulse.server]
            )
            let sdp = directory.path + "/alice_sub.sdp"
            try publish.waitUntil(deadlineSeconds: 20, "alice_sub.sdp written") {
                FileManager.default.fileExists(atPath: sdp)
            }
            let recording = directory.path + "/received.nut"
            let ffmpeg = try FFmpegRun(
                arguments: [
                    "-v", "warning", "-protocol_whitelist", "file,udp,rtp", "-i", sdp, "-map", "0", "-c", "copy",
                    "-f", "nut", recording,
                ],
                directory: directory
            )
            let listening = Date().addingTimeInterval(20)
            while !udpPortIsBound(Int(ports[0])), Date() < listening { usleep(10_000) }
            #expect(publish.waitForExit(deadlineSeconds: Double(Self.publishSeconds) + 20), "\(publish.everything)")
            #expect(publish.exitStatus == 0, "\(publish.everything)")
            #expect(try ffmpeg.waitForExit(deadlineSeconds: 20), "BYE ends ffmpeg\n\(ffmpeg.standardError)")
            screen.interrupt()

            let flashes = try Self.flashOnsets(recording, directory: directory)
            let clicks = try Self.clickOnsets(recording, directory: directory)
            var offsets: [Double] = []
            for flash in flashes where flash >= Self.settleSeconds {
                let nearest = clicks.min { abs($0 - flash) < abs($1 - flash) }
                if let nearest, abs(nearest - flash) < Self.markerSeconds / 2 {
                    offsets.append((nearest - flash) * 1000)
                }
            }
            let client = Self.clientSkew(screen.errors)
            let context = """
                flashes \(flashes.map(Self.milliseconds))
                clicks \(clicks.map(Self.milliseconds))
                offsets (ms) \(offsets.map(Self.milliseconds))
                client: \(client)
                \(publish.everything)
                """
            try #require(
                offsets.count >= 8,
                "at least 8 markers paired after the first \(Self.settleSeconds) s\n\(context)"
            )
            let magnitudes = offsets.map(abs).sorted()
            let sorted = offsets.sorted()
            let p95 = Self.percentile(magnitudes, 0.95)
            let line =
                "A/V sync (click − flash) over \(offsets.count) markers: p50 \(Self.milliseconds(Self.percentile(sorted, 0.5))) ms, "
                + "|offset| p50 \(Self.milliseconds(Self.percentile(magnitudes, 0.5))) ms, p95 \(Self.milliseconds(p95)) ms, "
                + "min \(Self.milliseconds(sorted.first ?? 0)) ms, max \(Self.milliseconds(sorted.last ?? 0)) ms"
            print(line)
            print(client)
            // A client line 5 ms or more off its due time, said in full (start-up, a loaded machine).
            for line in screen.errors.split(separator: "\n") {
                let kind = ["flash shown ", "click scheduled ", "click in monitor "].first { line.contains($0) }
                let value = kind.flatMap { line.range(of: $0) }.flatMap {
                    line[$0.upperBound...].split(separator: " ").first
                }
                if let value = value.flatMap({ Double($0) }), abs(value) >= 5 { print(line) }
            }
            #expect(p95 <= 45, "\(line)\n\(context)")
        }

        /// The client's own skew from its --stats lines ("marker K due T ns: flash shown +1.10 ms",
        /// "… click scheduled -0.01 ms …", "… click in monitor -0.12 ms …"): median and extremes of each.
        static func clientSkew(_ errors: String) -> String {
            let kinds = ["flash shown", "click scheduled", "click in monitor"]
            let parts = kinds.map { kind -> String in
                let values = errors.split(separator: "\n").compactMap { line -> Double? in
                    guard let range = line.range(of: kind + " ") else { return nil }
                    return line[range.upperBound...].split(separator: " ").first.flatMap { Double($0) }
                }
                .sorted()
                guard let low = values.first, let high = values.last else { return "\(kind): none" }
                return
                    "\(kind) \(milliseconds(values[values.count / 2])) ms (\(milliseconds(low))…\(milliseconds(high)))"
            }
            return "client skew against the due time over its markers: " + parts.joined(separator: ", ")
        }

        /// The nearest-rank percentile of sorted values.
        static func percentile(_ sorted: [Double], _ share: Double) -> Double {
            guard !sorted.isEmpty else { return 0 }
            let rank = Int((share * Double(sorted.count)).rounded(.up))
            return sorted[min(sorted.count, max(1, rank)) - 1]
        }

        static func milliseconds(_ value: Double) -> String { String(format: "%.1f", value) }

        /// Presentation times (s) of the first picture of each flash: mean luma crossing mid-gray
        /// upwards (dark is 16, the flash 235).
        static func flashOnsets(_ recording: String, directory: TemporaryDirectory) throws -> [Double] {
            let csv = try Self.tool(
                directory,
                "ffprobe",
                [
                    "-v", "error", "-f", "lavfi", "-i", "movie=\(recording),scale=64:36,signalstats", "-show_entries",
                    "frame=pts_time:frame_tags=lavfi.signalstats.YAVG", "-of", "csv=p=0",
                ]
            )
            var onsets: [Double] = []
            var lit = false
            for line in csv.split(separator: "\n") {
                let fields = line.split(separator: ",")
                guard fields.count == 2, let time = Double(fields[0]), let luma = Double(fields[1]) else { continue }
                if luma > 128, !lit { onsets.append(time) }
                lit = luma > 128
            }
            return onsets
        }

        /// Times (s) of each click's first sample above 0.3 of full scale after 50 ms below it:
        /// the decoded samples in order, each decoded frame placed at its own presentation time.
        static func clickOnsets(_ recording: String, directory: TemporaryDirectory) throws -> [Double] {
            let frames = try Self.tool(
                directory,
                "ffprobe",
                [
                    "-v", "error", "-select_streams", "a", "-show_entries", "frame=pts_time,nb_samples", "-of",
                    "csv=p=0",
                    recording,
                ]
            )
            let pcmPath = directory.path + "/received.pcm"
            _ = try Self.tool(
                directory,
                "ffmpeg",
                [
                    "-v", "error", "-nostdin", "-i", recording, "-map", "0:a", "-ac", "1", "-ar", "48000", "-f",
                    "s16le",
                    "-y", pcmPath,
                ]
            )
            let bytes = try Data(contentsOf: URL(fileURLWithPath: pcmPath))
            let samples = bytes.withUnsafeBytes { raw in
                (0..<(bytes.count / 2)).map {
                    Int16(littleEndian: raw.loadUnaligned(fromByteOffset: 2 * $0, as: Int16.self))
                }
            }
            var onsets: [Double] = []
            var index = 0
            var quiet = 0
            for line in frames.split(separator: "\n") {
                let fields = line.split(separator: ",")
                guard fields.count == 2, let start = Double(fields[0]), let count = Int(fields[1]) else { continue }
                for i in 0..<count where index + i < samples.count {
                    guard abs(Int(samples[index + i])) > 32768 * 3 / 10 else {
                        quiet += 1
                        continue
                    }
                    if quiet > 2400 { onsets.append(start + Double(i) / 48_000) }
                    quiet = 0
                }
                index += count
            }
            return onsets
        }

        /// Runs /usr/bin/`name` (ffmpeg, ffprobe) and returns its stdout; throws with its stderr on a
        /// non-zero exit or after 60 s.
        static func tool(_ directory: TemporaryDirectory, _ name: String, _ arguments: [String]) throws -> String {
            let run = try BackgroundProcess("/usr/bin/" + name, arguments, directory: directory, separateErrors: true)
            guard run.waitForExit(deadlineSeconds: 60), run.exitStatus == 0 else {
                throw InteropFailure("\(name) \(arguments.joined(separator: " ")) failed: \(run.errors)")
            }
            return run.output
        }
    }
}
