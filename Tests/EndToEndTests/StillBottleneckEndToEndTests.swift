import Foundation
import TestSupport
import Testing

extension PublishEndToEndTests {
    /// Rate control through a still period (Docs/cadence.md): a private Xvfb shared with
    /// `--video x11` to headless Chromium on the room page, through a 2 Mbit/s bottleneck (in a
    /// namespace; `Tests/Peers/bottleneck.py`, the schedule split at the scene's changes so each
    /// scene is a phase). The screen moves for 12 s (rtc-testscreen), is still for 18 s, then
    /// moves again. While still the sending rate falls to the idle repeats; the estimate must not
    /// collapse with it, and the change after must not overflow the link.
    @Test func aStillPeriodKeepsTheEstimateAndTheChangeAfterItDoesNotOverflowTheLink() throws {
        let room = try ShapedRoom(
            purpose: "still-cc",
            schedule: "0:2000,12:2000,30:2000",
            seconds: 42,
            shaping: ["--settle", "0"]
        )
        let directory = room.directory
        let shaper = room.shaper
        let xvfb = try XvfbServer(width: 1280, height: 720)
        let (background, _) = try ScreenCaptureEndToEndTests.testScreen(
            xvfb,
            ["--size", "1280x720", "--solid", "2A4D7A", "--title", "background"],
            directory: directory
        )
        let publish = try room.startPublisher([
            "--no-preview", "--video", "x11:\(xvfb.display)", "--audio", "none", "--size", "1280x720",
            "--duration", "46",
        ])
        let browser = try room.openViewer(.init(seconds: 40, deadline: 90))
        // The scenes, on the shaper's clock (it starts with the first packet it shapes).
        try shaper.waitUntil(deadlineSeconds: 30, "traffic") { shaper.output.contains(#""match""#) }
        let start = Date()
        let first = try BackgroundProcess(
            try builtProgram("rtc-testscreen"),
            ["--display", xvfb.display, "--size", "1280x720", "--duration", "12"],
            directory: directory,
            name: "moving-1"
        )
        Thread.sleep(forTimeInterval: max(0, 30 - Date().timeIntervalSince(start)))
        let second = try BackgroundProcess(
            try builtProgram("rtc-testscreen"),
            ["--display", xvfb.display, "--size", "1280x720", "--duration", "12"],
            directory: directory,
            name: "moving-2"
        )
        #expect(browser.process.waitForExit(deadlineSeconds: 100), "\(browser.output)")
        #expect(shaper.waitForExit(deadlineSeconds: 30), "\(shaper.output)")
        #expect(publish.waitForExit(deadlineSeconds: 30) && publish.exitStatus == 0, "\(publish.output)")
        room.close()
        first.interrupt()
        second.interrupt()
        background.interrupt()

        let bottleneck = try room.shaperSummary()
        let phases = bottleneck["phases"] as? [[String: Any]] ?? []
        try #require(phases.count == 3, "\(bottleneck)")
        func delivered(_ phase: [String: Any]) -> Double { phase["deliveredKbps"] as? Double ?? -1 }
        func queue(_ phase: [String: Any], _ key: String) -> Double {
            (phase["queueDelayMs"] as? [String: Any])?[key] as? Double ?? .infinity
        }

        // The publisher's second-by-second record: its video rate, cadence and estimate for
        // the viewer (its clock starts within a second of the shaper's).
        struct Second {
            var t: Double
            var videoKbps: Double
            var cadence: String
            var estimateKbps: Double?
            /// What moved the estimate: the congestion state's counters and rates.
            var congestion: String
        }
        let destination = try Self.chromiumDestination(directory)
        let text = try String(contentsOfFile: directory.path + "/stats.jsonl", encoding: .utf8)
        let seconds = text.split(separator: "\n").compactMap { line -> Second? in
            guard let record = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let t = record["time"] as? Double, let totals = record["totals"] as? [String: Any]
            else { return nil }
            let congestion =
                ((totals["feedback"] as? [String: Any])?[destination] as? [String: Any])?["congestion"]
                as? [String: Any]
            return Second(
                t: t,
                videoKbps: record["videoKbps"] as? Double ?? 0,
                cadence: totals["cadence"] as? String ?? "",
                estimateKbps: (congestion?["delayBasedBitrate"] as? Int).map { Double($0) / 1000 },
                congestion: [
                    "delayState", "overuseEvents", "queueBackoffs", "probesSent", "lastProbeBitrate",
                    "acknowledgedBitrate", "linkCapacityBitrate", "queueDelayMilliseconds",
                ].map { "\($0) \(congestion?[$0] ?? "-")" }.joined(separator: " ")
            )
        }
        let series = seconds.map {
            "\(Int($0.t)) \($0.cadence) \(Int($0.videoKbps)) kbit/s est \($0.estimateKbps.map { "\(Int($0))" } ?? "-")"
        }
        // The still scene: from 3 s after the first scene's end to the second's start.
        let stillSeconds = seconds.filter { (16.0...29.0).contains($0.t) }
        let learned = try #require(
            seconds.filter { (8.0...13.0).contains($0.t) }.compactMap(\.estimateKbps).max(),
            "no estimate while moving: \(series)"
        )
        let lowest = try #require(stillSeconds.compactMap(\.estimateKbps).min(), "no estimate while still: \(series)")
        let stillRate = stillSeconds.map(\.videoKbps).reduce(0, +) / Double(max(1, stillSeconds.count))
        // The change: the first second after the still scene that is not still; 3 s later.
        let change = try #require(
            seconds.first { $0.t >= 29 && $0.cadence != "still" },
            "no change after the still scene: \(series)"
        )
        // The change's first pictures queue at the bottleneck for a moment; the drain, the
        // early back-off and the over-use answer it. Where R_hat is the sender's own they go
        // from the link's arrival rate (D29, D32 in Docs/congestion.md): the estimate stays
        // over 0.6 × what it had learned (1161–1706 of 1740–1800 kbit/s in ten runs; 420–590
        // when the drain resumed from R_hat), and is back within 5 s.
        let recovered = seconds.first { $0.t >= change.t + 5 }?.estimateKbps ?? 0
        let dip = seconds.filter { $0.t >= change.t && $0.t < change.t + 5 }.compactMap(\.estimateKbps).min() ?? 0
        let report =
            "phases (kbit/s delivered, queue p95/max ms, drops): "
            + phases.map { "\(delivered($0)) \(queue($0, "p95"))/\(queue($0, "max")) \($0["drops"] ?? "?")" }
            .joined(separator: "; ")
            + "; video while still \(String(format: "%.2f", stillRate)) kbit/s; estimate kbit/s: moving \(learned), "
            + "still min \(lowest), lowest in 5 s after the change \(dip), 5 s after \(recovered)"
        let aroundTheChange = seconds.filter { $0.t >= change.t - 1 && $0.t < change.t + 4 }
            .map { "\(Int($0.t)) \($0.cadence) \(Int($0.videoKbps)) kbit/s: \($0.congestion)" }
        print("still period behind 2 Mbit/s: \(report)\n" + aroundTheChange.joined(separator: "\n"))
        // Still: next to nothing sent (the issue's 10 kbit/s), and the estimate kept.
        #expect(stillSeconds.allSatisfy { $0.cadence == "still" }, "\(series)")
        #expect(stillRate <= 10, "\(report)\n\(series)")
        #expect(lowest >= 0.5 * learned, "the estimate collapsed while still: \(report)\n\(series)")
        // The change after it: the link's queue stays short, nothing is dropped, and the
        // estimate is back within 5 s.
        #expect(queue(phases[2], "p95") <= 150, "\(report)")
        #expect((phases[2]["drops"] as? Int ?? 1) == 0, "\(report)")
        #expect(dip >= 0.6 * learned, "\(report)\n\(series)")
        #expect(recovered >= 0.8 * learned, "\(report)\n\(series)")
    }
}
