import Foundation
import TestSupport
import Testing

/// Per-viewer simulcast layers in our own room (Docs/simulcast.md, "Not yet"): each WebRTC
/// viewer gets the layer its own estimate can carry, switching at key frames. In a namespace
/// of its own, rtc-publish sends the synthetic timecoded screen at 640x360, 30 fps, with
/// `--simulcast` (`f`: the full picture at 30 fps; `l`: the full picture at 5 fps, 250 kbit/s)
/// to three aiortc viewers. One gathers on 127.0.0.2, and `Tests/Peers/bottleneck.py` shapes
/// only what the publisher's ports send there (`ip daddr 127.0.0.2`) to 400 kbit/s; the two on
/// 127.0.0.1 are not shaped. aiortc reports only loss, so every viewer starts on `l` and moves
/// up only after a probe of its path passed (`LayerProbe`): the slow viewer must stay on `l` at
/// 5 fps without a freeze from its first picture on, the two others reach `f` and keep 30 fps
/// and a bitrate well above the slow one's.
///
/// Nested in the serialized end-to-end suite: real-time streams, four real peers.
extension PublishEndToEndTests {
    @Suite(.serialized) struct SimulcastRoomTests {
        static let capacityKbps = 400
        /// Viewing time, from each viewer's first decoded picture.
        static let viewingSeconds = 35.0
        /// The shaper's start: the link is shaped before anyone connects.
        static let settleSeconds = 10.0
        /// How soon after their first picture the fast viewers reach the full rate: a probe needs
        /// two receiver reports (aiortc sends one every 0.5–1.5 s), half a second of padding and
        /// the report on it, then `f`'s key frame.
        static let fullRateWithinSeconds = 15.0
        /// The fast viewers' rate is measured over their last seconds.
        static let lastSeconds = 15.0
        static let fastUIDs = ["fast1_sub", "fast2_sub"]
        static let slowUID = "slow_sub"

        @Test func aViewerBehindA400KbitLinkGetsTheLowLayerAndTheOthersKeepTheFullRate() throws {
            // The shaper runs past the viewers and is stopped after them: they never see the
            // link unshaped. Its queue: 500 ms at 400 kbit/s, so a key frame of `l` fits.
            let room = try ShapedRoom(
                purpose: "simulcast-room",
                schedule: "0:\(Self.capacityKbps)",
                seconds: 120,
                match: "ip daddr 127.0.0.2 udp sport 40000-40999",
                shaping: ["--queue-bytes", "25000", "--settle", "\(Int(Self.settleSeconds))"]
            )
            let directory = room.directory
            // Stopped once the viewers are done (SIGINT: it says goodbye and writes its last stats).
            let publish = try room.startPublisher([
                "--no-preview", "--video", "test", "--size", "640x360", "--fps", "30", "--simulcast", "--duration",
                "90",
            ])
            // The slow viewer may wait 30 s for its first picture (the peers' default is 10 s):
            // a viewer that never decodes is measured to the end, not dropped early. Its
            // deadline keeps the run short when it decodes late.
            let fastOptions = WebRTCSubscriber.Options(seconds: Self.viewingSeconds, deadline: 60)
            var slowOptions = WebRTCSubscriber.Options(seconds: Self.viewingSeconds, iceAddress: "127.0.0.2")
            slowOptions.firstFrameTimeout = 30
            slowOptions.deadline = 60
            let peers = Self.fastUIDs.map { ($0, fastOptions) } + [(Self.slowUID, slowOptions)]
            let viewers = try peers.map { uid, options in
                try WebRTCSubscriber(
                    .aiortc,
                    signalPort: room.port,
                    room: "123456",
                    uid: uid,
                    publisher: "alice_sub",
                    options: options,
                    directory: directory,
                    launcher: room.namespace.launcher
                )
            }
            for viewer in viewers {
                #expect(viewer.waitForExit(deadlineSeconds: 70), "\(viewer.output)")
            }
            publish.interrupt()
            #expect(publish.waitForExit(deadlineSeconds: 20), "\(publish.output)")
            room.shaper.interrupt()
            #expect(room.shaper.waitForExit(deadlineSeconds: 20), "\(room.shaper.output)")
            room.close()

            let runs = try viewers.map { try ViewerRun($0, viewingSeconds: Self.viewingSeconds) }
            let fast = Array(runs.prefix(2))
            let slow = runs[2]
            let records = Self.statsRecords(directory)
            let layers = Self.destinationLayers(records, uids: runs.map(\.uid))
            // Without the shaper's summary the viewers are still measured (and the harness fails).
            let bottleneck: [String: Any]
            do {
                bottleneck = try room.shaperSummary()
            } catch {
                Issue.record(error)
                bottleneck = [:]
            }

            // The harness first: every viewer connected and the fast ones decoded the screen,
            // the shaper shaped, and what it delivered is the slow viewer's alone: over the time
            // the slow viewer received (its first second left out), its RTP payload, video and
            // audio, is most of what went through the bottleneck (the rest: every packet's
            // headers); had the others been shaped too, it would get a third of that.
            let slowWindow = slow.settledWindow(after: Self.settleSeconds)
            let receiving = slow.receivingWindow
            let link = Link(
                summary: bottleneck,
                from: slow.monotonic(receiving.lowerBound),
                to: slow.monotonic(receiving.upperBound)
            )
            let slowKbps = slow.kilobitsPerSecond(slowWindow)
            let slowReceivingKbps = slow.kilobitsPerSecond(receiving, audio: true)
            let summary = Self.summaryLine(
                fast: fast,
                slow: slow,
                slowWindow: slowWindow,
                layers: layers,
                records: records,
                link: link
            )
            print("simulcast room: \(summary)")
            for run in runs {
                #expect(
                    run.got.summary.times["connected"] != nil,
                    "\(run.uid) never connected: \(run.got)\n\(run.output)"
                )
            }
            for run in fast {
                #expect(run.got.summary.video.frames > 0, "\(run.uid) decoded nothing: \(run.got)\n\(run.output)")
            }
            #expect(bottleneck["ok"] as? Bool == true, "shaper: \(room.shaper.output)")
            #expect(
                bottleneck["match"] as? String == "ip daddr 127.0.0.2 udp sport 40000-40999",
                "shaper match: \(bottleneck["match"] ?? "none")"
            )
            if let delivered = link.deliveredKbps, delivered > 0 {
                #expect(
                    delivered <= 1.1 * Double(Self.capacityKbps),
                    "the bottleneck delivered \(Self.format(delivered)) kbit/s through \(Self.capacityKbps): \(summary)"
                )
                #expect(
                    (0.7...1.1).contains(slowReceivingKbps / delivered),
                    "\(Self.slowUID) received \(Self.format(slowReceivingKbps)) kbit/s of video and audio payload, the bottleneck delivered \(Self.format(delivered)) kbit/s: \(summary)"
                )
            } else {
                Issue.record("the bottleneck delivered nothing while the slow viewer received: \(summary)")
            }

            // The feature. The slow viewer: `l` at 5 fps, every picture whole and in order, no gap
            // over 1 s from its first picture on. Before per-viewer layers every viewer got `f`
            // (700–1600 kbit/s): the slow one received 275 kbit/s of it through the link and
            // decoded no picture in 30 s (or lost its session when the full queue dropped its
            // consent checks), its PLIs made the shared encoder send a key frame every 0.7 s,
            // while the fast ones kept 30 fps. Starting on `f` (the start rate's layer), its first
            // seconds flooded the link, and after the move aiortc's jitter buffer waited 128
            // packets on a hole it never got back (9–23 s). Its probes up fail without a loss:
            // half a second of padding builds a queue its report's round trip shows.
            let slowViewing = slow.start...slow.end
            let slowFPS = slow.framesPerSecond(slow.lastWindow(Self.lastSeconds))
            #expect((4.0...6.5).contains(slowFPS), "\(Self.slowUID): \(Self.format(slowFPS)) fps settled: \(summary)")
            #expect(slow.largestGap(slowViewing) <= 1.0, "\(Self.slowUID) froze: \(summary)")
            #expect(
                slow.start - slow.connected <= 5,
                "\(Self.slowUID)'s first picture came \(Self.format(slow.start - slow.connected)) s after it connected: \(summary)"
            )
            for run in runs {
                #expect(run.got.timecodes.outOfOrder == 0, "\(run.uid): \(run.got.timecodes)")
            }
            let slowWhole = slow.readableFraction(slowViewing)
            #expect(
                slowWhole >= 0.95,
                "\(Self.slowUID): \(Self.format(slowWhole * 100)) % of pictures readable: \(summary)"
            )
            // The fast viewers: the full rate over their last 15 s, at a bitrate the slow link
            // does not pull down.
            for run in fast {
                let reached = run.fullRateReached.map { $0 - run.start }
                #expect(
                    reached.map { $0 <= Self.fullRateWithinSeconds } == true,
                    "\(run.uid) reached the full rate \(reached.map { "\(Self.format($0)) s" } ?? "never") after its first picture: \(summary)"
                )
                let window = run.lastWindow(Self.lastSeconds)
                let fps = run.framesPerSecond(window)
                let kbps = run.kilobitsPerSecond(window)
                #expect(fps >= 27, "\(run.uid): \(Self.format(fps)) fps over its last 15 s: \(summary)")
                #expect(run.largestGap(window) <= 0.5, "\(run.uid) froze: \(summary)")
                #expect(
                    run.readableFraction(window) >= 0.95,
                    "\(run.uid): \(Self.format(run.readableFraction(window) * 100)) % readable: \(summary)"
                )
                #expect(
                    kbps > 2 * slowKbps,
                    "\(run.uid): \(Self.format(kbps)) kbit/s, not above twice the slow viewer's \(Self.format(slowKbps)): \(summary)"
                )
            }
            // What the publisher says: each viewer's layer, and the viewers of `l`.
            let final = layers.last
            #expect(
                final?.layers[Self.slowUID] == "l",
                "\(Self.slowUID)'s destination ends on \(final?.layers[Self.slowUID] ?? "no layer"): \(summary)"
            )
            for uid in Self.fastUIDs {
                #expect(
                    final?.layers[uid] == "f",
                    "\(uid)'s destination ends on \(final?.layers[uid] ?? "no layer"): \(summary)"
                )
            }
            // Every viewer started on `l` (3 at once); then `l` kept the slow one while `f` had
            // the two others.
            let lowViewers = records.compactMap { Self.layerViewers($0, rid: "l") }.max()
            #expect(lowViewers == 3, "layer l's viewers: \(lowViewers.map(String.init) ?? "none"): \(summary)")
            #expect(
                records.contains { Self.layerViewers($0, rid: "l") == 1 && Self.topLayerViewers($0) == 2 },
                "never one viewer on l and two on f: \(summary)"
            )
            // The probes: the fast viewers' passed, the slow one's failed.
            let probes = final?.probes ?? [:]
            #expect((probes[Self.slowUID]?.failed ?? 0) >= 1 && probes[Self.slowUID]?.passed == 0, "\(summary)")
            for uid in Self.fastUIDs {
                #expect((probes[uid]?.passed ?? 0) >= 1, "\(uid)'s probes: \(summary)")
            }
        }

        /// One `--stats-json` record's per-destination layers (`"layer"`), for the records where
        /// every viewer's destination had one.
        struct DestinationLayers {
            var record: Int
            var layers: [String: String]
            /// Its probes before a move up, passed and failed (`layerProbesPassed`, `…Failed`).
            var probes: [String: (passed: Int, failed: Int)] = [:]
        }

        /// Every `--stats-json` line, in order.
        static func statsRecords(_ directory: TemporaryDirectory) -> [[String: Any]] {
            let text = (try? String(contentsOfFile: directory.path + "/stats.jsonl", encoding: .utf8)) ?? ""
            return text.split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
        }

        /// The records in which each of `uids` has a destination with a `"layer"`: a table of the
        /// record (or of its `totals`) keyed by the viewer's destination (`sub:UID`, as
        /// `feedback` is) or by its uid (as `webRTCViewers` is), whose entry has a string `layer`.
        static func destinationLayers(_ records: [[String: Any]], uids: [String]) -> [DestinationLayers] {
            records.enumerated().compactMap { index, record in
                let tables = [record, record["totals"] as? [String: Any] ?? [:]].flatMap { $0.values }
                    .compactMap { $0 as? [String: Any] }
                var found = DestinationLayers(record: index, layers: [:])
                for uid in uids {
                    for table in tables {
                        let entry = (table["sub:\(uid)"] ?? table[uid]) as? [String: Any]
                        if let layer = entry?["layer"] as? String {
                            found.layers[uid] = layer
                            found.probes[uid] = (
                                entry?["layerProbesPassed"] as? Int ?? 0, entry?["layerProbesFailed"] as? Int ?? 0
                            )
                            break
                        }
                    }
                }
                return found.layers.count == uids.count ? found : nil
            }
        }

        /// `viewers` of the layer `rid` in a record's `layers` (or `totals.layers`).
        static func layerViewers(_ record: [String: Any], rid: String) -> Int? {
            let totals = record["totals"] as? [String: Any]
            let layers =
                (record["layers"] as? [[String: Any]])
                ?? (totals?["layers"] as? [[String: Any]])
                ?? ((totals?["media"] as? [String: Any])?["layers"] as? [[String: Any]])
                ?? []
            return layers.first { $0["rid"] as? String == rid }?["viewers"] as? Int
        }

        /// The viewers of layer 0 in a record (`topLayerViewers`, beside `layers`: the lower ones).
        static func topLayerViewers(_ record: [String: Any]) -> Int? {
            let totals = record["totals"] as? [String: Any]
            return
                (record["topLayerViewers"] ?? totals?["topLayerViewers"]
                ?? (totals?["media"] as? [String: Any])?["topLayerViewers"]) as? Int
        }

        /// What the bottleneck's summary says of a stretch of time between two CLOCK_MONOTONIC
        /// readings: the mean delivered and offered rates (kbit/s) of its 500 ms windows
        /// (`offered`, on its clock from `startMonotonic`) that lie wholly in it, and its drops
        /// in all (nil where it has no such windows).
        struct Link {
            var deliveredKbps: Double?
            /// Offered as the nftables rule counted it (IP bytes at the output hook).
            var offeredKbps: Double?
            var drops: Int?

            init(summary: [String: Any], from start: Double, to end: Double) {
                drops = summary["drops"] as? Int
                guard let origin = summary["startMonotonic"] as? Double,
                    let windows = summary["offered"] as? [[String: Any]]
                else { return }
                let inside = windows.filter {
                    guard let t = $0["t"] as? Double, let until = $0["end"] as? Double else { return false }
                    return origin + t >= start && origin + until <= end
                }
                func mean(_ key: String) -> Double? {
                    let values = inside.compactMap { $0[key] as? Double }
                    return values.isEmpty ? nil : values.reduce(0, +) / Double(values.count)
                }
                deliveredKbps = mean("deliveredKbps")
                offeredKbps = mean("offeredNftKbps")
            }
        }

        static func format(_ value: Double) -> String { String(format: "%.1f", value) }

        /// One line of what was measured: per viewer its rate, bitrate and longest gap, the
        /// layers the publisher reported, the bottleneck's offered and delivered rates and drops.
        static func summaryLine(
            fast: [ViewerRun],
            slow: ViewerRun,
            slowWindow: ClosedRange<Double>,
            layers: [DestinationLayers],
            records: [[String: Any]],
            link: Link
        ) -> String {
            func describe(_ run: ViewerRun, _ window: ClosedRange<Double>, _ what: String) -> String {
                "\(run.uid) \(format(run.framesPerSecond(window))) fps \(format(run.kilobitsPerSecond(window))) kbit/s "
                    + "gap \(format(run.largestGap(window))) s, \(format(run.largestGap(run.start...run.end))) s in all, "
                    + "full rate \(run.fullRateReached.map { "\(format($0 - run.start)) s" } ?? "never") after the first picture "
                    + "(\(what) \(format(window.lowerBound))–"
                    + "\(format(window.upperBound)) s; \(run.got.summary.video.frames) pictures, "
                    + "\(run.got.timecodes.outOfOrder) out of order, "
                    + "\(format(run.readableFraction(window) * 100)) % readable, "
                    + "\(run.got.summary.video.packetsLost ?? -1) packets lost\(run.got.summary.error.map { ", error: \($0)" } ?? ""))"
            }
            let receiving = slow.receivingWindow
            let viewers =
                fast.map { describe($0, $0.lastWindow(lastSeconds), "last") }
                + [
                    describe(slow, slowWindow, "settled") + ", \(format(slow.kilobitsPerSecond(receiving))) kbit/s "
                        + "(\(format(slow.kilobitsPerSecond(receiving, audio: true))) with audio) over "
                        + "\(format(receiving.lowerBound))–\(format(receiving.upperBound)) s"
                ]
            let final =
                layers.last.map { last in
                    last.layers.sorted { $0.key < $1.key }.map { uid, layer in
                        let probes =
                            last.probes[uid].map { " (up probes \($0.passed) passed, \($0.failed) failed)" } ?? ""
                        return "\(uid) \(layer)\(probes)"
                    }.joined(separator: ", ")
                } ?? "none reported"
            let lowViewers = records.compactMap { layerViewers($0, rid: "l") }.max()
            return viewers.joined(separator: "; ")
                + "; layers \(final), l viewers \(lowViewers.map(String.init) ?? "none")"
                + "; bottleneck while the slow viewer received: offered \(link.offeredKbps.map(format) ?? "?") kbit/s, "
                + "delivered \(link.deliveredKbps.map(format) ?? "?") kbit/s; dropped \(link.drops.map(String.init) ?? "?") "
                + "packets in all"
        }
    }
}

/// One viewer's recording, and its rates over windows of its own clock (seconds since it started).
struct ViewerRun {
    let uid: String
    let got: WebRTCReceived
    let output: String
    /// When it connected (ICE and DTLS), decoded its first picture (else connected), and
    /// stopped receiving: `viewingSeconds` after the first picture, or when it ended.
    let connected: Double
    let start: Double
    let end: Double

    init(_ viewer: WebRTCSubscriber, viewingSeconds: Double) throws {
        got = try viewer.received()
        uid = got.summary.uid
        output = viewer.output
        let times = got.summary.times
        connected = times["connected"] ?? 0
        start = times["firstVideoFrame"] ?? connected
        end = max(start, min(start + viewingSeconds, times["end"] ?? start + viewingSeconds))
    }

    /// From `seconds` after it connected to the end: a first picture late is a freeze.
    func settledWindow(after seconds: Double) -> ClosedRange<Double> { min(connected + seconds, end)...end }

    /// From a second after it connected to the end.
    var receivingWindow: ClosedRange<Double> { min(connected + 1, end)...end }

    func lastWindow(_ seconds: Double) -> ClosedRange<Double> { max(start, end - seconds)...end }

    /// When it first decoded 25 pictures within one second (the full rate of 30 fps), if it did.
    var fullRateReached: Double? {
        let times = arrivals.filter { $0 >= start && $0 <= end }
        guard times.count >= 25 else { return nil }
        return (24..<times.count).first { times[$0] - times[$0 - 24] <= 1.0 }.map { times[$0 - 24] }
    }

    /// CLOCK_MONOTONIC of a time on this viewer's clock.
    func monotonic(_ t: Double) -> Double { (got.summary.monotonicStart ?? 0) + t }

    private var arrivals: [Double] { got.summary.video.frameTimes.map(\.arrival) }

    func framesPerSecond(_ window: ClosedRange<Double>) -> Double {
        guard window.upperBound > window.lowerBound else { return 0 }
        return Double(arrivals.filter { window.contains($0) }.count) / (window.upperBound - window.lowerBound)
    }

    /// The longest time without a new picture in the window, its ends included.
    func largestGap(_ window: ClosedRange<Double>) -> Double {
        let times = [window.lowerBound] + arrivals.filter { window.contains($0) } + [window.upperBound]
        return zip(times, times.dropFirst()).map { $1 - $0 }.max() ?? 0
    }

    /// The pictures decoded in the window whose timecode reads (a broken picture does not).
    func readableFraction(_ window: ClosedRange<Double>) -> Double {
        let inside = zip(arrivals, got.values).filter { window.contains($0.0) }
        guard !inside.isEmpty else { return 0 }
        return Double(inside.filter { $0.1 != nil }.count) / Double(inside.count)
    }

    /// RTP payload received over the whole seconds of the window, kbit/s: video (RTX too),
    /// and audio with it when `audio`.
    func kilobitsPerSecond(_ window: ClosedRange<Double>, audio: Bool = false) -> Double {
        let lists = [got.summary.video.payloadBytesBySecond] + (audio ? [got.summary.audio.payloadBytesBySecond] : [])
        let first = Int(window.lowerBound.rounded(.up))
        let last = Int(window.upperBound.rounded(.down))
        guard last > first else { return 0 }
        let bytes = lists.map { $0 ?? [] }.reduce(0) { sum, bySecond in
            sum + (first..<last).reduce(0) { $0 + (bySecond.indices.contains($1) ? bySecond[$1] : 0) }
        }
        return Double(bytes) * 8 / 1000 / Double(last - first)
    }
}

/// The same room with a browser behind the slow link: headless Chromium on the room page, alone
/// behind 400 kbit/s (everything the publisher's media ports send is shaped). Chromium sends
/// transport-wide feedback, so it starts on the layer the start rate carries (`f`) and moves
/// down on its delay-based estimate; after its first seconds it must watch `l` at 5 fps
/// without a freeze, every picture in order.
extension PublishEndToEndTests.SimulcastRoomTests {
    @Test func aBrowserBehindA400KbitLinkWatchesTheLowLayer() throws {
        let room = try ShapedRoom(
            purpose: "simulcast-chromium",
            schedule: "0:\(Self.capacityKbps)",
            seconds: 40,
            shaping: ["--queue-bytes", "25000"]
        )
        let publish = try room.startPublisher([
            "--no-preview", "--video", "test", "--size", "640x360", "--fps", "30", "--simulcast", "--duration",
            "40",
        ])
        // 15 s from its first picture, after the estimate found the link and it moved (10 s).
        let browser = try room.openViewer(.init(seconds: 15, warmup: 10, deadline: 60))
        #expect(browser.process.waitForExit(deadlineSeconds: 70), "\(browser.output)")
        publish.interrupt()
        #expect(publish.waitForExit(deadlineSeconds: 20), "\(publish.output)")
        room.shaper.interrupt()
        #expect(room.shaper.waitForExit(deadlineSeconds: 20), "\(room.shaper.output)")
        room.close()
        let summary = try browser.summary()
        #expect(summary.ok, "\(summary.error ?? "")\n\(browser.output)\n\(publish.output)")
        let tab = try #require(summary.tabs.first, "\(browser.output)")
        let fps = tab.frames.fps ?? 0
        let line =
            "\(tab.width)x\(tab.height) \(String(format: "%.1f", fps)) fps, freezes \(tab.frames.freezes) "
            + "(getStats \(tab.frames.statsFreezeCountInWindow ?? -1)), max gap \(tab.frames.maxGapMs ?? -1) ms, "
            + "overlay \(tab.overlay ?? "none")"
        print("simulcast room, Chromium behind \(Self.capacityKbps) kbit/s: \(line)")
        // `l`: the full picture at 5 fps, shown in the overlay; no gap the page calls a freeze.
        #expect(tab.width == 640 && tab.height == 360, "\(line)")
        #expect(tab.overlay?.contains("layer l (1 of 2)") == true, "\(line)")
        #expect((4.0...6.5).contains(fps), "\(line)")
        #expect(tab.frames.freezes == 0 && (tab.frames.maxGapMs ?? .infinity) <= 1000, "\(line)")
        #expect(tab.timecodes.inOrder && tab.timecodes.backwards == 0, "\(tab.timecodes)")
    }
}
