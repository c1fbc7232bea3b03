import Foundation
import TestSupport
import Testing

/// A viewer whose offer has no H.264 (a browser without it: Firefox on Debian, Chromium built
/// without proprietary codecs) gets VP8 from a second encoder, started for it and stopped when
/// it leaves, while an H.264 viewer in the same room goes on with the one H.264 encode.
extension PublishEndToEndTests {
    @Test func aViewerWithoutH264GetsVP8RepairedUnderLossWhileAnotherWatchesH264() throws {
        let namespace = try NetworkNamespace(purpose: "vp8")
        try namespace.addRules(
            """
            table inet rtc_loss {
                chain output {
                    type filter hook output priority 0; policy accept;
                    udp length > 300 numgen random mod 100 < 3 counter drop
                }
            }
            """
        )
        let directory = try TemporaryDirectory()
        let (signal, publish, port) = try Self.webRTCRoom(
            directory,
            seconds: 34,
            launcher: namespace.launcher
        )
        let h264 = try Self.viewerOfAlice(
            port: port,
            uid: "carol_sub",
            options: .init(seconds: 26, deadline: 70, videoCodec: "h264"),
            directory: directory,
            launcher: namespace.launcher
        )
        let vp8 = try Self.viewerOfAlice(
            port: port,
            options: .init(seconds: 16, sendPLIAt: 6, deadline: 70, videoCodec: "vp8"),
            directory: directory,
            launcher: namespace.launcher
        )
        #expect(vp8.waitForExit(deadlineSeconds: 80), "\(vp8.output)")
        #expect(vp8.exitStatus == 0, "\(vp8.output)\n\(publish.output)")
        #expect(h264.waitForExit(deadlineSeconds: 80), "\(h264.output)")
        #expect(h264.exitStatus == 0, "\(h264.output)\n\(publish.output)")
        #expect(publish.waitForExit(deadlineSeconds: 40) && publish.exitStatus == 0, "\(publish.output)")
        signal.interrupt()

        // Each got its codec, and the synthetic screen decoded from it, in order (a picture a
        // decoder repainted from an older one to hide a packet that never came counts as stale).
        let got = try vp8.received()
        let other = try h264.received()
        #expect(got.summary.videoCodec == "VP8", "\(got.summary.videoCodec ?? "nil")")
        #expect(other.summary.videoCodec == "H264", "\(other.summary.videoCodec ?? "nil")")
        #expect(got.timecodes.pictures >= 300 && got.timecodes.outOfOrder == 0, "\(got) \(got.orderBreaks)")
        #expect(other.timecodes.pictures >= 500 && other.timecodes.outOfOrder == 0, "\(other) \(other.orderBreaks)")

        // 3 % loss, repaired over RTX on the VP8 stream as on H.264.
        let sequence = try #require(got.summary.video.sequence, "aiortc recorded no sequence numbers")
        #expect(sequence.missing >= 5, "\(sequence)")
        #expect(
            Double(sequence.repaired) >= 0.9 * Double(sequence.missing),
            "repaired \(sequence.repaired) of \(sequence.missing) lost: \(sequence)"
        )
        // Its PLI brought a VP8 key frame within 2 s.
        let pli = try #require(got.summary.pli.first { $0.sent }, "no PLI sent: \(got.summary.pli)")
        let answered = got.summary.video.keyFrames.first { $0.t > pli.t }
        #expect(
            (answered?.t ?? .infinity) - pli.t <= 2,
            "key frame after the PLI at \(pli.t) s: \(got.summary.video.keyFrames)"
        )

        // One VP8 encoder, opened for the viewer and closed once it left (the H.264 viewer
        // stayed 10 s longer).
        let encoders = try Self.lastEncoders(directory)
        try #require(encoders.count == 1, "\(encoders)")
        let encoder = encoders[0]
        #expect(encoder["codec"] as? String == "VP8", "\(encoder)")
        #expect(encoder["opened"] as? Int == 1, "\(encoder)")
        #expect(encoder["running"] as? Bool == false, "\(encoder)")
        #expect((encoder["frames"] as? Int ?? 0) >= 400, "\(encoder)")
        #expect((encoder["failures"] as? Int ?? -1) == 0, "\(encoder)")
        let frames = encoder["frames"] as? Int ?? 0
        let nanoseconds = encoder["encodeNanoseconds"] as? Int ?? 0
        print(
            "vp8: \(got); lost \(sequence.missing), repaired \(sequence.repaired); PLI at \(pli.t) s, key frame at "
                + "\(answered?.t ?? -1) s; encoder \(frames) frames, "
                + "\(String(format: "%.2f", Double(nanoseconds) / Double(max(frames, 1)) / 1e6)) ms each; h264 viewer: \(other)"
        )
    }

    /// `encoders` of the last stats.jsonl record.
    static func lastEncoders(_ directory: TemporaryDirectory) throws -> [[String: Any]] {
        let text = try String(contentsOfFile: directory.path + "/stats.jsonl", encoding: .utf8)
        for line in text.split(separator: "\n").reversed() {
            guard let record = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let totals = record["totals"] as? [String: Any]
            else { continue }
            return totals["encoders"] as? [[String: Any]] ?? []
        }
        return []
    }
}
