import Testing

@testable import SDP

@Suite("SDP feedback: rtcp-fb, RTX and ssrc-group")
struct SDPFeedbackTests {
    static let text = """
        v=0\r
        o=- 7 1 IN IP4 127.0.0.1\r
        s=rtc-publisher\r
        c=IN IP4 127.0.0.1\r
        t=0 0\r
        m=video 5004 RTP/SAVPF 96 99\r
        a=rtpmap:96 H264/90000\r
        a=fmtp:96 packetization-mode=1\r
        a=rtpmap:99 rtx/90000\r
        a=fmtp:99 apt=96;rtx-time=500\r
        a=rtcp-fb:96 nack\r
        a=rtcp-fb:96 nack pli\r
        a=rtcp-fb:96 ccm fir\r
        a=rtcp-fb:96 goog-remb\r
        a=rtcp-fb:96 transport-cc\r
        a=rtcp-fb:* trr-int 100\r
        a=mid:video\r
        a=recvonly\r
        a=ssrc-group:FID 305419896 3405691582\r
        a=ssrc:305419896 cname:alice\r
        a=ssrc:3405691582 cname:alice\r

        """

    static func description() -> SessionDescription {
        SessionDescription(
            origin: SDPOrigin(sessionID: 7, unicastAddress: "127.0.0.1"),
            sessionName: "rtc-publisher",
            connection: .ipv4Loopback,
            media: [
                MediaDescription(
                    kind: .video,
                    port: 5004,
                    transport: .rtpSAVPF,
                    formats: [
                        SDPRTPFormat(
                            payloadType: 96,
                            rtpmap: SDPRTPMap(encodingName: "H264", clockRate: 90_000),
                            parameters: [SDPFormatParameter(name: "packetization-mode", value: "1")]
                        ),
                        .retransmission(payloadType: 99, associatedPayloadType: 96, retransmissionTime: 500),
                    ],
                    direction: .recvonly,
                    mid: "video",
                    ssrcAttributes: [.cname(ssrc: 0x1234_5678, "alice"), .cname(ssrc: 0xCAFE_BABE, "alice")],
                    ssrcGroups: [.flowIdentification(original: 0x1234_5678, retransmission: 0xCAFE_BABE)],
                    rtcpFeedback: [
                        .nack(payloadType: 96), .pictureLossIndication(payloadType: 96),
                        .fullIntraRequest(payloadType: 96), .receiverEstimatedMaximumBitrate(payloadType: 96),
                        .transportWideCongestionControl(payloadType: 96),
                        SDPRTCPFeedback(payloadType: nil, type: "trr-int", parameter: "100"),
                    ]
                )
            ]
        )
    }

    @Test("written exactly, and parsed back to the same value")
    func roundTrip() throws {
        #expect(try SDPWriter.write(Self.description()) == Self.text)
        let parsed = try SDPParser.parse(Self.text)
        #expect(parsed == Self.description())
        let video = try #require(parsed.media.first)
        #expect(video.offersFeedback("nack", payloadType: 96))
        #expect(video.offersFeedback("nack", parameter: "pli", payloadType: 96))
        #expect(video.offersFeedback("ccm", parameter: "fir", payloadType: 96))
        #expect(video.offersFeedback("transport-cc", payloadType: 96))
        #expect(video.offersFeedback("trr-int", parameter: "100", payloadType: 99), "* applies to every format")
        #expect(!video.offersFeedback("nack", payloadType: 99))
        #expect(video.retransmissionFormat(for: 96)?.payloadType == 99)
        #expect(video.format(payloadType: 99)?.associatedPayloadType == 96)
        #expect(video.format(payloadType: 96)?.associatedPayloadType == nil)
    }

    @Test("a browser-style answer: rtx in upper case, FID group, wildcard feedback")
    func browserAnswer() throws {
        let answer = """
            v=0
            o=- 1 1 IN IP4 0.0.0.0
            s=-
            t=0 0
            m=video 9 UDP/TLS/RTP/SAVPF 96 97
            a=rtpmap:96 H264/90000
            a=rtcp-fb:96 nack
            a=rtcp-fb:96 nack pli
            a=rtpmap:97 RTX/90000
            a=fmtp:97 apt=96
            a=ssrc-group:FID 1 2
            """
        let video = try #require(try SDPParser.parse(answer).media.first)
        #expect(video.retransmissionFormat(for: 96)?.payloadType == 97)
        #expect(video.ssrcGroups == [SDPSSRCGroup(semantics: "FID", ssrcs: [1, 2])])
        #expect(video.rtcpFeedback == [.nack(payloadType: 96), .pictureLossIndication(payloadType: 96)])
    }

    @Test(
        "malformed feedback lines name the line and the problem",
        arguments: [
            ("a=rtcp-fb:96", "line 6: a=rtcp-fb needs '<payload type or *> <feedback type>'"),
            ("a=rtcp-fb:98 nack", "line 6: a=rtcp-fb for payload type 98, which the m= line does not list"),
            ("a=rtcp-fb:x nack", "line 6: payload type 'x' is not a number 0-127"),
            ("a=rtcp-fb:96 na/ck", "line 6: a=rtcp-fb type 'na/ck' is not a token"),
            (
                "a=rtcp-fb:96 nack  pli",
                "line 6: a=rtcp-fb parameter ' pli' is not visible words separated by single spaces"
            ),
            ("a=ssrc-group:FID", "line 6: a=ssrc-group needs '<semantics> <ssrc> ...'"),
            ("a=ssrc-group:FID 1 x", "line 6: a=ssrc-group SSRC 'x' is not a 32-bit number"),
        ]
    )
    func malformed(line: String, message: String) {
        let text = "v=0\r\no=- 1 1 IN IP4 h\r\ns=-\r\nt=0 0\r\nm=video 9 RTP/AVPF 96\r\n\(line)\r\n"
        let error = #expect(throws: SDPError.self) { try SDPParser.parse(text) }
        #expect(error?.message == message)
    }

    @Test("the writer refuses what the parser could not read back")
    func writerChecks() throws {
        var description = Self.description()
        description.media[0].rtcpFeedback = [.nack(payloadType: 100)]
        var error = #expect(throws: SDPError.self) { try SDPWriter.write(description) }
        #expect(error?.message == "media section 1: a=rtcp-fb for payload type 100, which the m= line does not list")
        description.media[0].rtcpFeedback = [SDPRTCPFeedback(payloadType: 96, type: "nack", parameter: "")]
        error = #expect(throws: SDPError.self) { try SDPWriter.write(description) }
        #expect(
            error?.message == "media section 1: rtcp-fb parameter '' is not visible words separated by single spaces"
        )
        description.media[0].rtcpFeedback = []
        description.media[0].ssrcGroups = [SDPSSRCGroup(semantics: "FID", ssrcs: [])]
        error = #expect(throws: SDPError.self) { try SDPWriter.write(description) }
        #expect(error?.message == "media section 1: ssrc-group FID lists no SSRC")
        description.media[0].ssrcGroups = []
        description.media[0].attributes = [SDPAttribute(name: "rtcp-fb", value: "96 nack")]
        error = #expect(throws: SDPError.self) { try SDPWriter.write(description) }
        #expect(
            error?.message == "media section 1: a=rtcp-fb has a typed field; set that instead of a generic attribute"
        )
    }
}
