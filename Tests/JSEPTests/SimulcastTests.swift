import JSEP
import SDP
import Testing

/// Rid-based H.264 simulcast in our WHIP offer (RFC 8853, RFC 8851, RFC 8852) and the check of
/// an endpoint's answer to it.
@Suite("JSEP simulcast offer and WHIP answer")
struct SimulcastTests {
    static let layers = [
        SimulcastLayer(rid: "f", ssrc: 0x1111_1111, retransmissionSSRC: 0x2222_2222),
        SimulcastLayer(rid: "l", ssrc: 0x4444_4444, retransmissionSSRC: 0x5555_5555),
        SimulcastLayer(rid: "q", ssrc: 0x6666_6666, retransmissionSSRC: 0x7777_7777),
    ]

    static func configuration(
        layers: [SimulcastLayer]? = layers,
        rtx: Bool = true
    ) throws -> PublishOffer.Configuration {
        var configuration = try Publisher.configuration(
            rtx: rtx,
            candidates: [try ICECandidate(attributeValue: "1 1 UDP 2015363327 127.0.0.2 41234 typ host")]
        )
        configuration.video?.simulcast = layers
        return configuration
    }

    static let transportWide = "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01"

    /// The whole offer for three layers, byte for byte.
    static let expectedOffer = [
        "v=0",
        "o=- 4242424242 1 IN IP4 127.0.0.1",
        "s=-",
        "t=0 0",
        "a=group:BUNDLE 0 1",
        "a=msid-semantic:WMS screen",
        "m=video 41234 UDP/TLS/RTP/SAVPF 96 97",
        "c=IN IP4 127.0.0.2",
        "a=rtpmap:96 H264/90000",
        "a=fmtp:96 level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f",
        "a=rtpmap:97 rtx/90000",
        "a=fmtp:97 apt=96",
        "a=rtcp-fb:96 nack",
        "a=rtcp-fb:96 nack pli",
        "a=rtcp-fb:96 ccm fir",
        "a=rtcp-fb:96 goog-remb",
        "a=rtcp-fb:96 transport-cc",
        "a=mid:0",
        "a=sendonly",
        "a=rtcp-mux",
        "a=rid:f send",
        "a=rid:l send",
        "a=rid:q send",
        "a=simulcast:send f;l;q",
        "a=ice-ufrag:pUbL",
        "a=ice-pwd:publisherPassword0123456",
        "a=fingerprint:\(Publisher.fingerprint)",
        "a=setup:actpass",
        "a=msid:screen screen-video",
        "a=rtcp-rsize",
        "a=extmap:3 \(transportWide)",
        "a=extmap:4 urn:ietf:params:rtp-hdrext:sdes:mid",
        "a=extmap:10 urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id",
        "a=extmap:11 urn:ietf:params:rtp-hdrext:sdes:repaired-rtp-stream-id",
        "a=candidate:1 1 UDP 2015363327 127.0.0.2 41234 typ host",
        "a=end-of-candidates",
        "m=audio 41234 UDP/TLS/RTP/SAVPF 111",
        "c=IN IP4 127.0.0.2",
        "a=rtpmap:111 opus/48000/2",
        "a=fmtp:111 minptime=10;sprop-stereo=1;stereo=1",
        "a=rtcp-fb:111 transport-cc",
        "a=mid:1",
        "a=sendonly",
        "a=rtcp-mux",
        "a=ssrc:858993459 cname:rtc-publisher-7",
        "a=ssrc:858993459 msid:screen screen-audio",
        "a=ice-ufrag:pUbL",
        "a=ice-pwd:publisherPassword0123456",
        "a=fingerprint:\(Publisher.fingerprint)",
        "a=setup:actpass",
        "a=msid:screen screen-audio",
        "a=rtcp-rsize",
        "a=extmap:3 \(transportWide)",
        "a=extmap:4 urn:ietf:params:rtp-hdrext:sdes:mid",
    ]

    @Test("three layers: rid lines and a=simulcast in order, the rid extmaps, no video a=ssrc")
    func offerBytes() throws {
        let offer = try PublishOffer(Self.configuration())
        let lines = offer.sdp.split(separator: "\r\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.dropLast() == ArraySlice(Self.expectedOffer))
        #expect(lines.last == "")
        let parsed = try WebRTCOffer(parsing: offer.sdp)
        let video = parsed.sections[0].media
        #expect(video.rids == ["f", "l", "q"].map { SDPRID(id: $0, direction: .send) })
        #expect(video.simulcast == SDPSimulcast(send: ["f", "l", "q"].map { SDPSimulcast.Stream(rid: $0) }))
        #expect(video.ssrcAttributes.isEmpty && video.ssrcGroups.isEmpty)
        #expect(parsed.sections[1].media.ssrcAttributes.map(\.ssrc) == [0x3333_3333, 0x3333_3333])
        #expect(
            parsed.sections[0].headerExtensions.map(\.id) == [3, 4, 10, 11]
                && parsed.sections[1].headerExtensions.map(\.id) == [3, 4]
        )
        #expect(PublishOffer.midHeaderExtensionID == 4)
        #expect(PublishOffer.ridHeaderExtensionID == 10)
        #expect(PublishOffer.repairedRIDHeaderExtensionID == 11)
    }

    @Test("without RTX or transport-wide cc: no 97, no RTX SSRCs, the three stream-id extmaps alone")
    func offerWithoutRTX() throws {
        var configuration = try Self.configuration(
            layers: Self.layers.map { SimulcastLayer(rid: $0.rid, ssrc: $0.ssrc) },
            rtx: false
        )
        configuration.headerExtensions = []
        let lines = try PublishOffer(configuration).sdp.split(separator: "\r\n").map(String.init)
        #expect(lines.contains("m=video 41234 UDP/TLS/RTP/SAVPF 96"))
        #expect(
            lines.filter { $0.hasPrefix("a=extmap:") } == [
                "a=extmap:4 urn:ietf:params:rtp-hdrext:sdes:mid",
                "a=extmap:10 urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id",
                "a=extmap:11 urn:ietf:params:rtp-hdrext:sdes:repaired-rtp-stream-id",
                "a=extmap:4 urn:ietf:params:rtp-hdrext:sdes:mid",
            ]
        )
        #expect(lines.contains("a=simulcast:send f;l;q"))
    }

    @Test(
        "simulcast configurations the offer cannot carry are ours to fix",
        arguments: [
            ([], "simulcast needs 1 to 3 layers, not 0 (Janus reads three)"),
            (
                layers + [SimulcastLayer(rid: "z", ssrc: 9, retransmissionSSRC: 10)],
                "simulcast needs 1 to 3 layers, not 4 (Janus reads three)"
            ),
            (
                [SimulcastLayer(rid: "f.1", ssrc: 0x1111_1111, retransmissionSSRC: 0x2222_2222)],
                "simulcast rid 'f.1' is not 1 to 15 letters, digits, '-' and '_' (RFC 8851 section 10; Janus reads 15)"
            ),
            (
                [SimulcastLayer(rid: "abcdefghijklmnop", ssrc: 0x1111_1111, retransmissionSSRC: 0x2222_2222)],
                "simulcast rid 'abcdefghijklmnop' is not 1 to 15 letters, digits, '-' and '_' (RFC 8851 section 10; "
                    + "Janus reads 15)"
            ),
            (
                [layers[0], SimulcastLayer(rid: "f", ssrc: 5, retransmissionSSRC: 6)],
                "the simulcast rids must all differ: each names one layer"
            ),
            (
                [layers[1], layers[0]],
                "the first simulcast layer must use the video's ssrc and retransmissionSSRC"
            ),
            (
                [layers[0], SimulcastLayer(rid: "l", ssrc: 5)],
                "every simulcast layer has an RTX SSRC or none does (one RTX format for the section)"
            ),
            (
                [layers[0], SimulcastLayer(rid: "l", ssrc: 0x3333_3333, retransmissionSSRC: 6)],
                "our SSRCs must all differ (RFC 3550 section 8)"
            ),
            (
                [layers[0], SimulcastLayer(rid: "l", ssrc: 5, retransmissionSSRC: 5)],
                "our SSRCs must all differ (RFC 3550 section 8)"
            ),
        ]
    )
    func refusedConfiguration(layers: [SimulcastLayer], reason: String) throws {
        let error = #expect(throws: JSEPError.self) { try PublishOffer(Self.configuration(layers: layers)) }
        #expect(error?.code == .invalidConfiguration)
        #expect(error?.reason == reason)
    }

    // MARK: Answers

    /// Janus 1.1.2's VideoRoom answer to `expectedOffer`, modelled on its recorded answer
    /// (`PublishOfferTests.janusAnswer`) plus what its source writes for a rid-based simulcast
    /// publisher: the offered extmaps it accepts for video (mid, rid, repaired rid,
    /// transport-wide cc) and audio (mid) under our ids, then after the `a=ssrc` line one
    /// `a=rid:<rid> recv` per offered rid and `a=simulcast:recv` in the offered order
    /// (src/sdp.c `janus_sdp_merge`, src/sdp-utils.c `janus_sdp_generate_answer_mline`).
    static let janusAnswer = [
        "v=0",
        "o=- 4242424242 1 IN IP4 127.0.0.1",
        "s=VideoRoom 1234",
        "t=0 0",
        "a=group:BUNDLE 0 1",
        "a=ice-options:trickle",
        "a=fingerprint:sha-256 19:7F:AE:E9:99:83:26:2D:38:8C:18:BE:42:CA:AB:7C:21:43:8D:A2:F4:D3:E0:AC:0E:C6:D6:92:25:27:38:63",
        "a=extmap-allow-mixed",
        "a=msid-semantic: WMS *",
        "m=video 9 UDP/TLS/RTP/SAVPF 96 97",
        "c=IN IP4 127.0.0.1",
        "a=recvonly",
        "a=mid:0",
        "a=rtcp-mux",
        "a=ice-ufrag:eqD5",
        "a=ice-pwd:e8iryQXJUEeXqjonhrosY2",
        "a=ice-options:trickle",
        "a=setup:active",
        "a=rtpmap:96 H264/90000",
        "a=rtcp-fb:96 ccm fir",
        "a=rtcp-fb:96 nack",
        "a=rtcp-fb:96 nack pli",
        "a=rtcp-fb:96 goog-remb",
        "a=rtcp-fb:96 transport-cc",
        "a=fmtp:96 profile-level-id=42e01f;packetization-mode=1",
        "a=rtpmap:97 rtx/90000",
        "a=fmtp:97 apt=96",
        "a=extmap:3 \(transportWide)",
        "a=extmap:4 urn:ietf:params:rtp-hdrext:sdes:mid",
        "a=extmap:10 urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id",
        "a=extmap:11 urn:ietf:params:rtp-hdrext:sdes:repaired-rtp-stream-id",
        "a=msid:janus janus0",
        "a=ssrc:3757500189 cname:janus",
        "a=rid:f recv",
        "a=rid:l recv",
        "a=rid:q recv",
        "a=simulcast:recv f;l;q",
        "a=candidate:1 1 udp 2015363327 127.0.0.2 20464 typ host",
        "a=end-of-candidates",
        "m=audio 9 UDP/TLS/RTP/SAVPF 111",
        "c=IN IP4 127.0.0.1",
        "a=recvonly",
        "a=mid:1",
        "a=rtcp-mux",
        "a=ice-ufrag:eqD5",
        "a=ice-pwd:e8iryQXJUEeXqjonhrosY2",
        "a=ice-options:trickle",
        "a=setup:active",
        "a=rtpmap:111 opus/48000/2",
        "a=fmtp:111 stereo=1",
        "a=extmap:4 urn:ietf:params:rtp-hdrext:sdes:mid",
        "a=msid:janus janus1",
        "a=ssrc:151168256 cname:janus",
        "a=candidate:1 1 udp 2015363327 127.0.0.2 20464 typ host",
        "a=end-of-candidates",
    ]

    static func answer(_ lines: [String]) -> String { lines.joined(separator: "\r\n") + "\r\n" }

    @Test("Janus' answer: the three layers in our order, our ids for mid, rid and repaired rid")
    func janusAnswerIsRead() throws {
        let offer = try PublishOffer(Self.configuration())
        let answer = try PublishAnswer(parsing: Self.answer(Self.janusAnswer), answering: offer)
        let video = try #require(answer.video)
        #expect(video.simulcast?.rids == ["f", "l", "q"])
        #expect(video.simulcast?.layers.allSatisfy { !$0.isPaused } == true)
        #expect(video.simulcast?.isNegotiated == true)
        #expect(video.transportWideSequenceNumberID == 3)
        #expect(video.midHeaderExtensionID == 4)
        #expect(video.ridHeaderExtensionID == 10)
        #expect(video.repairedRIDHeaderExtensionID == 11)
        #expect(video.retransmissionPayloadType == 97)
        #expect(answer.audio?.midHeaderExtensionID == 4)
        #expect(answer.audio?.transportWideSequenceNumberID == nil, "Janus accepts transport-wide cc for video only")
    }

    /// One change to `janusAnswer` and what it gives: the layers (`~` marks paused) and the
    /// negotiated ids, or the error, its reason and the line it names.
    struct Mutation: Sendable, CustomTestStringConvertible {
        var name: String
        var change: @Sendable ([String]) -> [String]
        var layers: [String] = ["f", "l", "q"]
        var isNegotiated = true
        var ids: [UInt8?] = [4, 10, 11]
        var code: JSEPError.Code? = nil
        var reason = ""
        /// The answer line the error names (nil: none).
        var line: String? = nil

        var testDescription: String { name }
    }

    static func replacing(_ old: String, with new: [String]) -> @Sendable ([String]) -> [String] {
        { lines in lines.flatMap { $0 == old ? new : [$0] } }
    }

    static func removing(_ prefix: String) -> @Sendable ([String]) -> [String] {
        { lines in lines.filter { !$0.hasPrefix(prefix) } }
    }

    static let mutations = [
        Mutation(
            name: "no a=simulcast: the endpoint takes one stream, our first layer (RFC 8853 section 5.3)",
            change: removing("a=simulcast"),
            layers: ["f"],
            isNegotiated: false
        ),
        Mutation(
            name: "no a=simulcast, no a=rid, no stream-id extmaps: still the first layer, no ids",
            change: { lines in
                lines.filter {
                    !$0.hasPrefix("a=simulcast") && !$0.hasPrefix("a=rid") && !$0.contains("sdes:")
                }
            },
            layers: ["f"],
            isNegotiated: false,
            ids: [nil, nil, nil]
        ),
        Mutation(
            name: "two of three layers, in the endpoint's order",
            change: { lines in
                lines.filter { $0 != "a=rid:l recv" }.map {
                    $0 == "a=simulcast:recv f;l;q" ? "a=simulcast:recv q;f" : $0
                }
            },
            layers: ["q", "f"]
        ),
        Mutation(
            name: "a paused layer",
            change: replacing("a=simulcast:recv f;l;q", with: ["a=simulcast:recv f;l;~q"]),
            layers: ["f", "l", "~q"]
        ),
        Mutation(
            name: "the repaired rid left out: no RTX for the layers",
            change: removing("a=extmap:11"),
            ids: [4, 10, nil]
        ),
        Mutation(
            name: "the mid extmap turned away (sendonly is the endpoint's own direction)",
            change: replacing(
                "a=extmap:4 urn:ietf:params:rtp-hdrext:sdes:mid",
                with: ["a=extmap:4/sendonly urn:ietf:params:rtp-hdrext:sdes:mid"]
            ),
            ids: [nil, 10, 11]
        ),
        Mutation(
            name: "a=rid restrictions in the answer are not ours to apply: read, not refused",
            change: replacing("a=rid:l recv", with: ["a=rid:l recv max-width=640"])
        ),
        Mutation(
            name: "rid under another id than ours",
            change: replacing(
                "a=extmap:10 urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id",
                with: ["a=extmap:12 urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id"]
            ),
            code: .answerMismatch,
            reason: "the answer maps rtp-stream-id to id 12, not to our offered 10 (RFC 8285 section 7",
            line: "a=extmap:12 urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id"
        ),
        Mutation(
            name: "repaired rid under another id than ours",
            change: replacing(
                "a=extmap:11 urn:ietf:params:rtp-hdrext:sdes:repaired-rtp-stream-id",
                with: ["a=extmap:9 urn:ietf:params:rtp-hdrext:sdes:repaired-rtp-stream-id"]
            ),
            code: .answerMismatch,
            reason: "the answer maps repaired-rtp-stream-id to id 9, not to our offered 11",
            line: "a=extmap:9 urn:ietf:params:rtp-hdrext:sdes:repaired-rtp-stream-id"
        ),
        Mutation(
            name: "the audio mid under another id than ours",
            change: { lines in
                var copy = lines
                if let index = copy.lastIndex(of: "a=extmap:4 urn:ietf:params:rtp-hdrext:sdes:mid") {
                    copy[index] = "a=extmap:5 urn:ietf:params:rtp-hdrext:sdes:mid"
                }
                return copy
            },
            code: .answerMismatch,
            reason: "the answer maps the mid extension to id 5, not to our offered 4",
            line: "a=extmap:5 urn:ietf:params:rtp-hdrext:sdes:mid"
        ),
        Mutation(
            name: "simulcast without the rid extmap: the layers could not be told apart",
            change: removing("a=extmap:10"),
            code: .answerMismatch,
            reason: "the answer takes simulcast without our rtp-stream-id a=extmap",
            line: "a=simulcast:recv f;l;q"
        ),
        Mutation(
            name: "a send part: we receive no simulcast",
            change: replacing("a=simulcast:recv f;l;q", with: ["a=simulcast:recv f;l;q send x"]),
            code: .answerMismatch,
            reason: "the answer's a=simulcast has a send part; our offer receives no simulcast",
            line: "a=simulcast:recv f;l;q send x"
        ),
        Mutation(
            name: "a rid we never offered in a=simulcast",
            change: replacing("a=simulcast:recv f;l;q", with: ["a=simulcast:recv f;l;x"]),
            code: .answerMismatch,
            reason: "the answer's a=simulcast names rid 'x', which our offer did not",
            line: "a=simulcast:recv f;l;x"
        ),
        Mutation(
            name: "a rid we never offered in a=rid",
            change: replacing("a=rid:q recv", with: ["a=rid:q recv", "a=rid:x recv"]),
            code: .answerMismatch,
            reason: "the answer has a=rid 'x', which our offer did not (RFC 8851 section 5)",
            line: "a=rid:x recv"
        ),
        Mutation(
            name: "two of our layers made alternatives of one stream",
            change: replacing("a=simulcast:recv f;l;q", with: ["a=simulcast:recv f,l;q"]),
            code: .answerMismatch,
            reason: "the answer makes 'f,l' alternatives of one stream; we offered one rid per stream",
            line: "a=simulcast:recv f,l;q"
        ),
        Mutation(
            name: "a layer in a=simulcast without its a=rid recv line",
            change: { lines in lines.filter { $0 != "a=rid:q recv" } },
            code: .answerMismatch,
            reason: "names rid 'q' without an a=rid:q recv line (RFC 8853 section 5.1)",
            line: "a=simulcast:recv f;l;q"
        ),
        Mutation(
            name: "a layer whose a=rid says send",
            change: replacing("a=rid:q recv", with: ["a=rid:q send"]),
            code: .answerMismatch,
            reason: "names rid 'q' without an a=rid:q recv line",
            line: "a=simulcast:recv f;l;q"
        ),
        Mutation(
            name: "a malformed a=simulcast is a malformed answer",
            change: replacing("a=simulcast:recv f;l;q", with: ["a=simulcast:recv f;;q"]),
            code: .malformedAnswer,
            reason: "a=simulcast rid '' is not 1-255 letters, digits, '-' and '_' (RFC 8851 section 10)",
            line: "a=simulcast:recv f;;q"
        ),
    ]

    @Test("each way an answer can take our simulcast, or fail to", arguments: mutations)
    func mutation(_ mutation: Mutation) throws {
        let offer = try PublishOffer(Self.configuration())
        let lines = mutation.change(Self.janusAnswer)
        guard let code = mutation.code else {
            let answer = try PublishAnswer(parsing: Self.answer(lines), answering: offer)
            let video = try #require(answer.video)
            let layers = video.simulcast?.layers.map { ($0.isPaused ? "~" : "") + $0.rid }
            #expect(layers == mutation.layers)
            #expect(video.simulcast?.isNegotiated == mutation.isNegotiated)
            #expect(
                [video.midHeaderExtensionID, video.ridHeaderExtensionID, video.repairedRIDHeaderExtensionID]
                    == mutation.ids
            )
            return
        }
        let error = #expect(throws: JSEPError.self) { try PublishAnswer(parsing: Self.answer(lines), answering: offer) }
        #expect(error?.code == code, "\(String(describing: error))")
        #expect(error?.reason.contains(mutation.reason) == true, "\(error?.reason ?? "")")
        let named = mutation.line.map { line in lines.firstIndex(of: line).map { $0 + 1 } ?? -1 }
        #expect(error?.line == named)
    }

    @Test("without simulcast in our offer, an answer's a=simulcast and stream-id extmaps are not read")
    func notOffered() throws {
        let offer = try PublishOffer(Self.configuration(layers: nil))
        #expect(!offer.sdp.contains("a=rid") && !offer.sdp.contains("sdes:"))
        let answer = try PublishAnswer(parsing: Self.answer(Self.janusAnswer), answering: offer)
        #expect(answer.video?.simulcast == nil)
        #expect(answer.video?.midHeaderExtensionID == nil && answer.video?.ridHeaderExtensionID == nil)
        #expect(answer.audio?.midHeaderExtensionID == nil)
        #expect(answer.video?.transportWideSequenceNumberID == 3)
    }
}
