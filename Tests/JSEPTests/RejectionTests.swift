import Foundation
import JSEP
import SDP
import Testing

/// Offers we cannot serve, each made from a fixture by taking one thing away, and the exact
/// reason the subscriber reads in `subscribe-reject`.
@Suite("JSEP rejections")
struct RejectionTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let offer: String
        let code: JSEPError.Code
        let reason: String

        var testDescription: String { name }
    }

    static let sha1 = "sha-1 2F:9A:1D:33:00:8C:41:7E:55:C3:09:6B:AA:02:DE:91:7C:48:E5:10"
    static let gstreamerFingerprint =
        "sha-256 27:80:04:53:24:5D:9A:B4:5C:5C:35:BE:44:B1:28:E7:2C:61:44:E3:98:1E:CE:98:0D:E9:96:0B:98:1B:14:A2"

    static let cases: [Case] = [
        Case(
            name: "no fingerprint",
            offer: OfferFixtures.chromium.removing("a=fingerprint"),
            code: .noFingerprint,
            reason: "the offer has no a=fingerprint"
        ),
        Case(
            name: "no session-level fingerprint (Firefox)",
            offer: OfferFixtures.firefox.removing("a=fingerprint"),
            code: .noFingerprint,
            reason: "the offer has no a=fingerprint"
        ),
        Case(
            name: "only a sha-1 fingerprint",
            offer: OfferFixtures.gstreamer.replacing(gstreamerFingerprint, with: sha1),
            code: .noFingerprint,
            reason: "the offer has no a=fingerprint with sha-256, sha-384 or sha-512 (only sha-1)"
        ),
        Case(
            name: "no ice-pwd",
            offer: OfferFixtures.chromium.removing("a=ice-pwd"),
            code: .noICECredentials,
            reason: "the offer has no ICE credentials (no a=ice-pwd)"
        ),
        Case(
            name: "no ice-ufrag",
            offer: OfferFixtures.aiortc.removing("a=ice-ufrag"),
            code: .noICECredentials,
            reason: "the offer has no ICE credentials (no a=ice-ufrag)"
        ),
        Case(
            name: "no ICE credentials at all",
            offer: OfferFixtures.firefox.removing("a=ice-"),
            code: .noICECredentials,
            reason: "the offer has no ICE credentials (no a=ice-ufrag, no a=ice-pwd)"
        ),
        Case(
            name: "no BUNDLE group",
            offer: OfferFixtures.chromium.removing("a=group:BUNDLE"),
            code: .notBundleable,
            reason: "the offer is not BUNDLE-able: no a=group:BUNDLE"
        ),
        Case(
            name: "video outside the BUNDLE group",
            offer: OfferFixtures.chromium.replacing("a=group:BUNDLE 0 1", with: "a=group:BUNDLE 0"),
            code: .notBundleable,
            reason: "the offer is not BUNDLE-able: its video m-section (mid 1) is not in a=group:BUNDLE"
        ),
        Case(
            name: "no packetization-mode=1",
            offer: OfferFixtures.chromium.replacing("packetization-mode=1", with: "packetization-mode=0"),
            code: .noH264,
            reason: "the offer has no H.264 with packetization-mode=1 (its video m-section (mid 1) offers "
                + "VP8/90000, H264/90000, AV1/90000, VP9/90000)"
        ),
        Case(
            name: "no H.264 at all (VP8 only)",
            offer: OfferFixtures.aiortc.replacing("H264/90000", with: "VP9/90000"),
            code: .noH264,
            reason: "the offer has no H.264 with packetization-mode=1 (its video m-section (mid 0) offers "
                + "VP8/90000, VP9/90000)"
        ),
        Case(
            name: "only a level our stream exceeds",
            offer: OfferFixtures.gstreamer.replacing("profile-level-id=42e01f", with: "profile-level-id=42e015"),
            code: .h264ProfileMismatch,
            reason: "no H.264 profile-level-id the offer's video m-section (mid video0) lists (42e015) "
                + "accepts our 42e01f stream"
        ),
        Case(
            name: "only a profile that is not a superset of ours",
            offer: OfferFixtures.gstreamer.replacing("profile-level-id=42e01f", with: "profile-level-id=f4001f"),
            code: .h264ProfileMismatch,
            reason: "no H.264 profile-level-id the offer's video m-section (mid video0) lists (f4001f) "
                + "accepts our 42e01f stream"
        ),
        Case(
            name: "no Opus 48000/2",
            offer: OfferFixtures.chromium.replacing("a=rtpmap:111 opus/48000/2", with: "a=rtpmap:111 opus/48000/1"),
            code: .noOpus,
            reason: "the offer has no Opus 48000/2 (its audio m-section (mid 0) offers opus/48000/1, G722/8000, "
                + "PCMU/8000, PCMA/8000)"
        ),
        Case(
            name: "no rtcp-mux",
            offer: OfferFixtures.chromium.removing("a=rtcp-mux"),
            code: .noRTCPMux,
            reason: "the offer's video m-section (mid 1) has no a=rtcp-mux; we send RTCP only muxed (RFC 8858)"
        ),
        Case(
            name: "video that does not receive",
            offer: OfferFixtures.firefox.replacing("a=recvonly", with: "a=sendonly"),
            code: .noVideo,
            reason: "the offer's video m-section (mid 1) does not receive (a=sendonly)"
        ),
        Case(
            name: "video disabled with port 0",
            offer: OfferFixtures.gstreamer.replacing("m=video 9", with: "m=video 0"),
            code: .noVideo,
            reason: "the offer's video m-section (mid video0) is disabled (port 0)"
        ),
        Case(
            name: "not DTLS-SRTP",
            offer: OfferFixtures.gstreamer.replacing("UDP/TLS/RTP/SAVPF", with: "RTP/SAVPF"),
            code: .unsupportedTransport,
            reason: "the offer's video m-section (mid video0) uses 'RTP/SAVPF', not UDP/TLS/RTP/SAVPF (DTLS-SRTP)"
        ),
        Case(
            name: "no video m-section",
            offer: OfferFixtures.gstreamer.keepingSections([1])
                .replacingOccurrences(of: "BUNDLE video0 audio1", with: "BUNDLE audio1"),
            code: .noVideo,
            reason: "the offer has no video m-section"
        ),
        Case(
            name: "no audio m-section",
            offer: OfferFixtures.gstreamer.keepingSections([0])
                .replacingOccurrences(of: "BUNDLE video0 audio1", with: "BUNDLE video0"),
            code: .noAudio,
            reason: "the offer has no audio m-section"
        ),
        Case(
            name: "setup holdconn",
            offer: OfferFixtures.chromium.replacing("a=setup:actpass", with: "a=setup:holdconn"),
            code: .unsupportedSetup,
            reason: "the offer's a=setup is holdconn: it asks for no DTLS connection"
        ),
        Case(
            name: "no setup",
            offer: OfferFixtures.aiortc.removing("a=setup"),
            code: .unsupportedSetup,
            reason: "the offer has no a=setup, so no DTLS role can be agreed (RFC 8842)"
        ),
    ]

    @Test("each missing piece gives its reason", arguments: cases)
    func rejection(_ rejection: Case) throws {
        let offer = try WebRTCOffer(parsing: rejection.offer)
        let error = #expect(throws: JSEPError.self) {
            try WebRTCAnswer(answering: offer, configuration: Publisher.configuration())
        }
        #expect(error?.code == rejection.code)
        #expect(error?.reason == rejection.reason)
        #expect(error?.line == nil)
    }

    @Test("a rejected offer's first video section does not stop a later one from being used")
    func laterVideoSection() throws {
        // The namespace fixture's second video section (mid 2) also offers H.264 42001f.
        let text = OfferFixtures.chromiumNoCandidates.replacing(
            "a=fmtp:108 level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42001f\r\na=rtpmap:109 rtx/90000\r\na=fmtp:109 apt=108\r\na=rtpmap:35",
            with:
                "a=fmtp:108 level-asymmetry-allowed=1;packetization-mode=0;profile-level-id=42001f\r\na=rtpmap:109 rtx/90000\r\na=fmtp:109 apt=108\r\na=rtpmap:35"
        ).replacing("profile-level-id=42e01f", with: "profile-level-id=42e00a")
        let answer = try WebRTCAnswer(answering: WebRTCOffer(parsing: text), configuration: Publisher.configuration())
        #expect(answer.video?.mid == "2")
        #expect(answer.video?.payloadType == 108)
        #expect(answer.video?.feedback == [.nack])
        #expect(answer.rejectedSections.first?.mid == "0")
        #expect(answer.rejectedSections.first?.reason.hasPrefix("no H.264 profile-level-id") == true)
    }

    @Test("our own unusable inputs are reported as ours")
    func invalidConfiguration() throws {
        let offer = try WebRTCOffer(parsing: OfferFixtures.chromium.text)
        var sameSSRC = try Publisher.configuration()
        sameSSRC.audio?.ssrc = 0x1111_1111
        var badTrack = try Publisher.configuration()
        badTrack.video?.trackID = "screen video"
        var sha1 = try Publisher.configuration()
        sha1.fingerprint = try CertificateFingerprint(attributeValue: Self.sha1)
        var nothing = try Publisher.configuration()
        nothing.video = nil
        nothing.audio = nil
        for (configuration, reason) in [
            (sameSSRC, "our SSRCs must all differ (RFC 3550 section 8)"),
            (badTrack, "msid id 'screen video' is not 1 to 64 token characters (RFC 8830 section 2)"),
            (sha1, "our fingerprint must be sha-256, the hash every WebRTC peer checks (RFC 8827 section 6.5)"),
            (nothing, "the configuration sends neither video nor audio"),
        ] {
            let error = #expect(throws: JSEPError.self) {
                try WebRTCAnswer(answering: offer, configuration: configuration)
            }
            #expect(error?.code == .invalidConfiguration)
            #expect(error?.reason == reason)
        }
        #expect(throws: SDPError.self) { try ICECredentials(ufrag: "abc", password: "publisherPassword0123456") }
        #expect(throws: SDPError.self) { try ICECredentials(ufrag: "abcd", password: "short") }
    }
}

extension OfferFixtures.Fixture {
    /// The session part and only the m-sections at `indices` (0-based).
    func keepingSections(_ indices: Set<Int>) -> String {
        var kept: [Substring] = []
        var section = -1
        for line in text.split(separator: "\r\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("m=") { section += 1 }
            if section < 0 || indices.contains(section) { kept.append(line) }
        }
        return kept.joined(separator: "\r\n")
    }
}
