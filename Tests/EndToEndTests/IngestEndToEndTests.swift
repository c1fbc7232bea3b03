import Foundation
import Media
import TestSupport
import Testing

/// The ingest path as users run it: `rtc-capture-sim` plays the phone's broadcast extension
/// (886x1920 full-range NV12 at 30 fps, app audio 44.1 kHz stereo, mic 32 kHz mono) into
/// `rtc-publish --ingest`, and a stock ffmpeg plays the SDP file rtc-publish writes.
///
/// In the same serialized suite as the other end-to-end tests: each is a real-time stream.
extension PublishEndToEndTests {
    /// 886x1920 fitted into the 720x1280 portrait box, aspect kept, even.
    static let phoneWidth = 590
    static let phoneHeight = 1280

    /// rtc-publish listening on a Unix socket in `directory`, preview to `port`.
    static func ingestPublisher(
        _ directory: TemporaryDirectory,
        port: Int,
        seconds: Int,
        extra: [String] = []
    ) throws -> BackgroundProcess {
        try BackgroundProcess(
            try builtProgram("rtc-publish"),
            [
                "--room", "123456", "--uid", "alice_sub", "--no-signal", "--ingest", "unix:\(directory.path)/in.sock",
                "--preview", "127.0.0.1:\(port)", "--duration", "\(seconds)", "--keyint", "30",
                "--stats-json", "stats.jsonl",
            ] + extra,
            directory: directory
        )
    }

    static func captureSimulator(
        _ directory: TemporaryDirectory,
        _ arguments: [String],
        name: String = "rtc-capture-sim"
    ) throws -> BackgroundProcess {
        try BackgroundProcess(
            try builtProgram("rtc-capture-sim"),
            ["--ingest", "unix:\(directory.path)/in.sock"] + arguments,
            directory: directory,
            name: name
        )
    }

    static func waitForSocket(_ publish: BackgroundProcess, _ directory: TemporaryDirectory) throws {
        try publish.waitUntil(deadlineSeconds: 20, "listening for a capture process") {
            publish.output.contains("waiting for a capture process")
        }
    }

    /// The stream's SDP appears with the first captured picture; a player opened then decodes
    /// from the first IDR (`--start-delay` holds the first packet back for it).
    /// Returns once the player listens on `port` (its video port), so what follows is received.
    static func receiverOnceDescribed(
        _ publish: BackgroundProcess,
        _ directory: TemporaryDirectory,
        name: String,
        port: Int
    ) throws -> Receiver {
        let sdp = directory.path + "/alice_sub.sdp"
        try publish.waitUntil(deadlineSeconds: 20, "alice_sub.sdp written") {
            FileManager.default.fileExists(atPath: sdp)
        }
        let receiver = try Receiver(sdp: sdp, width: phoneWidth, height: phoneHeight, directory: directory, name: name)
        try publish.waitUntil(deadlineSeconds: 20, "the player listens on UDP \(port)") { udpPortIsBound(port) }
        return receiver
    }

    static func totals(_ directory: TemporaryDirectory) throws -> PublisherTotals {
        try PublisherTotals(statsFile: directory.path + "/stats.jsonl")
    }

    /// Pictures the simulator numbered but never sent (paused, disconnected, or skipped), from
    /// its closing line "sent N frames (S skipped) …" and the last frame number it reached.
    static func notSentBySimulator(_ capture: BackgroundProcess, lastFrame: UInt32?) -> Int {
        let words = capture.output.split(separator: " ")
        guard let index = words.firstIndex(of: "sent"), index + 1 < words.count, let sent = Int(words[index + 1]),
            let lastFrame
        else { return 0 }
        return max(0, Int(lastFrame) + 1 - sent)
    }

    /// ``expectIntact`` for a stream fed by `capture`: the publisher's totals, and the frames the
    /// simulator numbered but never sent (paused, disconnected, skipped) counted as not sent.
    static func expectIntactCapture(
        _ got: Received,
        _ directory: TemporaryDirectory,
        capture: BackgroundProcess,
        firstFrameBefore: UInt32,
        lastFrameAfter: UInt32,
        receiverStartedLate: Bool = false,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> PublisherTotals {
        let totals = try Self.totals(directory)
        expectIntact(
            got,
            totals,
            firstFrameBefore: firstFrameBefore,
            lastFrameAfter: lastFrameAfter,
            notSentBySource: Self.notSentBySimulator(capture, lastFrame: got.timecodes.lastFrame),
            receiverStartedLate: receiverStartedLate,
            sourceLocation: sourceLocation
        )
        return totals
    }

    /// The last line of `--stats-json`: totals, per-frame timings, peak memory.
    static func finalStatistics(_ directory: TemporaryDirectory) throws -> [String: Any] {
        let text = try String(contentsOfFile: directory.path + "/stats.jsonl", encoding: .utf8)
        let last = try #require(text.split(separator: "\n").last)
        return try #require(try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any])
    }

    /// A phone held sideways: the buffer travels as 1920x886 tagged "rotate 90"; the receiver
    /// gets the upright 590x1280 picture (its timecode strip reads back, which only an upright,
    /// unmirrored picture allows), at 30 fps, with both audio sources in the mix.
    @Test func capturedPhoneScreenPlaysUprightAtThirtyFramesPerSecondWithBothAudioSources() throws {
        let directory = try TemporaryDirectory()
        let ports = try LoopbackUDPSocket.freePortPairs(2)
        let publish = try Self.ingestPublisher(
            directory,
            port: Int(ports[0]),
            seconds: 9,
            extra: ["--start-delay", "1.5"]
        )
        try Self.waitForSocket(publish, directory)
        let capture = try Self.captureSimulator(directory, ["--duration", "7", "--rotation", "90"])
        let receiver = try Self.receiverOnceDescribed(publish, directory, name: "phone", port: Int(ports[0]))
        #expect(capture.waitForExit(deadlineSeconds: 30) && capture.exitStatus == 0, "\(capture.output)")
        #expect(publish.waitForExit(deadlineSeconds: 30) && publish.exitStatus == 0, "\(publish.output)")
        _ = try receiver.ffmpeg.waitForExit(deadlineSeconds: 20)
        let got = try Received(base: receiver.base, width: Self.phoneWidth, height: Self.phoneHeight, sourceWidth: 886)
        // 7 s of capture (frames 0…209), sent from 1.5 s on: what a busy machine cannot change.
        let totals = try Self.expectIntactCapture(
            got,
            directory,
            capture: capture,
            firstFrameBefore: 60,
            lastFrameAfter: 194
        )
        // The mixer emits a frame per 20 ms of the capture timeline, late input or not.
        #expect(got.audioSeconds >= 4.5, "\(got); \(totals)")
        // The app's 440 Hz (left) and 660 Hz (right) and the mic's 300 Hz (both) survived
        // resampling to 48 kHz and mixing; 1234 Hz, which nobody sent, did not appear.
        let levels = (
            app: got.toneLevel(hertz: 440, channel: 0), appRight: got.toneLevel(hertz: 660, channel: 1),
            mic: got.toneLevel(hertz: 300, channel: 0), none: got.toneLevel(hertz: 1234, channel: 0)
        )
        // Presence, a hundred times the level of the tone nobody sent: on a busy machine the
        // capture process sends late and the mixer drops what comes behind its output (counted
        // in the totals), which lowers a tone's average level but cannot remove it.
        #expect(levels.app > 0.01 && levels.appRight > 0.01 && levels.mic > 0.01, "\(levels); \(totals)")
        #expect(levels.none < 0.001, "\(levels)")
        #expect(publish.output.contains("886x1920 capture → 590x1280"), "\(publish.output)")
        print("ingest upright: \(got); tones \(levels); \(totals); clock error \(got.worstClockError) s")
    }

    /// Seed 001's stamps (+1 s per frame on a 1000 timescale) sent over the socket still play
    /// at about 30 fps: the clock rules replace them.
    @Test func bogusTimestampsFromTheCaptureProcessStillPlayAtThirtyFramesPerSecond() throws {
        let directory = try TemporaryDirectory()
        let ports = try LoopbackUDPSocket.freePortPairs(2)
        let publish = try Self.ingestPublisher(
            directory,
            port: Int(ports[0]),
            seconds: 8,
            extra: ["--start-delay", "1.5"]
        )
        try Self.waitForSocket(publish, directory)
        let capture = try Self.captureSimulator(directory, ["--duration", "6", "--bogus-timestamps", "--audio", "app"])
        let receiver = try Self.receiverOnceDescribed(publish, directory, name: "bogus", port: Int(ports[0]))
        #expect(capture.waitForExit(deadlineSeconds: 30) && capture.exitStatus == 0, "\(capture.output)")
        #expect(publish.waitForExit(deadlineSeconds: 30) && publish.exitStatus == 0, "\(publish.output)")
        _ = try receiver.ffmpeg.waitForExit(deadlineSeconds: 20)
        let got = try Received(base: receiver.base, width: Self.phoneWidth, height: Self.phoneHeight, sourceWidth: 886)
        // Stamped a second apart: the clock rules put arrival time in their place, so steps
        // follow the capture time within the arrival jitter, not to the millisecond.
        let totals = try Self.expectIntactCapture(
            got,
            directory,
            capture: capture,
            firstFrameBefore: 60,
            lastFrameAfter: 164
        )
        // Such stamps never earn trust: every picture sent had its stamp replaced (all but the
        // few the rules may still call acquiring). On a busy machine fewer pictures get through,
        // and fewer are repaired; the two move together.
        #expect(totals.timestampsRepaired >= totals.framesOut - 10, "\(totals)")
        print("ingest bogus timestamps: \(got); \(totals); clock error \(got.worstClockError) s")
    }

    /// A capture client that sends garbage is ended with its reason; the next one, which drops
    /// its connection mid-stream and reconnects, continues the same stream: the receiver, never
    /// restarted, decodes on after a short gap, in order.
    @Test func brokenAndReconnectingCaptureClientsContinueOneStream() throws {
        let directory = try TemporaryDirectory()
        let ports = try LoopbackUDPSocket.freePortPairs(2)
        let publish = try Self.ingestPublisher(directory, port: Int(ports[0]), seconds: 12)
        try Self.waitForSocket(publish, directory)
        let broken = try Self.captureSimulator(directory, ["--duration", "5", "--garbage"], name: "broken")
        #expect(broken.waitForExit(deadlineSeconds: 20), "\(broken.output)")
        #expect(broken.output.contains("malformed-message"), "\(broken.output)")
        let receiver = try Self.receiverOnceDescribed(publish, directory, name: "reconnect", port: Int(ports[0]))
        let capture = try Self.captureSimulator(
            directory,
            ["--duration", "8", "--disconnect-at", "4", "--reconnect-delay", "0.5"]
        )
        #expect(capture.waitForExit(deadlineSeconds: 30) && capture.exitStatus == 0, "\(capture.output)")
        #expect(publish.waitForExit(deadlineSeconds: 30) && publish.exitStatus == 0, "\(publish.output)")
        _ = try receiver.ffmpeg.waitForExit(deadlineSeconds: 20)
        let got = try Received(base: receiver.base, width: Self.phoneWidth, height: Self.phoneHeight, sourceWidth: 886)
        #expect(publish.output.contains("malformed-message"), "the host names the reason:\n\(publish.output)")
        #expect(publish.output.contains("(session 3)"), "garbage, first and second connection:\n\(publish.output)")
        // Decoding went on after the reconnect: pictures from both sides of a gap of about the
        // reconnect delay, in order, in one ffmpeg run.
        // Frames 0…239; the half second between the two connections was never sent.
        // The player listened before the good client began; only the broken client's one picture
        // went out before it did.
        let totals = try Self.expectIntactCapture(
            got,
            directory,
            capture: capture,
            firstFrameBefore: 45,
            lastFrameAfter: 224
        )
        #expect(got.largestGap > 0.3 && got.largestGap < 2.5, "gap \(got.largestGap) s: \(got)")
        print(
            "ingest reconnect: \(got); largest gap \(got.largestGap) s; \(totals); clock error \(got.worstClockError) s"
        )
    }

    /// Pause and resume: nothing is sent while paused, the gap shows as a gap of real time, and
    /// no burst follows (no two pictures closer than a frame's spacing allows).
    @Test func pauseShowsAsAGapWithoutABurstAfterwards() throws {
        let directory = try TemporaryDirectory()
        let ports = try LoopbackUDPSocket.freePortPairs(2)
        let publish = try Self.ingestPublisher(
            directory,
            port: Int(ports[0]),
            seconds: 10,
            extra: ["--start-delay", "1"]
        )
        try Self.waitForSocket(publish, directory)
        let capture = try Self.captureSimulator(directory, ["--duration", "8", "--pause-at", "3", "--resume-at", "5"])
        let receiver = try Self.receiverOnceDescribed(publish, directory, name: "pause", port: Int(ports[0]))
        #expect(capture.waitForExit(deadlineSeconds: 30) && capture.exitStatus == 0, "\(capture.output)")
        #expect(publish.waitForExit(deadlineSeconds: 30) && publish.exitStatus == 0, "\(publish.output)")
        _ = try receiver.ffmpeg.waitForExit(deadlineSeconds: 20)
        let got = try Received(base: receiver.base, width: Self.phoneWidth, height: Self.phoneHeight, sourceWidth: 886)
        #expect(abs(got.largestGap - 2) < 0.3, "the pause lasted 2 s: gap \(got.largestGap) s, \(got)")
        // Frames 0…239, those of the 2 s pause never sent.
        let totals = try Self.expectIntactCapture(
            got,
            directory,
            capture: capture,
            firstFrameBefore: 45,
            lastFrameAfter: 224
        )
        // No burst after the resume: pictures keep their capture spacing. A step under 20 ms
        // can only come from a late picture whose stamp the clock rules replaced with its
        // arrival (a busy machine), and each of those is counted.
        let short = got.stepsShorter(than: 0.02)
        #expect(short <= totals.timestampsRepaired, "\(short) steps under 20 ms: \(got); \(totals)")
        #expect(publish.output.contains("capture paused") && publish.output.contains("capture resumed"))
        print(
            "ingest pause: \(got); gap \(got.largestGap) s, smallest step \(got.smallestStep) s; \(totals); clock error \(got.worstClockError) s"
        )
    }

    /// A capture side flooding frames as fast as the socket takes them: the host keeps the
    /// stream at 30 fps, drops the rest (counted), and its memory stays bounded.
    @Test func aFloodingCaptureClientIsDroppedNotQueued() throws {
        let directory = try TemporaryDirectory()
        let ports = try LoopbackUDPSocket.freePortPairs(2)
        let publish = try Self.ingestPublisher(directory, port: Int(ports[0]), seconds: 9)
        try Self.waitForSocket(publish, directory)
        let capture = try Self.captureSimulator(directory, ["--duration", "7", "--flood"])
        #expect(capture.waitForExit(deadlineSeconds: 30) && capture.exitStatus == 0, "\(capture.output)")
        #expect(publish.waitForExit(deadlineSeconds: 30) && publish.exitStatus == 0, "\(publish.output)")
        let final = try Self.finalStatistics(directory)
        let totals = try #require(final["totals"] as? [String: Any])
        let sent = Int(capture.output.split(separator: " ").dropFirst().first ?? "") ?? 0
        let out = totals["framesOut"] as? Int ?? 0
        let dropped = (totals["framesDropped"] as? Int ?? 0) + (totals["framesOverRate"] as? Int ?? 0)
        let peakMiB = Double(final["peakRSSKiB"] as? Int ?? 0) / 1024
        // The simulator's rate depends on the CPU it gets (about 450 pictures in 7 s beside one
        // busy core, 150 on a machine loaded five times over): it flooded when the host got more
        // than it encoded, so that the rest had to be dropped.
        #expect(sent > out, "the simulator flooded: \(capture.output); \(totals)")
        #expect(out <= 7 * 30 + 5, "the stream stayed at 30 fps: \(totals)")
        #expect(dropped >= sent - out - 10, "what was not encoded was dropped and counted: \(totals)")
        // Four 2.5 MB pictures in flight at most (two queued in the server, one in the mailbox,
        // one being encoded) on top of the encoder and the runtime: a queue without bound would
        // have grown by the whole flood, well past this.
        #expect(peakMiB < 120, "peak RSS \(peakMiB) MiB")
        print("ingest flood: sent \(sent), encoded \(out), dropped \(dropped), peak RSS \(peakMiB) MiB")
    }
}
