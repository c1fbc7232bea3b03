import Foundation
import TestSupport
import Testing

extension PublishEndToEndTests.WHIPJanusTests {
    /// Issue 39: H.264 simulcast over WHIP into Janus 1.1.2 (Docs/simulcast.md). rtc-publish sends
    /// three layers, highest first: `f` 640x360 at 30 fps, `q` 320x180 at 15 fps, `l` 640x360 at
    /// 5 fps (Janus's substreams 2, 1 and 0). aiortc viewers on Janus A pick a substream: two at
    /// once watch `f` and `l` at their layers' rates, and one on Janus B, through the cascade,
    /// watches `l`; then a third starts on `l`, 3 % of rtc-publish's sends to Janus are dropped,
    /// and it moves to `f`; every layer's losses are repaired from that layer's own history.
    @Test func simulcastLayersReachJanusViewersAtTheirRatesAndEveryLayerIsRepaired() async throws {
        let room = try await Self.emptyRoom()
        let directory = try TemporaryDirectory()
        let (publish, endpoint) = try Self.publish(
            into: room,
            seconds: 70,
            arguments: ["--keyint", "1800", "--simulcast-layers", "f:1:30:1200,q:2:15:300,l:1:5:200"],
            directory: directory
        )
        try await room.waitForPublisher(on: .a, seconds: 15)
        // First two viewers at once on a clean path, then one switching layers behind 3 % loss.
        async let topRun = room.subscribe(on: .a, seconds: 10, waitPublisher: 5, substream: 2, name: "janus_sub-f")
        async let lowRun = room.subscribe(on: .a, seconds: 10, waitPublisher: 5, substream: 0, name: "janus_sub-l")
        let (top, low) = try await (topRun, lowRun)
        // Janus A forwards every substream to B (`publish_remotely`): a viewer there picks one too.
        let cascaded = try await room.subscribe(
            on: .b,
            seconds: 6,
            waitPublisher: 5,
            substream: 0,
            name: "janus_sub-b-l"
        )
        let switching: JanusRoom.Summary
        let dropped: Int
        do {
            // The loss starts once the viewer is in (about 3 s): a first key frame of `l` that
            // lost a packet for good (its resend dropped too) leaves aiortc waiting 128 packets,
            // 25 s at 5 fps, on the hole. The switch at 5 s and everything after are under loss.
            async let switchingRun = room.subscribe(
                on: .a,
                seconds: 12,
                waitPublisher: 5,
                substream: 0,
                switchSubstream: (to: 2, at: 5),
                name: "janus_sub-switch"
            )
            try await Task.sleep(for: .seconds(3))
            try room.setLoss(percent: 3)
            switching = try await switchingRun
            // `l` makes 5 sends a second: 3 % of them is one every 7 s. The loss stays on long
            // enough (about 150 sends of `l` in all) that every layer loses some.
            try await Task.sleep(for: .seconds(16))
            dropped = try room.droppedPackets()
            try room.removeLoss()
        } catch {
            try? room.removeLoss()
            throw error
        }
        #expect(publish.waitForExit(deadlineSeconds: 60), "\(publish.output)")
        #expect(publish.exitStatus == 0, "\(publish.output)")
        #expect(publish.output.contains("WHIP: simulcast layers f, q, l taken by the endpoint"), "\(publish.output)")

        // ± 10 %. The cascaded viewer's rate counts the pictures Janus B relays before it is on
        // `l`: it starts on the first key frame of any layer and moves at `l`'s next one, which
        // its PLI must first bring over the cascade (5.3–7.0 fps over 10 s in three runs, where
        // Janus A's `l` viewer saw 5.0–5.2). Under 10 fps it is `l`, not `q` (15) or `f` (30).
        for (got, label, rate, over) in [
            (top, "substream 2 (f)", 30.0, 1.1), (low, "substream 0 (l)", 5.0, 1.1),
            (cascaded, "Janus B, substream 0 (l)", 5.0, 2.0),
        ] {
            #expect(got.ok, "\(label): \(got)\n\(got.log)")
            #expect(got.video.sizes.contains("640x360"), "\(label): \(got.video.sizes)")
            #expect(
                (0.9 * rate...over * rate).contains(got.video.fpsRTP ?? 0),
                "\(label): \(got.video.fpsRTP ?? 0) fps by RTP time, \(rate) fps expected: \(got)"
            )
            #expect(got.video.timecodes.outOfOrder == 0, "\(label): \(got.video.timecodes)")
            #expect(
                Double(got.video.timecodes.readable) >= 0.95 * Double(got.video.timecodes.pictures),
                "\(label): \(got.video.timecodes)"
            )
            #expect((got.video.sequence?.gaps ?? 99) == 0, "\(label): packets missing on a clean path: \(got)")
        }
        // The switch: from 5 fps to 30 at a key frame of `f`, every picture whole and none out of
        // order. Janus may relay a few pictures of another layer while it moves to the one asked
        // for (it starts on the first key frame of any), and the same capture on two layers shows
        // one timecode twice: a repeat, never a step back.
        #expect(switching.ok, "\(switching)\n\(switching.log)")
        #expect(switching.video.sizes.contains("640x360"), "\(switching.video.sizes)")
        #expect(switching.video.timecodes.outOfOrder == 0, "\(switching.video.timecodes)")
        #expect(switching.video.timecodes.repeated <= 4, "\(switching.video.timecodes)")
        let full = switching.video.timecodes.bySize?["640x360"]
        #expect(
            full != nil && full?.readable == full?.pictures,
            "a broken 640x360 picture around the switch: \(full.map { "\($0.readable)/\($0.pictures)" } ?? "none")"
        )
        // 5 s at 5 fps, then about 7 s at 30, the losses repaired.
        #expect(switching.video.frames >= 25 + 150, "\(switching.video.frames) pictures: \(switching)")
        #expect((switching.video.sequence?.gaps ?? 99) <= 2, "losses left unrepaired: \(switching)")

        // Every layer lost packets to the 3 % and had them resent from its own history.
        // The last record with the endpoint's counters (it leaves the list at the DELETE).
        let records = Self.statsRecords(directory)
        let repairs =
            records.reversed().lazy.compactMap {
                ((($0["totals"] as? [String: Any])?["feedback"] as? [String: Any])?["whip"] as? [String: Any])?[
                    "repairsByLayer"
                ] as? [Int]
            }.first ?? []
        #expect(dropped >= 10, "nftables dropped only \(dropped) sends")
        #expect(repairs.count == 3 && repairs.allSatisfy { $0 > 0 }, "repairs per layer (f, q, l): \(repairs)")
        let layers = (records.last?["totals"] as? [String: Any])?["layers"] as? [[String: Any]] ?? []
        print(
            "whip simulcast (\(endpoint.id)): nftables dropped \(dropped) sends; repairs per layer (f, q, l) \(repairs); "
                + "layers \(layers.map { "\($0["rid"] ?? "?") \($0["frames"] ?? 0) frames" }); "
                + "f \(top.video.fpsRTP ?? 0) fps, l \(low.video.fpsRTP ?? 0) fps, l on B \(cascaded.video.fpsRTP ?? 0) fps; switch \(switching.video.frames) pictures, "
                + "\(switching.video.timecodes), sizes \(switching.video.sizes)"
        )
    }

    /// Every `--stats-json` line, in order.
    static func statsRecords(_ directory: TemporaryDirectory) -> [[String: Any]] {
        let text = (try? String(contentsOfFile: directory.path + "/stats.jsonl", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }
}
