import JSEP
import SDP
import Testing

/// `--codecs`: a viewer gets the first of our codecs that its offer has (RFC 8829 §5.3.1 lets a
/// sendonly answer list one format), under the offer's payload type, with the RTX format whose
/// `apt` names it (RFC 4588 §8.6) and the feedback offered for it.
struct VideoCodecChoiceTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var offer: String
        var codecs: [VideoCodec]
        /// The answer's video format line and its RTX `apt` line, as written.
        var codec: VideoCodec
        var rtpmap: String
        var fmtp: String?
        var rtx: String?
        var testDescription: String { name }
    }

    /// aiortc's offer with its H.264 formats turned into VP9: VP8 (97, RTX 98), VP9 (99 and 101).
    static let vp8AndVP9 = OfferFixtures.aiortc.replacing("H264/90000", with: "VP9/90000")

    static let cases: [Case] = [
        Case(
            name: "no H.264: VP8, the next we prefer",
            offer: vp8AndVP9,
            codecs: [.h264, .vp8, .vp9],
            codec: .vp8,
            rtpmap: "a=rtpmap:97 VP8/90000",
            fmtp: nil,
            rtx: "a=fmtp:98 apt=97"
        ),
        Case(
            name: "no H.264, VP9 preferred: VP9 profile 0 under its first payload type",
            offer: vp8AndVP9,
            codecs: [.h264, .vp9, .vp8],
            codec: .vp9,
            rtpmap: "a=rtpmap:99 VP9/90000",
            fmtp: "a=fmtp:99 profile-id=0",
            rtx: "a=fmtp:100 apt=99"
        ),
        Case(
            name: "H.264 offered and preferred: unchanged",
            offer: OfferFixtures.aiortc.text,
            codecs: [.h264, .vp8],
            codec: .h264,
            rtpmap: "a=rtpmap:99 H264/90000",
            fmtp: "a=fmtp:99 level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42001f",
            rtx: "a=fmtp:100 apt=99"
        ),
        Case(
            name: "VP8 preferred over an offered H.264",
            offer: OfferFixtures.chromium.text,
            codecs: [.vp8, .h264],
            codec: .vp8,
            rtpmap: "a=rtpmap:96 VP8/90000",
            fmtp: nil,
            rtx: "a=fmtp:97 apt=96"
        ),
        Case(
            name: "VP9 profile 2 is skipped for a later profile 0",
            offer: vp8AndVP9.replacing(
                "a=fmtp:99 level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42001f",
                with: "a=fmtp:99 profile-id=2"
            ),
            codecs: [.vp9],
            codec: .vp9,
            rtpmap: "a=rtpmap:101 VP9/90000",
            fmtp: "a=fmtp:101 profile-id=0",
            rtx: "a=fmtp:102 apt=101"
        ),
    ]

    @Test("the first of our codecs that the offer has", arguments: cases)
    func chosen(_ c: Case) throws {
        let offer = try WebRTCOffer(parsing: c.offer)
        let configuration = try Publisher.configuration(codecs: c.codecs)
        let answer = try WebRTCAnswer(answering: offer, configuration: configuration)
        let video = try #require(answer.video)
        #expect(video.codec == c.codec)
        #expect(offer.videoCodec(preferring: c.codecs, sending: .constrainedBaseline31) == c.codec)
        let lines = answer.sdp.components(separatedBy: "\r\n")
        #expect(lines.contains(c.rtpmap), "\(answer.sdp)")
        if let fmtp = c.fmtp { #expect(lines.contains(fmtp), "\(answer.sdp)") }
        if let rtx = c.rtx { #expect(lines.contains(rtx), "\(answer.sdp)") }
        // One video format and its RTX: a sendonly answer lists what it sends.
        let videoLine = try #require(lines.first { $0.hasPrefix("m=video") })
        #expect(videoLine.split(separator: " ").count == 5, "\(videoLine)")
        #expect(video.offeredProfileLevelID == nil || c.codec == .h264)
        #expect(AnswerInvariants.violations(of: answer, for: offer, configuration: configuration).isEmpty)
    }

    @Test func aVP8AnswerKeepsTheOfferedFeedback() throws {
        let offer = try WebRTCOffer(parsing: Self.vp8AndVP9)
        let answer = try WebRTCAnswer(
            answering: offer,
            configuration: try Publisher.configuration(codecs: [.h264, .vp8])
        )
        let lines = answer.sdp.components(separatedBy: "\r\n")
        for feedback in ["a=rtcp-fb:97 nack", "a=rtcp-fb:97 nack pli", "a=rtcp-fb:97 goog-remb"] {
            #expect(lines.contains(feedback), "\(answer.sdp)")
        }
        #expect(answer.video?.feedback.contains(.pictureLossIndication) == true)
    }

    @Test func anOfferWithNoneOfOurCodecsNamesBothSides() throws {
        let offer = try WebRTCOffer(parsing: OfferFixtures.aiortc.replacing("H264/90000", with: "AV1/90000"))
        #expect(offer.videoCodec(preferring: [.h264, .vp9], sending: .constrainedBaseline31) == nil)
        let error = try #require(
            throws: JSEPError.self,
            performing: {
                try WebRTCAnswer(answering: offer, configuration: try Publisher.configuration(codecs: [.h264, .vp9]))
            }
        )
        #expect(error.code == .noCommonVideoCodec)
        #expect(
            error.reason
                == "the offer has no video codec we send (we send H264, VP9; its video m-section (mid 0) offers "
                + "VP8/90000, AV1/90000)"
        )
    }

    @Test func aConfigurationWithoutCodecsIsOurs() throws {
        let offer = try WebRTCOffer(parsing: OfferFixtures.aiortc.text)
        let error = try #require(
            throws: JSEPError.self,
            performing: { try WebRTCAnswer(answering: offer, configuration: try Publisher.configuration(codecs: [])) }
        )
        #expect(error.code == .invalidConfiguration)
    }

    @Test(
        "codec lists as --codecs reads them",
        arguments: [
            ("h264,vp8,vp9", "H264 VP8 VP9"),
            ("vp9, vp8", "VP9 VP8"),
            ("VP8", "VP8"),
            ("h264,h264", "H264 is listed twice"),
            ("h265", "unknown video codec \"h265\" (h264, vp8, vp9)"),
            ("", "unknown video codec \"\" (h264, vp8, vp9)"),
        ]
    )
    func lists(_ text: String, _ expected: String) {
        switch VideoCodec.list(text) {
        case .success(let codecs): #expect(codecs.map(\.encodingName).joined(separator: " ") == expected)
        case .failure(let error): #expect(error.reason == expected)
        }
    }
}
