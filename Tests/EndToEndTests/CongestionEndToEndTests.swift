import Foundation
import TestSupport
import Testing

/// Issue 20: a real bottleneck between the publisher and a real receiver. In a namespace the
/// test makes, `Tests/Peers/bottleneck.py` shapes what leaves the publisher's ICE ports
/// (`--ice-ports`) through an htb class with a bfifo queue on `lo` (the kernel has no netem;
/// feedback in the other direction is not shaped), and steps its capacity 3 → 1 → 3 Mbit/s
/// every 20 s from the first packet it shapes (as `scripts/cc-bench.sh` does: on the clock of
/// the test's start, a loaded run's Chromium took 4 s to connect, and the first phase's settled
/// part held 1 s of the stream). Headless Chromium watches the room page: it negotiates transport-cc, and its
/// transport feedback drives the publisher's delay-based estimate, probing and pacer.
extension PublishEndToEndTests {
    @Test func theSendingRateFollowsABottleneckStepping3To1To3Mbits() throws {
        let room = try ShapedRoom(
            purpose: "bottleneck",
            schedule: "0:3000,20:1000,40:3000",
            seconds: 60,
            shaping: ["--samples", "bottleneck-samples.jsonl"]
        )
        let directory = room.directory
        // 1080p: the synthetic screen at 720p compresses below 3 Mbit/s whatever the target, and
        // the encoder, not the controller, would be the limit. No preview: the only receiver asks
        // for its key frames, so none leaves on a timer (Docs/cadence.md).
        let publish = try room.startPublisher([
            "--no-preview", "--size", "1920x1080", "--duration", "72", "--video-bitrate", "1500",
            "--max-video-bitrate", "4000",
        ])
        // Watching past the shaper's 60 s, so the last phase is not cut short by the stream's end.
        let browser = try room.openViewer(.init(seconds: 62, deadline: 110))
        #expect(browser.process.waitForExit(deadlineSeconds: 120), "\(browser.output)")
        #expect(room.shaper.waitForExit(deadlineSeconds: 30), "\(room.shaper.output)")
        #expect(publish.waitForExit(deadlineSeconds: 30) && publish.exitStatus == 0, "\(publish.output)")
        room.close()
        let summary = try browser.summary()
        #expect(summary.ok, "\(summary.error ?? "")\n\(browser.output)\n\(publish.output)")
        let tab = try #require(summary.tabs.first, "\(browser.output)")
        let bottleneck = try room.shaperSummary()
        let phases = bottleneck["phases"] as? [[String: Any]] ?? []
        let steps = bottleneck["steps"] as? [[String: Any]] ?? []
        let offered = bottleneck["offered"] as? [[String: Any]] ?? []
        try #require(phases.count == 3 && steps.count == 3, "\(bottleneck)")

        // Transport-cc was agreed and fed the estimator; probes went out.
        let congestion = try Self.finalFeedback(directory, destination: Self.chromiumDestination(directory))[
            "congestion"
        ]
        let cc = congestion as? [String: Any] ?? [:]
        #expect(cc["transportWide"] as? Bool == true, "\(cc)")
        #expect((cc["feedbackMessages"] as? Int ?? 0) >= 300, "\(cc)")
        #expect((cc["probesSent"] as? Int ?? 0) >= 1, "\(cc)")

        // Once settled in each phase, the queue stays short (the issue's 150 ms at p95) and
        // the link is well used (the issue's 85 %): 90–98 % measured in every phase of 12 runs
        // with the resume after a drain and β = 0.9 (Docs/journal/congestion-rounds.md). A loss-based sender
        // holds a 750 ms queue here; a stuck estimate uses under half the link.
        // A failing phase shows what was offered in it (500 ms windows) and the publisher's
        // status lines (target and estimate each second): whether the estimate or the encoder
        // held the rate, without a rerun.
        func explained(_ phase: [String: Any]) -> String {
            let start = phase["start"] as? Double ?? 0
            let end = phase["end"] as? Double ?? .infinity
            let windows = offered.filter { (($0["t"] as? Double) ?? -1) >= start && (($0["t"] as? Double) ?? -1) < end }
            let rates = windows.map { "\($0["t"] ?? "?"):\($0["offeredKbps"] ?? "?")" }.joined(separator: " ")
            return "\(phase)\noffered kbit/s: \(rates)\npublisher:\n\(publish.output)"
        }
        for phase in phases {
            let delay = phase["queueDelayMs"] as? [String: Any] ?? [:]
            let p95 = delay["p95"] as? Double ?? .infinity
            let utilisation = phase["utilisation"] as? Double ?? 0
            #expect(p95 <= 150, "queue p95 \(p95) ms in \(explained(phase))")
            #expect(utilisation >= 0.85, "utilisation \(utilisation) in \(explained(phase))")
        }
        // The step down overflows the bottleneck's queue only briefly: the pacer holds what the
        // encoder made before the estimate fell (at the drain rate) instead of the bottleneck,
        // and resends stay under the allowed rate. 0–14 drops measured; 120–430 before.
        let drops = phases.reduce(0) { $0 + ($1["drops"] as? Int ?? 0) }
        #expect(drops <= 60, "bottleneck drops \(drops): \(phases)")
        // The step down: from 3 s after it, the sending rate is at most 1.1 × the new capacity
        // in at least 80 % of the 500 ms windows (a key frame a viewer asked for, or a probe,
        // may make one window more).
        let down = offered.filter { (($0["t"] as? Double) ?? 0) >= 23 && (($0["t"] as? Double) ?? 0) < 40 }
        let downRates = down.compactMap { $0["offeredKbps"] as? Double }
        let within = downRates.filter { $0 <= 1100 }.count
        #expect(
            downRates.count >= 30 && Double(within) >= 0.8 * Double(downRates.count),
            "offered after 23 s: \(downRates)"
        )
        // Tracking: the rate gets into 85–110 % of the new capacity and stays there 2 s. The
        // issue's 5 s held in every phase of the fourth round's quiet runs (ramp 2.5–4.0 s, step
        // down 2.0–2.5 s, step up 2.0–4.5 s; Docs/journal/congestion-rounds.md). Beside a busy loop the steps
        // took 2.0–3.5 s, but a debug x264 short of CPU made 19–26 fps of a 1080p screen and
        // the ramp took 6.0–12.5 s: 10 s for the steps, 15 s for the ramp from the start.
        for (index, step) in steps.enumerated() {
            let seconds = (step["trackingSeconds"] as? Double) ?? .infinity
            #expect(
                seconds <= (index == 0 ? 15 : 10),
                "tracking after the step: \(step)\n\(phases.indices.contains(index) ? explained(phases[index]) : "")"
            )
        }

        // The viewer: the screen in order, nearly every frame, no freeze beyond the issue's
        // 500 ms (longest gaps 133–317 ms measured), no key frame storm (one at the start, few
        // after).
        #expect(tab.timecodes.inOrder && tab.timecodes.backwards == 0, "\(tab.timecodes)")
        #expect(tab.playbackQuality.framesInWindow >= Int(0.9 * 30 * 62), "\(tab.playbackQuality)")
        #expect((tab.frames.maxGapMs ?? .infinity) <= 500, "\(tab.frames)")
        let totals = try PublisherTotals(statsFile: directory.path + "/stats.jsonl")
        #expect(totals.keyFrames <= 6, "key frames: \(totals.keyFrames)")
        print(
            "bottleneck: phases \(phases.map { ($0["capacityKbps"] ?? 0, $0["utilisation"] ?? 0, $0["queueDelayMs"] ?? 0, $0["drops"] ?? 0) }); "
                + "steps \(steps.map { $0["trackingSeconds"] ?? "nil" }); queue \(bottleneck["queueDelayMs"] ?? 0); "
                + "viewer \(tab.playbackQuality.framesInWindow) frames, \(tab.frames.freezes) freezes, max gap \(tab.frames.maxGapMs ?? -1) ms, "
                + "g2g p50 \(tab.glassToGlassMs.p50 ?? -1) p95 \(tab.glassToGlassMs.p95 ?? -1); cc \(cc)"
        )
    }

    /// The `sub:web_…` destination the viewer page's random uid became.
    static func chromiumDestination(_ directory: TemporaryDirectory) throws -> String {
        let text = try String(contentsOfFile: directory.path + "/stats.jsonl", encoding: .utf8)
        guard let range = text.range(of: #""sub:web_[0-9a-f]+""#, options: .regularExpression) else {
            throw InteropFailure("no viewer destination in stats.jsonl")
        }
        return String(text[range].dropFirst().dropLast())
    }
}
