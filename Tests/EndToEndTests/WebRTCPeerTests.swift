import Foundation
import JSEP
import TestSupport
import Testing

/// The real WebRTC subscriber peers (Tests/Peers: aiortc, GStreamer webrtcbin) before any
/// publisher answers them: what can be checked with the real rtc-signal alone. Each peer joins
/// the room, makes its real offer (ICE gathered on 127.0.0.1, DTLS fingerprint, BUNDLE), sends it
/// in a `subscribe` to a publisher who is not there, reports the server's error and leaves. The
/// offer it wrote must be one our JSEP module answers.
@Suite(.serialized) struct WebRTCPeerTests {
    @Test(arguments: WebRTCSubscriber.Peer.allCases)
    func subscribingToAMissingPublisherEndsWithTheServersError(peer: WebRTCSubscriber.Peer) throws {
        let directory = try TemporaryDirectory()
        let (signal, port) = try startRoomServer(in: directory)
        let uid = "bob_sub"
        let subscriber = try WebRTCSubscriber(
            peer,
            signalPort: port,
            room: "123456",
            uid: uid,
            publisher: "nobody_sub",
            options: .init(seconds: 1, expectReject: true, deadline: 40),
            directory: directory
        )
        #expect(subscriber.waitForExit(deadlineSeconds: 60), "\(peer) did not end:\n\(subscriber.output)")
        #expect(subscriber.exitStatus == 0, "\(peer):\n\(subscriber.output)")
        let got = try subscriber.received()
        let rejected = try #require(got.summary.rejected, "\(peer) got no error:\n\(subscriber.output)")
        // The server's own words, printed by the peer: a subscribe with an offer is well formed,
        // and the uid is not in the room.
        #expect(rejected.code == "no-such-member", "\(peer): \(rejected)")
        #expect(subscriber.output.contains("rejected: \(rejected.code): \(rejected.message)"), "\(subscriber.output)")
        #expect(got.summary.ok && got.summary.error == nil, "\(got)")
        #expect(got.summary.uid == uid && got.summary.times["joined"] != nil, "\(got)")
        // It joined and left cleanly (a leave, not a dropped connection).
        try signal.waitUntil(deadlineSeconds: 5, "\(uid) left") {
            signal.output.contains("reason=left room=123456 uid=\(uid)")
        }
        #expect(signal.output.contains("role=subscriber room=123456 uid=\(uid) [SignalingServer] join"))

        // The offer: complete (non-trickle) and on loopback, and one our publisher can answer.
        let text = try #require(got.offer, "\(peer) wrote no offer.sdp")
        let offer = try WebRTCOffer(parsing: text)
        let bundled = try #require(offer.bundleGroup?.mids, "\(peer): no BUNDLE group:\n\(text)")
        let tagged = try #require(offer.section(mid: bundled.first ?? ""), "\(peer): no bundle-tagged section")
        #expect(Set(offer.sections.map(\.kind)) == [.video, .audio], "\(peer):\n\(text)")
        #expect(offer.sections.allSatisfy { $0.direction == .recvonly && $0.media.rtcpMux }, "\(peer):\n\(text)")
        #expect(tagged.setup == .actpass && !tagged.fingerprints.isEmpty, "\(peer):\n\(text)")
        #expect(tagged.endOfCandidates, "\(peer): the offer does not say its candidates are complete:\n\(text)")
        let hosts = offer.sections.flatMap(\.candidates).map(\.attribute)
        #expect(!hosts.isEmpty, "\(peer): no candidates:\n\(text)")
        #expect(hosts.allSatisfy { $0.contains(" 127.0.0.1 ") && $0.contains("typ host") }, "\(hosts)")
        let answer = try WebRTCAnswer(
            answering: offer,
            configuration: .init(
                ice: .random(),
                fingerprint: try CertificateFingerprint(attributeValue: "sha-256 " + Self.digest),
                cname: "peer-test",
                streamID: "screen",
                video: .init(ssrc: 0x1234_5678, trackID: "screen-video"),
                audio: .init(ssrc: 0x2345_6789, trackID: "screen-audio")
            )
        )
        #expect(answer.video != nil && answer.audio != nil, "\(peer): \(answer.rejectedSections)")
        print("\(peer): \(got); offer \(text.utf8.count) bytes, \(hosts.count) candidate(s), answered")
    }

    /// Any sha-256 digest: the answer is only built, never used for DTLS.
    static let digest = (0..<32).map { String(format: "%02X", $0 * 7 % 256) }.joined(separator: ":")
}
