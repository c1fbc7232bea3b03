import Foundation
import JSEP
import SDP
import Testing

@Suite("JSEP answers")
struct AnswerTests {
    /// What each stack's offer must lead to.
    struct Expectation: Sendable, CustomTestStringConvertible {
        let fixture: OfferFixtures.Fixture
        let videoMid: String
        let videoPayloadType: UInt8
        let rtxPayloadType: UInt8
        let offeredProfile: String
        let videoFeedback: Set<RTCPFeedbackKind>
        let videoReducedSize: Bool
        let audioMid: String
        let audioPayloadType: UInt8
        let audioReducedSize: Bool
        let audioFeedback: Set<RTCPFeedbackKind>
        /// The offer's transport-wide cc id in each section, where we agree it.
        let videoTransportWideID: UInt8?
        let audioTransportWideID: UInt8?
        let bundle: [String]
        let rejectedMids: [String]
        let candidates: [String]
        let skippedCandidates: Int
        let endOfCandidates: Bool

        var testDescription: String { fixture.name }
    }

    static let allFeedback = Set(RTCPFeedbackKind.allCases)

    static let expectations = [
        Expectation(
            fixture: OfferFixtures.chromium,
            videoMid: "1",
            videoPayloadType: 102,
            rtxPayloadType: 103,
            offeredProfile: "42001f",
            videoFeedback: allFeedback,
            videoReducedSize: true,
            audioMid: "0",
            audioPayloadType: 111,
            audioReducedSize: true,
            audioFeedback: [.transportWideCongestionControl],
            videoTransportWideID: 3,
            audioTransportWideID: 3,
            bundle: ["0", "1"],
            rejectedMids: [],
            candidates: ["UDP 192.0.2.20:54400 host", "UDP 203.0.113.7:54400 srflx", "TCP 192.0.2.20:9 host"],
            skippedCandidates: 1,
            endOfCandidates: false
        ),
        Expectation(
            fixture: OfferFixtures.chromiumNoCandidates,
            videoMid: "0",
            videoPayloadType: 108,
            rtxPayloadType: 109,
            offeredProfile: "42001f",
            videoFeedback: allFeedback,
            videoReducedSize: true,
            audioMid: "1",
            audioPayloadType: 111,
            audioReducedSize: true,
            audioFeedback: [.transportWideCongestionControl],
            videoTransportWideID: 3,
            audioTransportWideID: 3,
            bundle: ["0", "1"],
            rejectedMids: ["2", "3"],
            candidates: [],
            skippedCandidates: 0,
            endOfCandidates: false
        ),
        Expectation(
            fixture: OfferFixtures.firefox,
            videoMid: "1",
            videoPayloadType: 126,
            rtxPayloadType: 127,
            offeredProfile: "42e01f",
            videoFeedback: allFeedback,
            videoReducedSize: true,
            audioMid: "0",
            audioPayloadType: 109,
            audioReducedSize: false,
            audioFeedback: [],
            videoTransportWideID: 7,
            audioTransportWideID: nil,
            bundle: ["0", "1"],
            rejectedMids: [],
            candidates: ["UDP 203.0.113.9:49770 srflx"],
            skippedCandidates: 2,
            endOfCandidates: true
        ),
        Expectation(
            fixture: OfferFixtures.aiortc,
            videoMid: "0",
            videoPayloadType: 99,
            rtxPayloadType: 100,
            offeredProfile: "42001f",
            videoFeedback: [.nack, .pictureLossIndication, .receiverEstimatedMaximumBitrate],
            videoReducedSize: false,
            audioMid: "1",
            audioPayloadType: 96,
            audioReducedSize: false,
            audioFeedback: [],
            videoTransportWideID: nil,
            audioTransportWideID: nil,
            bundle: ["0", "1"],
            rejectedMids: [],
            candidates: ["UDP 198.51.100.5:41234 host", "UDP 203.0.113.23:41234 srflx"],
            skippedCandidates: 0,
            endOfCandidates: true
        ),
        Expectation(
            fixture: OfferFixtures.gstreamer,
            videoMid: "video0",
            videoPayloadType: 96,
            rtxPayloadType: 97,
            offeredProfile: "42e01f",
            videoFeedback: [.nack, .pictureLossIndication, .fullIntraRequest, .transportWideCongestionControl],
            videoReducedSize: true,
            audioMid: "audio1",
            audioPayloadType: 98,
            audioReducedSize: true,
            audioFeedback: [.transportWideCongestionControl],
            videoTransportWideID: 1,
            audioTransportWideID: 1,
            bundle: ["video0", "audio1"],
            rejectedMids: [],
            candidates: ["UDP 198.51.100.7:48702 host", "TCP 198.51.100.7:9 host"],
            skippedCandidates: 0,
            endOfCandidates: false
        ),
    ]

    @Test("each stack's offer: payload types, RTX, feedback, rtcp-rsize, bundle, candidates", arguments: expectations)
    func negotiated(_ expected: Expectation) throws {
        let offer = try WebRTCOffer(parsing: expected.fixture.text)
        let answer = try WebRTCAnswer(answering: offer, configuration: Publisher.configuration())
        let video = try #require(answer.video)
        #expect(video.mid == expected.videoMid)
        #expect(video.payloadType == expected.videoPayloadType)
        #expect(video.retransmissionPayloadType == expected.rtxPayloadType)
        #expect(video.retransmissionSSRC == 0x2222_2222)
        #expect(video.offeredProfileLevelID?.description == expected.offeredProfile)
        // Our level (3.1) under the offered profile: RFC 6184 §8.2.2.
        #expect(video.answeredProfileLevelID?.description == expected.offeredProfile)
        #expect(video.feedback == expected.videoFeedback)
        #expect(video.rtcpReducedSize == expected.videoReducedSize)
        let audio = try #require(answer.audio)
        #expect(audio.mid == expected.audioMid)
        #expect(audio.payloadType == expected.audioPayloadType)
        #expect(audio.feedback == expected.audioFeedback)
        #expect(video.transportWideSequenceNumberID == expected.videoTransportWideID)
        #expect(audio.transportWideSequenceNumberID == expected.audioTransportWideID)
        #expect(audio.rtcpReducedSize == expected.audioReducedSize)
        #expect(answer.bundle.mids == expected.bundle)
        #expect(answer.rejectedSections.map(\.mid) == expected.rejectedMids)
        #expect(answer.localSetup == .active)
        #expect(answer.isDTLSClient)
        #expect(answer.remote.setup == .actpass)
        #expect(!answer.remote.fingerprints.isEmpty)
        #expect(
            answer.remote.candidates.map { "\($0.transport.rawValue) \($0.address):\($0.port) \($0.type.rawValue)" }
                == expected.candidates
        )
        #expect(answer.remote.skippedCandidates.count == expected.skippedCandidates)
        #expect(answer.remote.skippedCandidates.allSatisfy { $0.isMDNS })
        #expect(answer.remote.endOfCandidates == expected.endOfCandidates)
        #expect(!video.offeredHeaderExtensions.isEmpty)
    }

    @Test("every answer re-parses (strict and WebRTC) and keeps the invariants", arguments: OfferFixtures.all)
    func invariants(_ fixture: OfferFixtures.Fixture) throws {
        let offer = try WebRTCOffer(parsing: fixture.text)
        for configuration in [
            try Publisher.configuration(),
            try Publisher.configuration(rtx: false),
            try Publisher.configuration(audio: false),
            try Publisher.configuration(setup: .passive),
            try Publisher.configuration(candidates: [.host(try SDPAddress("192.0.2.50"), port: 50_000)]),
        ] {
            let answer = try WebRTCAnswer(answering: offer, configuration: configuration)
            #expect(AnswerInvariants.violations(of: answer, for: offer, configuration: configuration) == [])
        }
    }

    @Test("without RTX on our side, no RTX format, SSRC or FID group is answered")
    func withoutRTX() throws {
        let offer = try WebRTCOffer(parsing: OfferFixtures.chromium.text)
        let answer = try WebRTCAnswer(answering: offer, configuration: Publisher.configuration(rtx: false))
        #expect(answer.video?.retransmissionPayloadType == nil)
        #expect(answer.video?.retransmissionSSRC == nil)
        #expect(!answer.sdp.contains("rtx/90000"))
        #expect(!answer.sdp.contains("ssrc-group"))
    }

    @Test("an offer that says active or passive gets the complement; actpass gets our choice")
    func setupRoles() throws {
        for (offered, preferred, answered) in [
            ("actpass", ConnectionSetup.active, ConnectionSetup.active),
            ("actpass", .passive, .passive),
            ("active", .active, .passive),
            ("passive", .passive, .active),
        ] {
            let text = OfferFixtures.gstreamer.replacing("a=setup:actpass", with: "a=setup:\(offered)")
            let answer = try WebRTCAnswer(
                answering: WebRTCOffer(parsing: text),
                configuration: Publisher.configuration(setup: preferred)
            )
            #expect(answer.localSetup == answered, "offer \(offered), preferring \(preferred)")
            #expect(answer.sdp.contains("a=setup:\(answered.rawValue)\r\n"))
        }
    }

    @Test("our candidates go to the tagged section with end-of-candidates and set the default address")
    func ourCandidates() throws {
        let candidates = [
            ICECandidate.host(try SDPAddress("192.0.2.50"), port: 50_000),
            ICECandidate.host(try SDPAddress("2001:db8::50"), port: 50_000, foundation: "2"),
        ]
        let offer = try WebRTCOffer(parsing: OfferFixtures.chromium.text)
        let answer = try WebRTCAnswer(answering: offer, configuration: Publisher.configuration(candidates: candidates))
        let reparsed = try WebRTCOffer(parsing: answer.sdp)
        #expect(reparsed.sections[0].candidates == candidates)
        #expect(reparsed.sections[0].endOfCandidates)
        #expect(reparsed.sections[1].candidates.isEmpty)
        #expect(reparsed.sections.allSatisfy { $0.media.port == 50_000 })
        #expect(reparsed.sections.allSatisfy { $0.media.connection == (try? SDPAddress("192.0.2.50")) })
    }

    /// The whole answer to the Chromium fixture, written out by hand from the rules: audio
    /// (mid 0) and video (mid 1) in the offer's order; H.264 on 102 (42001f, the first
    /// packetization-mode=1 format our 42e01f stream satisfies) with its RTX 103; feedback in
    /// the offer's order, transport-cc included, for 102 only (none is offered for RTX);
    /// transport-cc for Opus; the transport-wide cc extension under Chromium's id 3 in both
    /// sections; rtcp-rsize because offered; msid-semantic because offered.
    @Test("the answer to the Chromium offer, line by line")
    func chromiumAnswerText() throws {
        let offer = try WebRTCOffer(parsing: OfferFixtures.chromium.text)
        let answer = try WebRTCAnswer(answering: offer, configuration: Publisher.configuration())
        let expected = [
            "v=0",
            "o=- 4242424242 1 IN IP4 127.0.0.1",
            "s=-",
            "t=0 0",
            "a=group:BUNDLE 0 1",
            "a=msid-semantic:WMS screen",
            "m=audio 9 UDP/TLS/RTP/SAVPF 111",
            "c=IN IP4 0.0.0.0",
            "a=rtpmap:111 opus/48000/2",
            "a=fmtp:111 minptime=10;sprop-stereo=1;stereo=1",
            "a=rtcp-fb:111 transport-cc",
            "a=mid:0",
            "a=sendonly",
            "a=rtcp-mux",
            "a=ssrc:858993459 cname:rtc-publisher-7",
            "a=ssrc:858993459 msid:screen screen-audio",
            "a=ice-ufrag:pUbL",
            "a=ice-pwd:publisherPassword0123456",
            "a=fingerprint:\(Publisher.fingerprint)",
            "a=setup:active",
            "a=msid:screen screen-audio",
            "a=rtcp-rsize",
            "a=extmap:3 http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01",
            "m=video 9 UDP/TLS/RTP/SAVPF 102 103",
            "c=IN IP4 0.0.0.0",
            "a=rtpmap:102 H264/90000",
            "a=fmtp:102 level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42001f",
            "a=rtpmap:103 rtx/90000",
            "a=fmtp:103 apt=102",
            "a=rtcp-fb:102 goog-remb",
            "a=rtcp-fb:102 transport-cc",
            "a=rtcp-fb:102 ccm fir",
            "a=rtcp-fb:102 nack",
            "a=rtcp-fb:102 nack pli",
            "a=mid:1",
            "a=sendonly",
            "a=rtcp-mux",
            "a=ssrc-group:FID 286331153 572662306",
            "a=ssrc:286331153 cname:rtc-publisher-7",
            "a=ssrc:286331153 msid:screen screen-video",
            "a=ssrc:572662306 cname:rtc-publisher-7",
            "a=ssrc:572662306 msid:screen screen-video",
            "a=ice-ufrag:pUbL",
            "a=ice-pwd:publisherPassword0123456",
            "a=fingerprint:\(Publisher.fingerprint)",
            "a=setup:active",
            "a=msid:screen screen-video",
            "a=rtcp-rsize",
            "a=extmap:3 http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01",
        ]
        #expect(answer.sdp == expected.joined(separator: "\r\n") + "\r\n")
    }

    /// The data channel and the second video of the namespace fixture: port 0, the offered
    /// protocol and first format, the mid, and (for RTP) inactive; neither is in the BUNDLE group.
    @Test("sections we do not serve are rejected with port 0 and named")
    func rejectedSections() throws {
        let offer = try WebRTCOffer(parsing: OfferFixtures.chromiumNoCandidates.text)
        let answer = try WebRTCAnswer(answering: offer, configuration: Publisher.configuration())
        #expect(answer.rejectedSections.map(\.index) == [2, 3])
        #expect(answer.rejectedSections.map(\.mid) == ["2", "3"])
        #expect(answer.rejectedSections.map(\.kind) == [.video, .application])
        #expect(
            answer.rejectedSections.map(\.reason) == [
                "we send one video stream, already in an earlier m-section", "we open no data channel",
            ]
        )
        let lines = answer.sdp.components(separatedBy: "\r\n")
        let video = try #require(lines.firstIndex(of: "m=video 0 UDP/TLS/RTP/SAVPF 96"))
        #expect(
            Array(lines[video...].prefix(5)) == [
                "m=video 0 UDP/TLS/RTP/SAVPF 96", "c=IN IP4 0.0.0.0", "a=rtpmap:96 VP8/90000", "a=mid:2", "a=inactive",
            ]
        )
        let application = try #require(lines.firstIndex(of: "m=application 0 UDP/DTLS/SCTP webrtc-datachannel"))
        #expect(
            Array(lines[application...].prefix(3)) == [
                "m=application 0 UDP/DTLS/SCTP webrtc-datachannel", "c=IN IP4 0.0.0.0", "a=mid:3",
            ]
        )
    }

    @Test("an offer with only an audio section answers audio when we send no video")
    func audioOnlyPublisher() throws {
        var configuration = try Publisher.configuration()
        configuration.video = nil
        let answer = try WebRTCAnswer(
            answering: WebRTCOffer(parsing: OfferFixtures.firefox.text),
            configuration: configuration
        )
        #expect(answer.video == nil)
        #expect(answer.audio?.payloadType == 109)
        #expect(answer.bundle.mids == ["0"])
        #expect(answer.rejectedSections.map(\.reason) == ["we send no video"])
    }

    @Test("without audio of ours, the offer's audio section stays in the bundle, inactive")
    func audioSectionInactiveWithoutAudio() throws {
        let answer = try WebRTCAnswer(
            answering: WebRTCOffer(parsing: OfferFixtures.aiortc.text),
            configuration: try Publisher.configuration(audio: false)
        )
        #expect(answer.audio == nil)
        #expect(answer.rejectedSections.isEmpty, "\(answer.rejectedSections)")
        let parsed = try WebRTCOffer(parsing: answer.sdp)
        let audio = try #require(parsed.sections.first { $0.kind == .audio })
        let video = try #require(parsed.sections.first { $0.kind == .video })
        #expect(answer.bundle.mids.contains(audio.mid ?? "-"))
        #expect(audio.media.port == video.media.port && audio.media.port != 0)
        #expect(audio.direction == .inactive)
        #expect(audio.media.formats.map { $0.rtpmap?.encodingName.lowercased() } == ["opus"])
        #expect(audio.media.ssrcAttributes.isEmpty && audio.headerExtensions.isEmpty)
        #expect(audio.iceCredentials == video.iceCredentials)
    }
}
