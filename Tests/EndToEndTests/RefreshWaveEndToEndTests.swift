import Foundation
import Media
import TestSupport
import Testing

extension PublishEndToEndTests {
    /// Key frames only when asked (Docs/cadence.md): the preview cannot ask, so it gets an
    /// intra-refresh wave every `--keyint` (2 s) instead of an IDR. A stock ffmpeg started on the
    /// preview's SDP 4 s into the stream, long after the one IDR, must show the screen once a
    /// wave has crossed it (40 pictures at 640 wide, within one period plus one wave), and every
    /// picture after that whole and in order.
    /// rtc-publish to its preview on `port` (no room, stats in stats.jsonl), then, once it wrote
    /// `uid`.sdp and `seconds` status lines, a stock ffmpeg on that SDP, listening.
    static func previewPlayer(
        uid: String,
        arguments: [String],
        port: UInt16,
        after seconds: Int,
        directory: TemporaryDirectory
    ) throws -> (BackgroundProcess, Receiver) {
        let publish = try BackgroundProcess(
            try builtProgram("rtc-publish"),
            [
                "--room", "r", "--uid", uid, "--no-signal", "--size", "\(width)x\(height)",
                "--preview", "127.0.0.1:\(port)", "--stats-json", "stats.jsonl",
            ] + arguments,
            directory: directory
        )
        let sdp = directory.path + "/\(uid).sdp"
        try publish.waitUntil(deadlineSeconds: 20, "\(uid).sdp written") { FileManager.default.fileExists(atPath: sdp) }
        try publish.waitUntil(deadlineSeconds: 20, "\(seconds) s of stream") {
            publish.output.split(separator: "\n").filter { $0.contains("fps in") }.count >= seconds
        }
        let receiver = try Receiver(sdp: sdp, width: width, height: height, directory: directory, name: uid)
        _ = try receiver.listens(on: Int(port), within: 5)
        return (publish, receiver)
    }

    @Test func aPreviewPlayerStartedLateShowsTheScreenAfterOneWave() throws {
        let directory = try TemporaryDirectory()
        let ports = try LoopbackUDPSocket.freePortPairs(2)
        let (publish, receiver) = try Self.previewPlayer(
            uid: "late",
            arguments: ["--duration", "12"],
            port: ports[0],
            after: 4,
            directory: directory
        )
        let listening = Date()
        #expect(publish.waitForExit(deadlineSeconds: 30) && publish.exitStatus == 0, "\(publish.output)")
        #expect(try receiver.ffmpeg.waitForExit(deadlineSeconds: 20), "\(receiver.ffmpeg.standardError)")
        let ended = Date()
        let got = try Received(base: receiver.base, width: Self.width, height: Self.height)
        let totals = try PublisherTotals(statsFile: directory.path + "/stats.jsonl")
        #expect(totals.keyFrames == 1, "one IDR, the first: \(totals.keyFrames)")
        #expect(totals.refreshWaves >= 4, "refresh waves: \(totals.refreshWaves)")
        // Whole pictures from the first readable one on: none unreadable after it, in order.
        let first = try #require(got.values.firstIndex { $0 != nil }, "nothing readable: \(got)")
        let after = got.values[first...]
        #expect(after.allSatisfy { $0 != nil }, "unreadable pictures after the first whole one: \(got)")
        let frames = after.compactMap { $0?.frame }
        #expect(zip(frames, frames.dropFirst()).allSatisfy { $0 < $1 }, "\(got)")
        // Shown within a period and a wave of listening (2 s + 40 pictures, 3.4 s); 5 s allowed
        // for ffmpeg's own start.
        let watched = ended.timeIntervalSince(listening)
        let expectedLast = frames.last ?? 0
        let shownFor = Double(frames.count) / 30
        #expect(watched - shownFor <= 5, "the screen showed \(shownFor) s of \(watched) s watched: \(got)")
        print(
            "late preview player: \(frames.count) whole pictures (frames \(frames.first ?? 0)…\(expectedLast)) "
                + "of \(String(format: "%.1f", watched)) s watched, \(first) pictures before the first whole one; "
                + "\(totals.keyFrames) key frame, \(totals.refreshWaves) waves"
        )
    }
}

extension PublishEndToEndTests {
    /// A still screen and a preview player started late (Docs/cadence.md, "Receivers that cannot
    /// ask"): on this machine a port nobody listens on answers the preview's packets with ICMP
    /// port unreachable, so the player's start is seen, and it gets a wave at once instead of
    /// waiting up to 10 s for a periodic one; with only such receivers a still screen gets no
    /// periodic wave at all. The input is the synthetic screen's first picture, looped.
    @Test func aPreviewPlayerStartedOnAStillScreenGetsAWaveAtOnce() throws {
        let directory = try TemporaryDirectory()
        let generate = try BackgroundProcess(
            try builtProgram("rtc-encode"),
            ["generate", "--seconds", "1", "--size", "\(Self.width)x\(Self.height)", "--out", "gen"],
            directory: directory
        )
        #expect(generate.waitForExit(deadlineSeconds: 60) && generate.exitStatus == 0, "\(generate.output)")
        // The header and the first frame of the generated file.
        let y4m = [UInt8](try Data(contentsOf: URL(fileURLWithPath: directory.path + "/gen/in.y4m")))
        let header = try #require(y4m.firstIndex(of: 0x0A)) + 1
        let frame = "FRAME\n".utf8.count + Self.width * Self.height * 3 / 2
        try Data(y4m.prefix(header + frame)).write(to: URL(fileURLWithPath: directory.path + "/still.y4m"))

        let ports = try LoopbackUDPSocket.freePortPairs(2)
        let started = Date()
        // Still for a few seconds before anyone listens.
        let (publish, receiver) = try Self.previewPlayer(
            uid: "still",
            arguments: ["--video", "still.y4m", "--loop", "--duration", "24"],
            port: ports[0],
            after: 5,
            directory: directory
        )
        let listening = Date().timeIntervalSince(started)
        #expect(publish.waitForExit(deadlineSeconds: 40) && publish.exitStatus == 0, "\(publish.output)")
        #expect(try receiver.ffmpeg.waitForExit(deadlineSeconds: 20), "\(receiver.ffmpeg.standardError)")
        let got = try Received(base: receiver.base, width: Self.width, height: Self.height)

        // Each second's record: its time and the waves so far.
        let text = try String(contentsOfFile: directory.path + "/stats.jsonl", encoding: .utf8)
        let records = text.split(separator: "\n").compactMap { line -> (t: Double, waves: Int, cadence: String)? in
            guard let record = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let t = record["time"] as? Double, let totals = record["totals"] as? [String: Any]
            else { return nil }
            return (t, totals["refreshWaves"] as? Int ?? 0, totals["cadence"] as? String ?? "")
        }
        let before = records.last { $0.t <= listening }?.waves ?? 0
        let firstAfter = records.first { $0.waves > before }
        let total = records.last?.waves ?? 0
        let series = records.map { "\(Int($0.t)) \($0.cadence) \($0.waves)" }.joined(separator: ", ")
        print(
            "still preview player: listening at \(String(format: "%.1f", listening)) s, its wave at "
                + "\(firstAfter.map { String(format: "%.1f", $0.t) } ?? "never") s, \(total) waves in all "
                + "(\(before) before it listened); \(got.values.compactMap { $0 }.count) readable pictures"
        )
        #expect(records.contains { $0.t < listening && $0.cadence == "still" }, "never still before: \(series)")
        // Its wave within 4 s of listening (1.5 s without a refusal, the next poll, the wave's
        // pictures, the stats' second: 2.7 s measured), where a periodic one came 10 s after
        // the screen went still; and no other after it in the 10+ s of still screen that followed.
        let waveAt = try #require(firstAfter?.t, "no wave after the player listened: \(series)")
        #expect(waveAt - listening <= 4, "\(series)")
        #expect(total == before + 1, "\(series)")
        // It showed the screen: the first picture's timecode, readable.
        #expect(got.values.contains { $0 != nil }, "nothing readable: \(got)")
    }
}
