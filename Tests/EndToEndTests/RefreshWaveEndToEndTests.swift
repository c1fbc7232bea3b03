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
    @Test func aPreviewPlayerStartedLateShowsTheScreenAfterOneWave() throws {
        let directory = try TemporaryDirectory()
        let ports = try LoopbackUDPSocket.freePortPairs(2)
        let publish = try BackgroundProcess(
            try builtProgram("rtc-publish"),
            [
                "--room", "r", "--uid", "late", "--no-signal", "--size", "\(Self.width)x\(Self.height)",
                "--preview", "127.0.0.1:\(ports[0])", "--duration", "12", "--stats-json", "stats.jsonl",
            ],
            directory: directory
        )
        let sdp = directory.path + "/late.sdp"
        try publish.waitUntil(deadlineSeconds: 20, "late.sdp written") { FileManager.default.fileExists(atPath: sdp) }
        try publish.waitUntil(deadlineSeconds: 20, "4 s of stream") {
            publish.output.split(separator: "\n").filter { $0.contains("fps in") }.count >= 4
        }
        let receiver = try Receiver(
            sdp: sdp,
            width: Self.width,
            height: Self.height,
            directory: directory,
            name: "late"
        )
        _ = try receiver.listens(on: Int(ports[0]), within: 5)
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
