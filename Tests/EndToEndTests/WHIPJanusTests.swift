import Foundation
import TestSupport
import Testing

/// Issue 19: rtc-publish publishes over WHIP (RFC 9725) into a real Janus 1.1.2 VideoRoom behind
/// Meetecho's simple-whip-server, and a second Janus gets the stream through a cascade. An aiortc
/// subscriber (Tests/Peers/janus/janus_subscriber.py) on either Janus decodes the synthetic
/// screen and its Opus. Everything runs in the network namespace of one shared `JanusRoom`
/// (127.0.0.1 and 127.0.0.2 only), started by the first test and stopped after the last.
///
/// Nested in the serialized end-to-end suite: each test streams in real time and should have the
/// machine's cores to itself.
extension PublishEndToEndTests {
    @Suite(.serialized, JanusRoomScope()) struct WHIPJanusTests {
        static let fps = 30.0

        /// rtc-publish into a WHIP endpoint of its own (created now) of the shared room, inside
        /// the room's namespace, gathering ICE on its address; `--stats-json` in `directory`.
        static func publish(
            into room: JanusRoom,
            seconds: Int,
            arguments: [String] = [],
            directory: TemporaryDirectory
        ) throws -> (publish: BackgroundProcess, endpoint: JanusRoom.WHIPEndpoint) {
            let endpoint = try room.newWHIPEndpoint()
            let publish = try BackgroundProcess(
                try builtProgram("rtc-publish"),
                [
                    "--room", "whip", "--uid", "alice_sub", "--no-signal", "--no-preview", "--whip", endpoint.url,
                    "--ice-address", room.iceAddress, "--video", "test", "--size", "\(width)x\(height)", "--fps", "30",
                    "--duration", "\(seconds)", "--stats-json", "stats.jsonl",
                ] + arguments,
                directory: directory,
                launcher: room.launcher
            )
            return (publish, endpoint)
        }

        /// The shared room, once no publisher of an earlier test is left in it (A, or B through
        /// the cascade): a subscriber must find this test's publisher, not a leftover.
        static func emptyRoom() async throws -> JanusRoom {
            let room = try await JanusRoom.shared()
            let (took, left) = try await room.waitUntilNoPublisher(seconds: 15)
            guard took != nil else { throw InteropFailure("publishers of an earlier test are still there: \(left)") }
            return room
        }

        /// The `whip` object of every `--stats-json` line, in order.
        static func whipStats(_ directory: TemporaryDirectory) -> [[String: Any]] {
            let text = (try? String(contentsOfFile: directory.path + "/stats.jsonl", encoding: .utf8)) ?? ""
            return text.split(separator: "\n").compactMap { line in
                let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                // Where rtc-publish puts it: in `totals` (or at the top, as the CLI spec has it).
                return object?["whip"] as? [String: Any] ?? (object?["totals"] as? [String: Any])?["whip"]
                    as? [String: Any]
            }
        }

        /// What a subscriber on a clean path must have seen: H.264 and Opus offered, 640x360
        /// pictures at 30 fps ± 10 % for its whole window (at least 95 % of the frames the window
        /// holds), every picture's timecode readable and in order, no freeze, Opus decoded
        /// for the window.
        static func expectScreenDecoded(
            _ got: JanusRoom.Summary,
            label: String,
            minimumShare: Double = 0.95,
            sourceLocation: SourceLocation = #_sourceLocation
        ) {
            #expect(got.ok, "\(label): \(got)\n\(got.log)", sourceLocation: sourceLocation)
            #expect(
                got.codecs.contains("H264/90000") && got.codecs.contains("opus/48000/2"),
                "\(label): Janus offered \(got.codecs)",
                sourceLocation: sourceLocation
            )
            #expect(
                got.video.sizes == ["\(width)x\(height)"],
                "\(label): sizes \(got.video.sizes)",
                sourceLocation: sourceLocation
            )
            let expected = fps * got.window
            #expect(
                Double(got.video.frames) >= minimumShare * expected,
                "\(label): decoded \(got.video.frames) frames, \(String(format: "%.0f", expected)) expected in \(got.window) s at 30 fps: \(got)",
                sourceLocation: sourceLocation
            )
            for (what, rate) in [("frames over the window", got.video.fps), ("by RTP time", got.video.fpsRTP)] {
                #expect(
                    (27...33).contains(rate ?? 0),
                    "\(label): \(rate ?? 0) fps \(what), 30 ± 10 % expected: \(got)",
                    sourceLocation: sourceLocation
                )
            }
            let timecodes = got.video.timecodes
            #expect(
                Double(timecodes.readable) >= minimumShare * Double(timecodes.pictures) && timecodes.pictures > 0,
                "\(label): \(timecodes)",
                sourceLocation: sourceLocation
            )
            #expect(timecodes.inOrder, "\(label): \(timecodes)", sourceLocation: sourceLocation)
            #expect(
                got.video.largestGap <= 1,
                "\(label): a \(got.video.largestGap) s freeze: \(got)",
                sourceLocation: sourceLocation
            )
            #expect(
                got.audio.frames > 0 && got.audio.seconds >= 0.9 * got.window,
                "\(label): Opus \(got.audio.frames) frames, \(got.audio.seconds) s decoded in a \(got.window) s window",
                sourceLocation: sourceLocation
            )
        }

        /// (a) 12 s into Janus A: a subscriber there decodes the screen and the Opus.
        @Test func aSubscriberOnJanusADecodesTheScreen() async throws {
            let room = try await Self.emptyRoom()
            let directory = try TemporaryDirectory()
            let (publish, endpoint) = try Self.publish(into: room, seconds: 12, directory: directory)
            let got = try await room.subscribe(on: .a, seconds: 8, waitPublisher: 10)
            #expect(publish.waitForExit(deadlineSeconds: 30), "\(publish.output)")
            #expect(publish.exitStatus == 0, "\(publish.output)")
            Self.expectScreenDecoded(got, label: "aiortc on Janus A")
            let whip = Self.whipStats(directory)
            #expect(whip.contains { $0["state"] as? String == "live" }, "never live: \(whip)")
            #expect(whip.last?["attempts"] as? Int == 1, "one POST on a clean path: \(whip.last ?? [:])")
            #expect(whip.last?["state"] as? String == "stopped", "\(whip.last ?? [:])")
            // Janus' REMB (the room's `bitrate`, 2.5 Mbit/s) reached us and is the cap shown.
            #expect(
                whip.contains { $0["bitrateCapKbps"] as? Int == 2500 },
                "no REMB cap of 2500 kbit/s: \(whip.compactMap { $0["bitrateCapKbps"] })"
            )
            print("whip into Janus A (\(endpoint.id)): \(got)")
        }

        /// (b) The same stream on Janus B, which gets it from A through the cascade (plain RTP).
        @Test func aSubscriberOnJanusBDecodesTheScreenThroughTheCascade() async throws {
            let room = try await Self.emptyRoom()
            let directory = try TemporaryDirectory()
            let (publish, endpoint) = try Self.publish(into: room, seconds: 12, directory: directory)
            let got = try await room.subscribe(on: .b, seconds: 8, waitPublisher: 10)
            #expect(publish.waitForExit(deadlineSeconds: 30), "\(publish.output)")
            #expect(publish.exitStatus == 0, "\(publish.output)")
            Self.expectScreenDecoded(got, label: "aiortc on Janus B (cascade)")
            #expect(room.output.contains(#""event": "cascaded""#), "\(room.output)")
            print("whip into Janus A (\(endpoint.id)), cascaded to B: \(got)")
        }

        /// (c) 3 % of the publisher's video sends to Janus A dropped at random (nftables on that
        /// leg only). Janus NACKs the gaps, rtc-publish retransmits, Janus forwards the repairs:
        /// the subscriber on A sees at least 90 % of the dropped sends come back (a sequence gap
        /// that never fills is one unrepaired drop). A PLI 6 s into its window is answered by a
        /// key frame within 2 s (rtc-publish's own key-frame interval is a minute here).
        ///
        /// nftables counts sends: rtc-publish hands a picture's packets to the kernel in one UDP
        /// GSO send, so 3 % of sends is about one a second, each taking a few packets (they come
        /// back late, in the media stream: Janus forwards retransmissions as ordinary packets).
        /// 20 s of receiving make about 20 drops decide the 90 % rule.
        @Test func lossOnThePublisherLegIsRepairedAndAPLIBringsAKeyFrame() async throws {
            let room = try await Self.emptyRoom()
            let directory = try TemporaryDirectory()
            let (publish, endpoint) = try Self.publish(
                into: room,
                seconds: 30,
                arguments: ["--keyint", "1800"],
                directory: directory
            )
            // Loss from the moment Janus has the publisher: not on the WHIP, ICE and DTLS setup.
            try await room.waitForPublisher(on: .a, seconds: 15)
            try room.setLoss(percent: 3)
            let got: JanusRoom.Summary
            let dropped: Int
            do {
                got = try await room.subscribe(on: .a, seconds: 20, pliAt: 6, waitPublisher: 5)
                dropped = try room.droppedPackets()
                try room.removeLoss()
            } catch {
                try? room.removeLoss()
                throw error
            }
            #expect(publish.waitForExit(deadlineSeconds: 30), "\(publish.output)")
            #expect(publish.exitStatus == 0, "\(publish.output)")

            #expect(got.ok, "\(got)\n\(got.log)")
            let sequence = try #require(got.video.sequence, "no video sequence numbers: \(got)")
            #expect(dropped >= 5, "nftables dropped only \(dropped) sends to Janus A: \(got)")
            let repaired = dropped - sequence.gaps
            #expect(
                Double(repaired) >= 0.9 * Double(dropped),
                "repaired \(repaired) of \(dropped) dropped sends: \(sequence.gaps) gaps never filled (\(sequence.missing) packets: \(sequence.unrepaired)), \(sequence.late) packets came late, \(sequence.rtx) in RTX"
            )
            // The PLI reached rtc-publish through Janus and a key frame came back.
            let pli = try #require(got.pli, "no PLI record: \(got)")
            #expect(pli.sent, "PLI not sent: \(pli.detail ?? "-")")
            let after = pli.keyFrameAfterMs
            #expect(after != nil, "no key frame after the PLI at \(pli.t ?? -1) s: \(got.video.keyFrames.map(\.t))")
            #expect((after ?? .infinity) <= 2000, "key frame \(after ?? -1) ms after the PLI")
            // The screen still decodes, in order. A packet lost for good (its RTX dropped too,
            // as the rule drops any datagram) leaves a hole aiortc's jitter buffer waits 128
            // packets on, then resets: one picture out of order per such hole is aiortc's, not
            // the stream's (seen once: 1 hole, a 4.7 s stall, 1 picture out of order).
            let timecodes = got.video.timecodes
            // Each such hole can cost up to 5 s of that stall (4.7 s seen; 3.4 s another time).
            let stalled = min(got.window, 5 * Double(sequence.gaps))
            #expect(Double(got.video.frames) >= 0.9 * Self.fps * (got.window - stalled), "\(got)")
            #expect(timecodes.repeated == 0, "\(timecodes)")
            #expect(timecodes.outOfOrder <= sequence.gaps, "\(timecodes); \(sequence.gaps) holes never filled")
            #expect(Double(timecodes.readable) >= 0.95 * Double(timecodes.pictures), "\(timecodes)")
            print(
                "whip loss (\(endpoint.id)): nftables dropped \(dropped) sends, \(repaired) repaired "
                    + "(\(String(format: "%.1f", 100 * Double(repaired) / Double(max(dropped, 1)))) %); "
                    + "key frame \(after ?? -1) ms after the PLI; \(got)"
            )
        }

        /// (e) The publisher's path to Janus A goes dead (nftables drops every datagram of its ICE
        /// socket, both ways): consent checks fail, rtc-publish restarts ICE over PATCH (RFC 9725
        /// §4.3.2, `If-Match: "*"`, simple-whip-server restarts Janus' side) instead of a new POST;
        /// once the path is back ICE reconnects with DTLS and SRTP kept, Janus still has the same
        /// publisher (feed id), and the subscriber that stayed on it sees the screen again, in
        /// order, without subscribing anew.
        @Test func aDeadPathIsRecoveredByAnICERestartOverPATCH() async throws {
            let room = try await Self.emptyRoom()
            let directory = try TemporaryDirectory()
            let (publish, endpoint) = try Self.publish(into: room, seconds: 40, directory: directory)
            let before = try await room.waitForPublisher(on: .a, seconds: 15)
            let watching = Task { try await room.subscribe(on: .a, seconds: 30, waitPublisher: 5) }
            try await Task.sleep(for: .seconds(6))
            let path = try #require(Self.whipStats(directory).last?["path"] as? String, "no path in the stats")
            // "127.0.0.2:PORT host -> …": our end of the selected pair.
            let port = try #require(
                path.split(separator: " ").first?.split(separator: ":").last.flatMap { Int($0) },
                "no port in '\(path)'"
            )
            try room.blackHole(port: port)
            var restarted = false
            for _ in 0..<30 where !restarted {
                try await Task.sleep(for: .seconds(1))
                restarted = (Self.whipStats(directory).last?["iceRestarts"] as? Int ?? 0) > 0
            }
            try await Task.sleep(for: .seconds(1))
            try room.removeLoss()
            #expect(
                restarted,
                "no ICE restart within 30 s of the path going dead: \(Self.whipStats(directory).last ?? [:])"
            )
            let got = try await watching.value
            let after = try room.publishers(on: .a)
            #expect(publish.waitForExit(deadlineSeconds: 40), "\(publish.output)")
            #expect(publish.exitStatus == 0, "\(publish.output)")

            let whip = Self.whipStats(directory)
            let states = whip.compactMap { $0["state"] as? String }
            #expect(states.contains("ice-restart"), "\(states)")
            let restartIndex = states.firstIndex(of: "ice-restart") ?? states.endIndex
            #expect(states[restartIndex...].contains("live"), "never live again after the restart: \(states)")
            let errors = Set(whip.compactMap { $0["lastError"] as? String })
            #expect(
                whip.last?["attempts"] as? Int == 1,
                "a new POST instead of a restart: \(errors) \(whip.last ?? [:])"
            )
            // One restart, or a second when the first one's checks ran while the path was still
            // dead (the stats show the restart up to a second late): never a new session.
            #expect((1...3).contains(whip.last?["iceRestarts"] as? Int ?? 0), "\(whip.last ?? [:])")
            #expect(room.whipLog.contains("[\(endpoint.id)] Performing ICE restart"), "\(room.whipLog.suffix(2000))")
            #expect(
                after.map(\.id) == before.map(\.id),
                "Janus A's publisher changed from \(before) to \(after): the session was not kept"
            )
            // The viewer that stayed subscribed: a freeze while the path was dead, then the screen
            // again, in order (the timecodes of the pictures before and after the outage).
            #expect(got.ok, "\(got)\n\(got.log)")
            let timecodes = got.video.timecodes
            #expect(timecodes.inOrder, "\(timecodes)")
            #expect(got.video.largestGap < 25, "the screen never came back: \(got)")
            #expect(
                Double(got.video.frames) >= 0.4 * Self.fps * got.window,
                "\(got.video.frames) pictures in \(got.window) s: \(got)"
            )
            print(
                "whip ICE restart (\(endpoint.id)): states \(states.reduce(into: [String]()) { if $0.last != $1 { $0.append($1) } }); "
                    + "viewer: \(got.video.frames) pictures, largest gap \(got.video.largestGap) s"
            )
        }

        /// (d) SIGINT: rtc-publish DELETEs its WHIP resource and Janus's room has no publisher
        /// within 3 s; it exits normally, its last state `stopped`.
        /// (f) A still X11 screen (Docs/cadence.md): `rtc-publish --video x11` shares a private
        /// Xvfb where `rtc-testscreen` holds the synthetic screen's first picture, sends only its
        /// idle repeats once converged, and no IDR on a timer. A subscriber that joins Janus A
        /// then must see the picture within a second of its connection: Janus asks for a key
        /// frame (PLI/FIR) for it, and rtc-publish answers with an IDR of the still picture.
        @Test func aSubscriberJoiningAStillScreenSeesItWithinASecond() async throws {
            let room = try await Self.emptyRoom()
            let directory = try TemporaryDirectory()
            let xvfb = try XvfbServer(width: width, height: height)
            let (screen, _) = try ScreenCaptureEndToEndTests.testScreen(
                xvfb,
                ["--size", "\(width)x\(height)", "--hold", "60"],
                directory: directory
            )
            let endpoint = try room.newWHIPEndpoint()
            let publish = try BackgroundProcess(
                try builtProgram("rtc-publish"),
                [
                    "--room", "whip", "--uid", "alice_sub", "--no-signal", "--no-preview", "--whip", endpoint.url,
                    "--ice-address", room.iceAddress, "--video", "x11:\(xvfb.display)", "--size", "\(width)x\(height)",
                    "--duration", "30", "--stats-json", "stats.jsonl",
                ],
                directory: directory,
                launcher: room.launcher
            )
            // Still: converged and idle-repeating, before anyone watches.
            let statsPath = directory.path + "/stats.jsonl"
            try publish.waitUntil(deadlineSeconds: 20, "still") {
                let text = (try? String(contentsOfFile: statsPath, encoding: .utf8)) ?? ""
                return text.split(separator: "\n").last?.contains(#""cadence":"still""#) == true
            }
            let before = try PublisherTotals(statsFile: statsPath)
            let got = try await room.subscribe(on: .a, seconds: 3, waitPublisher: 5)
            publish.interrupt()
            #expect(publish.waitForExit(deadlineSeconds: 15), "\(publish.output)")
            screen.interrupt()
            let after = try PublisherTotals(statsFile: statsPath)
            #expect(got.ok, "\(got)\n\(got.log)")
            let connected = try #require(got.times["connected"], "\(got.times)")
            let firstFrame = try #require(got.times["firstVideoFrame"], "\(got.times)")
            #expect(firstFrame - connected <= 1, "first picture \(firstFrame - connected) s after connecting: \(got)")
            #expect(got.video.sizes == ["\(width)x\(height)"], "\(got.video.sizes)")
            // The still picture itself: the synthetic screen's frame 0, readable.
            #expect(got.video.timecodes.readable >= 1 && got.video.timecodes.first == 0, "\(got.video.timecodes)")
            // The IDR came for the join, not from a timer: before the subscriber, the first one
            // and the one Janus asks for when the publisher's connection is up (2 measured).
            #expect(before.keyFrames <= 2, "key frames before the subscriber: \(before.keyFrames)")
            #expect(
                after.keyFrames > before.keyFrames,
                "key frames: \(before.keyFrames) before, \(after.keyFrames) after"
            )
            print(
                "still screen, Janus subscriber: first picture \(String(format: "%.3f", firstFrame - connected)) s "
                    + "after connecting; key frames \(before.keyFrames) before, \(after.keyFrames) after; \(got)"
            )
        }

        @Test func stoppingThePublisherEmptiesTheRoom() async throws {
            let room = try await Self.emptyRoom()
            let directory = try TemporaryDirectory()
            let (publish, endpoint) = try Self.publish(into: room, seconds: 120, directory: directory)
            let before = try await room.waitForPublisher(on: .a, seconds: 15)
            try await Task.sleep(for: .seconds(2))
            publish.interrupt()
            let (took, left) = try await room.waitUntilNoPublisher(on: [.a], seconds: 3)
            #expect(took != nil, "Janus A still lists \(left) 3 s after SIGINT (before: \(before))\n\(publish.output)")
            #expect(publish.waitForExit(deadlineSeconds: 10), "\(publish.output)")
            #expect(publish.exitStatus == 0, "\(publish.output)")
            // simple-whip-server logs a DELETE of the resource as "Terminating WHIP session"
            // (Janus hanging up on its own would log "PeerConnection detected as closed").
            try await Task.sleep(for: .milliseconds(200))
            #expect(
                room.whipLog.contains("[\(endpoint.id)] Terminating WHIP session"),
                "no DELETE of \(endpoint.id) in simple-whip-server's log:\n\(room.whipLog.suffix(3000))"
            )
            let whip = Self.whipStats(directory)
            #expect(whip.last?["state"] as? String == "stopped", "\(whip.last ?? [:])")
            print(
                "whip stop (\(endpoint.id)): room empty \(String(format: "%.2f", took ?? -1)) s after SIGINT; last stats \(whip.last ?? [:])"
            )
        }
    }
}

/// Stops the shared `JanusRoom` when the suite it is attached to ends (the first test that needs
/// it starts it: `JanusRoom.shared()`).
struct JanusRoomScope: SuiteTrait, TestScoping {
    var isRecursive: Bool { false }

    func provideScope(
        for test: Test,
        testCase: Test.Case?,
        performing function: @Sendable () async throws -> Void
    ) async throws {
        do {
            try await function()
        } catch {
            await JanusRoom.stopShared()
            throw error
        }
        await JanusRoom.stopShared()
    }
}
