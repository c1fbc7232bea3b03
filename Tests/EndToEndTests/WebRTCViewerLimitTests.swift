import Foundation
import TestSupport
import Testing

/// What an abuse campaign found a WebRTC viewer could hold: an ICE agent (a thread, sockets) for
/// 30 s per offer whose answer went nowhere, and any number of them. The real rtc-publish and
/// rtc-signal on loopback, with subscribers that send offers and then do nothing (or only check).
extension PublishEndToEndTests {
    /// The `a=NAME:` value of the first such line in `sdp`.
    static func sdpValue(_ name: String, in sdp: String) -> String? {
        sdp.split(separator: "\r\n").first { $0.hasPrefix("a=\(name):") }.map { String($0.dropFirst(name.count + 3)) }
    }

    /// `--max-viewers 1`: while one viewer is held (answered, ICE checking), a second is refused
    /// with `subscribe-reject` naming the cap, on stderr too. The held viewer never sends a
    /// connectivity check, so it ends with `webrtc-ended` about 10 s after its answer (not 30 s),
    /// and then the second one is served.
    @Test func aViewerThatNeverChecksEndsIn10SecondsAndTheCapRefusesOneMore() throws {
        let directory = try TemporaryDirectory()
        let (signal, publish, port) = try Self.webRTCRoom(
            directory,
            seconds: 40,
            arguments: ["--max-viewers", "1"],
            separateErrors: true
        )
        let nowhere = try LoopbackUDPSocket()
        #expect(nowhere.bind(port: 0))
        let held = try HeldSubscriber(port: port, uid: "lost_sub")
        let heldReply = try held.subscribe(offer: Self.offerGoingNowhere(candidatePort: nowhere.boundPort))
        let answered = Date()
        #expect(heldReply == "answered", "\(heldReply)\n\(publish.everything)")

        let second = try HeldSubscriber(port: port, uid: "second_sub")
        let refused = try second.subscribe(
            offer: Self.offerGoingNowhere(candidatePort: nowhere.boundPort, ufrag: "Zz9c")
        )
        #expect(refused.hasPrefix("subscribe-rejected: "), "\(refused)")
        #expect(refused.contains("the publisher serves its most viewers (1)"), "\(refused)")
        try publish.waitUntil(deadlineSeconds: 5, "the refusal on stderr") {
            publish.errors.contains("subscriber second_sub refused: the publisher serves its most viewers (1)")
        }

        let ended = try held.webRTCEnded(withinSeconds: 25)
        let after = Date().timeIntervalSince(answered)
        let reason = ended["reason"] as? String ?? ""
        #expect(reason.contains("no ICE connectivity check"), "\(ended)")
        #expect(after >= 9 && after <= 14, "ended \(after) s after the answer (10 s expected): \(ended)")
        #expect(publish.errors.contains("WebRTC subscriber lost_sub removed: no ICE connectivity check"))

        // The held one is gone: the second is served now.
        let again = try second.subscribe(offer: Self.offerGoingNowhere(candidatePort: nowhere.boundPort), id: 11)
        #expect(again == "answered", "\(again)\n\(publish.everything)")
        publish.interrupt()
        #expect(publish.waitForExit(deadlineSeconds: 20) && publish.exitStatus == 0, "\(publish.everything)")
        signal.interrupt()
        print("never checked: webrtc-ended \(String(format: "%.1f", after)) s after the answer: \(reason)")
    }

    /// A viewer whose connectivity checks began (Tests/Peers/ice_checker.py: checks that never
    /// complete) keeps the whole 30 s connect timeout: it is still there after 15 s, and ends by
    /// the connect timeout, not the first-check one.
    @Test func aViewerWhoseChecksBeganKeepsTheConnectTimeout() throws {
        let directory = try TemporaryDirectory()
        let (signal, publish, port) = try Self.webRTCRoom(directory, seconds: 50, separateErrors: true)
        let nowhere = try LoopbackUDPSocket()
        #expect(nowhere.bind(port: 0))
        let viewer = try HeldSubscriber(port: port, uid: "slow_sub")
        let reply = try viewer.subscribe(offer: Self.offerGoingNowhere(candidatePort: nowhere.boundPort))
        let answered = Date()
        #expect(reply == "answered", "\(reply)\n\(publish.everything)")
        let answer = try #require(viewer.answer)
        let mediaPort = try #require(Self.answeredPort(answer), "\(answer)")
        let ufrag = try #require(Self.sdpValue("ice-ufrag", in: answer))
        let password = try #require(Self.sdpValue("ice-pwd", in: answer))
        let checker = try BackgroundProcess(
            "/usr/bin/python3",
            [
                WebRTCSubscriber.repositoryRoot + "/Tests/Peers/ice_checker.py", "--port", "\(mediaPort)",
                "--ufrag", ufrag, "--pwd", password, "--local-ufrag", "Xq3b", "--seconds", "40",
            ],
            directory: directory,
            name: "ice_checker"
        )
        try checker.waitUntil(deadlineSeconds: 10, "checking") { checker.output.contains("\"checking\"") }

        // Past the 10 s a viewer that never checked gets: still there.
        let early = try? viewer.webRTCEnded(withinSeconds: 15)
        #expect(early == nil, "ended \(Date().timeIntervalSince(answered)) s after the answer: \(early ?? [:])")
        let ended = try viewer.webRTCEnded(withinSeconds: 25)
        let after = Date().timeIntervalSince(answered)
        let reason = ended["reason"] as? String ?? ""
        #expect(reason.contains("ICE did not connect within 30"), "\(ended)")
        #expect(after >= 28 && after <= 36, "ended \(after) s after the answer (30 s expected)")
        let stats = try Self.finalWebRTCViewer(directory, uid: "slow_sub")
        #expect(stats["peerChecksReceived"] as? Bool == true, "\(stats)")
        checker.interrupt()
        publish.interrupt()
        #expect(publish.waitForExit(deadlineSeconds: 20) && publish.exitStatus == 0, "\(publish.everything)")
        signal.interrupt()
        print("checks began: webrtc-ended \(String(format: "%.1f", after)) s after the answer: \(reason)")
    }
}
