import Foundation
import TestSupport
import Testing

/// WebRTC viewers over paths that are not a clean loopback: relayed by a real TURN server
/// (coturn), and through a namespace whose nftables drop 3 % of the media at random.
extension PublishEndToEndTests {
    /// The publisher gathers and checks only its TURN relay (`--ice-transport-policy relay`):
    /// the answer offers one relayed candidate whose related address is hidden, ICE selects
    /// it, every media packet goes through libnice's TURN wrapping and coturn, and aiortc
    /// decodes the screen as on a direct path. Removing the viewer releases the allocation.
    @Test func aTURNOnlyPathThroughCoturnDeliversTheScreen() throws {
        let directory = try TemporaryDirectory()
        let turnPort = try freeTCPPort()
        let password = (0..<16).map { _ in String(Int.random(in: 0...9)) }.joined()
        let turn = try BackgroundProcess(
            try NetworkNamespace.program("turnserver"),
            [
                "-n", "--listening-ip=127.0.0.1", "--relay-ip=127.0.0.1", "--listening-port=\(turnPort)",
                "--lt-cred-mech", "--user=rtc:\(password)", "--realm=rtc.test", "--allow-loopback-peers",
                "--no-tls", "--no-dtls", "--no-cli", "--no-tcp-relay", "--log-file=stdout", "--verbose",
                "--pidfile=\(directory.path)/turnserver.pid", "--db=\(directory.path)/turndb",
            ],
            directory: directory
        )
        try turn.waitUntil(deadlineSeconds: 20, "listening") { turn.output.contains("UDP listener opened") }
        let (signal, publish, port) = try Self.webRTCRoom(
            directory,
            seconds: 16,
            arguments: ["--turn", "turn:rtc:\(password)@127.0.0.1:\(turnPort)", "--ice-transport-policy", "relay"]
        )
        let viewer = try Self.viewerOfAlice(
            port: port,
            options: .init(seconds: 7, deadline: 60),
            directory: directory
        )
        #expect(viewer.waitForExit(deadlineSeconds: 60), "\(viewer.output)")
        #expect(viewer.exitStatus == 0, "\(viewer.output)\n\(publish.output)")
        #expect(publish.waitForExit(deadlineSeconds: 30) && publish.exitStatus == 0, "\(publish.output)")
        signal.interrupt()
        let got = try viewer.received()
        let totals = try PublisherTotals(statsFile: directory.path + "/stats.jsonl")

        // One candidate, relayed, its related address hidden; nothing local in the answer.
        let answer = try #require(got.answer, "no answer:\n\(viewer.output)")
        let candidates = answer.split(separator: "\r\n").filter { $0.hasPrefix("a=candidate:") }
        #expect(candidates.count == 1, "\(answer)")
        let fields = candidates.first?.split(separator: " ") ?? []
        #expect(fields.count >= 12 && fields[7] == "relay", "\(answer)")
        #expect(candidates.first?.hasSuffix("raddr 0.0.0.0 rport 0") ?? false, "\(answer)")
        let relayPort = fields.count > 5 ? String(fields[5]) : "?"
        // ICE selected that relay; media flowed through it and the screen decoded.
        #expect(
            publish.output.contains("WebRTC subscriber bob_sub connected: 127.0.0.1:\(relayPort) relay -> "),
            "\(publish.output)"
        )
        Self.expectScreenDecoded(got, totals: totals, seconds: 7, label: "aiortc through TURN")
        // --stats-json shows the path and what came back through the relay: the viewer's SRTCP.
        let transport = try Self.finalWebRTCViewer(directory, uid: "bob_sub")
        #expect((transport["path"] as? String)?.contains(" relay -> ") ?? false, "\(transport)")
        #expect((transport["srtcpReceived"] as? Int ?? 0) > 0, "\(transport)")
        // coturn made the allocation for our user and saw it released (a zero-lifetime Refresh).
        #expect(turn.output.contains("username=<rtc>"), "\(turn.output)")
        #expect(turn.output.contains("lifetime=0"), "\(turn.output)")
        turn.interrupt()
        print("turn: relay port \(relayPort); \(got)")
    }

    /// Inside a namespace made for the test, nftables drops 3 % of the UDP sends longer than 300
    /// bytes (media and retransmissions; STUN, RTCP and audio are shorter) at random. It sees a
    /// segmented send (UDP GSO: a run of equal-size packets of one picture) as one datagram, so a
    /// drop takes one to a few packets: burstier than per-packet loss, at about the same rate.
    /// aiortc's NACKs are answered: at least 90 % of the lost video packets come back in RTX.
    /// Its PLI brings an IDR (the publisher's own key-frame interval is longer than the run).
    @Test func randomLossIsRepairedAndAPLIBringsAnIDR() throws {
        let namespace = try NetworkNamespace(purpose: "loss")
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
            seconds: 30,
            arguments: ["--keyint", "1800"],
            launcher: namespace.launcher
        )
        let viewer = try Self.viewerOfAlice(
            port: port,
            options: .init(seconds: 20, sendPLIAt: 6, deadline: 70),
            directory: directory,
            launcher: namespace.launcher
        )
        #expect(viewer.waitForExit(deadlineSeconds: 80), "\(viewer.output)")
        #expect(viewer.exitStatus == 0, "\(viewer.output)\n\(publish.output)")
        #expect(publish.waitForExit(deadlineSeconds: 30) && publish.exitStatus == 0, "\(publish.output)")
        signal.interrupt()
        let got = try viewer.received()
        let dropped = Self.counterPackets(try namespace.listRules(["table", "inet", "rtc_loss"]))

        // The loss happened, on the wire, and the retransmissions repaired it.
        let sequence = try #require(got.summary.video.sequence, "aiortc recorded no sequence numbers")
        let lossRate = Double(sequence.missing) / Double(max(sequence.received + sequence.missing, 1))
        #expect(dropped >= 5, "nftables dropped \(dropped) sends")
        #expect(sequence.missing >= 10 && lossRate >= 0.005, "\(sequence)")
        #expect(
            Double(sequence.repaired) >= 0.9 * Double(sequence.missing),
            "repaired \(sequence.repaired) of \(sequence.missing) lost: \(sequence)"
        )
        let feedback = try Self.finalFeedback(directory, destination: "sub:bob_sub")
        let nack = feedback["nack"] as? [String: Any] ?? [:]
        // Our retransmissions did the repairing: the counters as they stood when the viewer left
        // (`departedFeedback`) hold every resend it got. A resend can be dropped too and asked
        // again, so sent may exceed repaired, never fall short of it.
        #expect((nack["sent"] as? Int ?? 0) >= sequence.repaired, "\(feedback)")
        // The PLI brought a key frame; without it the next would be 60 s away.
        let pli = try #require(got.summary.pli.first { $0.sent }, "no PLI sent: \(got.summary.pli)")
        let answered = got.summary.video.keyFrames.first { $0.t > pli.t }
        #expect(answered != nil, "no key frame after the PLI at \(pli.t) s: \(got.summary.video.keyFrames)")
        #expect((answered?.t ?? .infinity) - pli.t <= 2, "key frame \(answered?.t ?? -1) s after PLI \(pli.t) s")
        // The screen still decodes whole and in order (a picture that lost a packet for good
        // may be skipped, never shown out of order).
        let timecodes = got.timecodes
        #expect(timecodes.pictures >= 420, "\(got)")
        #expect(timecodes.outOfOrder == 0 && timecodes.repeated == 0, "\(got)")
        // A packet lost for good (its retransmission dropped too, and aiortc asks once) damages
        // the pictures that reference it until the decoder recovers: 34 pictures for one such
        // packet in a CI run. So each unrepaired packet may cost up to 1.5 s of pictures; beyond
        // that, 95 % of the pictures must be readable.
        let unrepaired = sequence.missing - sequence.repaired
        #expect(
            Double(timecodes.readable + 45 * unrepaired) >= 0.95 * Double(timecodes.pictures),
            "\(unrepaired) packets never repaired: \(got)"
        )
        print(
            "loss: nftables dropped \(dropped) sends; video \(String(format: "%.1f", lossRate * 100)) % lost, missing \(sequence.missing), repaired \(sequence.repaired); "
                + "nack \(nack); PLI at \(pli.t) s, key frame at \(answered?.t ?? -1) s; \(got)"
        )
    }

    /// The packets of the first `counter packets N bytes M` in `nft list` output.
    static func counterPackets(_ listing: String) -> Int {
        guard let range = listing.range(of: "counter packets ") else { return 0 }
        return Int(listing[range.upperBound...].prefix { $0.isNumber }) ?? 0
    }
}

/// WHEP through rtc-signal: a WHEP player that is not our page (aiortc, standard-library HTTP)
/// POSTs its offer to the room server, which relays it as an ordinary WebRTC subscribe.
extension PublishEndToEndTests {
    @Test func aWHEPPlayerWatchesThroughTheRoomServer() throws {
        let directory = try TemporaryDirectory()
        let (signal, publish, port) = try Self.webRTCRoom(directory, seconds: 16)
        let endpoint = "http://127.0.0.1:\(port)/rooms/123456/whep/alice_sub"
        let viewer = try Self.viewerOfAlice(
            port: port,
            uid: "whep_player",
            options: .init(seconds: 7, deadline: 60, whep: endpoint),
            directory: directory
        )
        #expect(viewer.waitForExit(deadlineSeconds: 60), "\(viewer.output)")
        #expect(viewer.exitStatus == 0, "\(viewer.output)\n\(publish.output)")
        let got = try viewer.received()
        let whep = try #require(got.summary.whep, "no WHEP record: \(viewer.output)")
        #expect(whep.status == 201 && whep.contentType == "application/sdp", "\(whep)")
        let location = whep.location ?? ""
        #expect(location.hasPrefix("/rooms/123456/whep/alice_sub/sessions/") && location.count > 60, "\(whep)")
        #expect(whep.deleteStatus == 200, "\(whep)")
        // The DELETE made the WHEP member leave: the publisher removed its viewer.
        try publish.waitUntil(deadlineSeconds: 10, "the WHEP viewer removed") {
            publish.output.contains("subscriber whep_") && publish.output.contains("left")
        }
        #expect(publish.waitForExit(deadlineSeconds: 30) && publish.exitStatus == 0, "\(publish.output)")
        let totals = try PublisherTotals(statsFile: directory.path + "/stats.jsonl")
        Self.expectScreenDecoded(got, totals: totals, seconds: 7, label: "aiortc over WHEP")
        // A second DELETE of the same session: gone.
        let again = try RawWebClient(port: port).request("DELETE", location)
        #expect(again.status == 404, "\(again)")
        let metrics = try RawWebClient(port: port).request("GET", "/metrics").text
        #expect(metrics.contains(#"rtc_signal_connections_total{transport="whep"} 1"#), "\(metrics)")
        signal.interrupt()
        print("whep: \(whep); \(got)")
    }
}
