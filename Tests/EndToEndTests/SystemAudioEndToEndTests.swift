import Foundation
import Media
import TestSupport
import Testing

extension PublishEndToEndTests {
    /// `--audio system` end to end: a private PulseAudio daemon with two null sinks, a 440 Hz tone
    /// played into "app" (its monitor is the app audio) and a 1 kHz tone into "micsink" (its monitor
    /// stands in for the microphone), rtc-publish or rtc-capture taking both, and a stock ffmpeg
    /// decoding the Opus stream.
    /// Nested in PublishEndToEndTests, whose `.serialized` covers its nested suites: every real-time
    /// end-to-end stream runs alone, never beside another suite's.
    @Suite struct SystemAudioEndToEndTests {
        /// The daemon with both sinks and tones, the defaults pointing at them.
        static func soundServer() throws -> PulseServer {
            let pulse = try PulseServer()
            try Self.addSinksAndTones(pulse)
            return pulse
        }

        static func addSinksAndTones(_ pulse: PulseServer) throws {
            try pulse.addNullSink("app")
            try pulse.addNullSink("micsink")
            try pulse.playTone(sink: "app", hertz: 440)
            try pulse.playTone(sink: "micsink", hertz: 1000)
            try pulse.setDefaults(sink: "app", source: "micsink.monitor")
        }

        /// The level of `hertz` in the left channel of `pcm` (interleaved stereo) between two
        /// seconds of the decoded audio: a single DFT bin, 2|X|/N, about a sine's amplitude.
        static func level(_ pcm: [Int16], hertz: Double, from start: Double, to end: Double) -> Double {
            let first = max(0, Int(start * 48_000))
            let last = min(pcm.count / 2, Int(end * 48_000))
            guard last > first else { return 0 }
            let coefficient = 2 * cos(2 * Double.pi * hertz / 48_000)
            var (s1, s2) = (0.0, 0.0)
            for i in first..<last {
                let s0 = Double(pcm[2 * i]) / 32768 + coefficient * s1 - s2
                s2 = s1
                s1 = s0
            }
            let power = s1 * s1 + s2 * s2 - coefficient * s1 * s2
            return 2 * power.squareRoot() / Double(last - first)
        }

        /// Both tones reach the receiver; muting the microphone halfway leaves the app tone as loud as
        /// it was (the mixer sums, it never halves a source because the other is silent).
        @Test func bothSourcesArriveAndAMutedMicDoesNotHalveTheApp() throws {
            let directory = try TemporaryDirectory()
            let pulse = try Self.soundServer()
            let (publish, receiver, _) = try ScreenCaptureEndToEndTests.publishToPreview(
                ["--audio", "system"],
                seconds: 8,
                directory: directory,
                environment: ["PULSE_SERVER": pulse.server]
            )
            try publish.waitUntil(deadlineSeconds: 20, "streaming") { publish.output.contains("fps in") }
            Thread.sleep(forTimeInterval: 3.5)
            _ = try pulse.pactl(["set-sink-mute", "micsink", "1"])
            #expect(publish.waitForExit(deadlineSeconds: 30), "\(publish.everything)")
            #expect(publish.exitStatus == 0, "\(publish.everything)")
            #expect(try receiver.ffmpeg.waitForExit(deadlineSeconds: 20), "\(receiver.ffmpeg.standardError)")
            let got = try Received(base: receiver.base, width: ScreenCaptureEndToEndTests.width, height: 360)
            #expect(got.audioSeconds >= 4, "\(got)")
            let seconds = got.audioSeconds
            let early = (
                app: Self.level(got.pcm, hertz: 440, from: 0.5, to: 2.5),
                mic: Self.level(got.pcm, hertz: 1000, from: 0.5, to: 2.5)
            )
            let late = (
                app: Self.level(got.pcm, hertz: 440, from: seconds - 2, to: seconds - 0.2),
                mic: Self.level(got.pcm, hertz: 1000, from: seconds - 2, to: seconds - 0.2)
            )
            let nobody = Self.level(got.pcm, hertz: 1234, from: 0.5, to: seconds - 0.2)
            let levels = "early \(early), late \(late), 1234 Hz \(nobody)\n\(publish.output)"
            #expect(early.app > 0.1 && early.mic > 0.1, "both tones while both play: \(levels)")
            #expect(late.mic < 0.01, "the muted mic is gone: \(levels)")
            #expect(late.app > 0.8 * early.app, "the app tone is not halved or lowered: \(levels)")
            #expect(nobody < 0.01, "no tone nobody played: \(levels)")
            #expect(publish.output.contains("| sound app "), "\(publish.output)")
            print("system audio: \(levels.split(separator: "\n").first ?? "")")
        }

        /// The sound server killed mid-stream: the pictures never stop, the publisher says the sources
        /// went silent, and once the server is back the audio resumes.
        @Test func aRestartedSoundServerIsFollowed() throws {
            let directory = try TemporaryDirectory()
            let pulse = try Self.soundServer()
            let (publish, receiver, _) = try ScreenCaptureEndToEndTests.publishToPreview(
                ["--audio", "system", "--mic", "none"],
                seconds: 14,
                directory: directory,
                environment: ["PULSE_SERVER": pulse.server]
            )
            try publish.waitUntil(deadlineSeconds: 20, "streaming") { publish.output.contains("fps in") }
            Thread.sleep(forTimeInterval: 3)
            pulse.crash()
            try publish.waitUntil(deadlineSeconds: 5, "the source's loss said") { publish.output.contains("silent") }
            Thread.sleep(forTimeInterval: 1)
            try pulse.restart()
            try Self.addSinksAndTones(pulse)
            let back = Date()
            try publish.waitUntil(deadlineSeconds: 10, "capturing again") { publish.output.contains("capturing again") }
            let resumedAfter = Date().timeIntervalSince(back)
            #expect(publish.waitForExit(deadlineSeconds: 30), "\(publish.everything)")
            #expect(publish.exitStatus == 0, "\(publish.everything)")
            #expect(try receiver.ffmpeg.waitForExit(deadlineSeconds: 20), "\(receiver.ffmpeg.standardError)")
            let got = try Received(base: receiver.base, width: ScreenCaptureEndToEndTests.width, height: 360)
            // The pictures never stopped: no frame number missing (ffmpeg's first pictures, before its
            // first RTCP sender report, carry start-up gaps of their own, so timestamps would not do).
            #expect(got.timecodes.missing <= 3, "the pictures never stopped: \(got.timecodes)")
            #expect(got.timecodes.outOfOrder == 0, "\(got.timecodes)")
            let seconds = got.audioSeconds
            let last = Self.level(got.pcm, hertz: 440, from: seconds - 2, to: seconds - 0.2)
            #expect(last > 0.1, "the app tone is back: \(last)\n\(publish.output)")
            print("sound server restart: capturing again \(resumedAfter) s after the server was back; tone \(last)")
        }

        /// Start-up errors: no sound server, or a source that does not exist (the line lists those
        /// that do): status 2, one line. (--app-audio or --mic without --audio system:
        /// PublishCommandTests.BadArgumentTests.)
        @Test func startUpErrorsExitTwoWithOneLine() throws {
            let directory = try TemporaryDirectory()
            let pulse = try Self.soundServer()
            let cases: [([String], [String: String], String)] = [
                (["--audio", "system"], ["PULSE_SERVER": "unix:/nonexistent/native"], "unix:/nonexistent/native"),
                (["--audio", "system", "--app-audio", "nosuch"], ["PULSE_SERVER": pulse.server], "app.monitor"),
            ]
            for (arguments, environment, text) in cases {
                let run = try BackgroundProcess(
                    try builtProgram("rtc-publish"),
                    ["--room", "123456", "--uid", "alice_sub", "--no-signal"] + arguments,
                    directory: directory,
                    separateErrors: true,
                    environment: environment
                )
                #expect(run.waitForExit(deadlineSeconds: 15), "\(arguments)")
                #expect(run.exitStatus == 2, "\(arguments): \(run.everything)")
                let lines = run.errors.split(separator: "\n")
                #expect(lines.count == 1 && run.errors.contains(text), "\(arguments): \(run.everything)")
            }
        }

        /// rtc-capture's `--audio system` over the ingest socket: both tones reach the receiver.
        @Test func rtcCaptureCarriesTheSound() throws {
            let directory = try TemporaryDirectory()
            let pulse = try Self.soundServer()
            let xvfb = try XvfbServer(width: 1280, height: 720)
            let (screen, _) = try ScreenCaptureEndToEndTests.testScreen(
                xvfb,
                ["--size", "1280x720"],
                directory: directory
            )
            let socket = directory.path + "/ingest.sock"
            var started: BackgroundProcess?
            let (publish, receiver, _) = try ScreenCaptureEndToEndTests.publishToPreview(
                ["--ingest", "unix:\(socket)"],
                seconds: 8,
                directory: directory
            ) { publish in
                try publish.waitUntil(deadlineSeconds: 20, "listening") {
                    FileManager.default.fileExists(atPath: socket)
                }
                started = try BackgroundProcess(
                    try builtProgram("rtc-capture"),
                    ["--ingest", "unix:\(socket)", "--display", xvfb.display, "--audio", "system"],
                    directory: directory,
                    separateErrors: true,
                    environment: ["PULSE_SERVER": pulse.server]
                )
            }
            let capture = try #require(started)
            #expect(publish.waitForExit(deadlineSeconds: 30), "\(publish.everything)")
            #expect(try receiver.ffmpeg.waitForExit(deadlineSeconds: 20), "\(receiver.ffmpeg.standardError)")
            let got = try Received(
                base: receiver.base,
                width: ScreenCaptureEndToEndTests.width,
                height: 360,
                sourceWidth: 1280
            )
            let seconds = got.audioSeconds
            let app = Self.level(got.pcm, hertz: 440, from: 1, to: seconds - 0.2)
            let mic = Self.level(got.pcm, hertz: 1000, from: 1, to: seconds - 0.2)
            #expect(app > 0.1 && mic > 0.1, "app \(app), mic \(mic)\n\(capture.everything)\n\(publish.output)")
            #expect(got.timecodes.readable > 60, "\(got.timecodes)")
            capture.interrupt()
            screen.interrupt()
        }
    }
}
