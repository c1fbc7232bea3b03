import JSEP
import SDP
import Testing

/// Our WHIP offer (RFC 9725 §4.2, RFC 8829 §5.2.1) and how an endpoint's answer to it is read.
@Suite("JSEP publish offer and WHIP answer")
struct PublishOfferTests {
    static func configuration(audio: Bool = true) throws -> PublishOffer.Configuration {
        try Publisher.configuration(
            audio: audio,
            candidates: [try ICECandidate(attributeValue: "1 1 UDP 2015363327 127.0.0.2 41234 typ host")]
        )
    }

    /// The whole offer, byte for byte: a change here is a change on the wire.
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
        "a=ssrc-group:FID 286331153 572662306",
        "a=ssrc:286331153 cname:rtc-publisher-7",
        "a=ssrc:286331153 msid:screen screen-video",
        "a=ssrc:572662306 cname:rtc-publisher-7",
        "a=ssrc:572662306 msid:screen screen-video",
        "a=ice-ufrag:pUbL",
        "a=ice-pwd:publisherPassword0123456",
        "a=fingerprint:\(Publisher.fingerprint)",
        "a=setup:actpass",
        "a=msid:screen screen-video",
        "a=rtcp-rsize",
        "a=extmap:3 http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01",
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
        "a=extmap:3 http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01",
    ]

    @Test("the offer is sendonly H.264 + RTX and Opus, bundled, actpass, with complete candidates")
    func offerBytes() throws {
        let offer = try PublishOffer(Self.configuration())
        let lines = offer.sdp.split(separator: "\r\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.dropLast() == ArraySlice(Self.expectedOffer))
        #expect(lines.last == "")
        // And it reads back as a WebRTC description with what we meant.
        let parsed = try WebRTCOffer(parsing: offer.sdp)
        #expect(parsed.bundleGroup?.mids == ["0", "1"])
        #expect(parsed.sections.map(\.direction) == [.sendonly, .sendonly])
        #expect(parsed.sections.allSatisfy { $0.setup == .actpass && $0.media.rtcpMux && $0.rtcpReducedSize })
        #expect(parsed.sections[0].retransmissionPayloadType(for: 96) == 97)
        #expect(parsed.sections[0].candidates.count == 1 && parsed.sections[0].endOfCandidates)
        #expect(
            parsed.sections.map(\.headerExtensions)
                == Array(
                    repeating: [HeaderExtensionMapping(id: 3, uri: HeaderExtensionMapping.transportWideCC)],
                    count: 2
                )
        )
        #expect(PublishOffer.transportWideSequenceNumberID == 3)
    }

    @Test("without transport-wide cc in headerExtensions: no a=extmap and no transport-cc feedback")
    func offerWithoutTransportWideCC() throws {
        var configuration = try Self.configuration()
        configuration.headerExtensions = []
        let offer = try PublishOffer(configuration)
        let lines = offer.sdp.split(separator: "\r\n").map(String.init)
        // The offer as it was before transport-wide cc, byte for byte.
        #expect(lines == Self.expectedOffer.filter { !$0.contains("transport-") })
        #expect(!lines.contains { $0.hasPrefix("a=extmap") || $0.hasSuffix(" transport-cc") })
    }

    @Test(
        "x264's Constrained Baseline is offered as 42e01f up to level 3.1; other profiles as they are",
        arguments: [
            ("42c01e", "42e01f"), ("42c01f", "42e01f"), ("42e00d", "42e01f"), ("42c028", "42c028"),
            ("640028", "640028"), ("42001f", "42001f"),
        ]
    )
    func offeredProfile(stream: String, offered: String) throws {
        let id = try #require(H264ProfileLevelID(stream))
        #expect(id.offered.description == offered)
    }

    @Test("without audio the offer has one section and carries the candidates in it")
    func videoOnly() throws {
        let offer = try PublishOffer(Self.configuration(audio: false))
        let parsed = try WebRTCOffer(parsing: offer.sdp)
        #expect(parsed.sections.map(\.kind) == [.video])
        #expect(parsed.bundleGroup?.mids == ["0"])
    }

    // MARK: Answers

    /// Janus 1.1.2's VideoRoom answer through simple-whip-server to `expectedOffer`, recorded
    /// (Tests/Peers/janus/janus_room.py, `curl -X POST` of the offer).
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
        "a=msid:janus janus0",
        "a=ssrc:3757500189 cname:janus",
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
        "a=msid:janus janus1",
        "a=ssrc:151168256 cname:janus",
        "a=candidate:1 1 udp 2015363327 127.0.0.2 20464 typ host",
        "a=end-of-candidates",
    ]

    static func answer(_ lines: [String]) -> String { lines.joined(separator: "\r\n") + "\r\n" }

    @Test("Janus' answer: H.264 96 with RTX 97, Opus 111, we are the DTLS server, its one candidate")
    func janusAnswerIsRead() throws {
        let offer = try PublishOffer(Self.configuration())
        let answer = try PublishAnswer(parsing: Self.answer(Self.janusAnswer), answering: offer)
        #expect(answer.video?.payloadType == 96)
        #expect(answer.video?.retransmissionPayloadType == 97)
        #expect(
            answer.video?.feedback
                == [.nack, .pictureLossIndication, .fullIntraRequest, .receiverEstimatedMaximumBitrate]
        )
        #expect(answer.video?.profileLevelID?.description == "42e01f")
        #expect(answer.audio?.payloadType == 111)
        #expect(answer.rejected.isEmpty)
        #expect(answer.localSetup == .passive)
        #expect(!answer.isDTLSClient)
        #expect(answer.remote.ice.ufrag == "eqD5")
        #expect(answer.remote.candidates.map(\.attributeValue) == ["1 1 UDP 2015363327 127.0.0.2 20464 typ host"])
        #expect(answer.remote.endOfCandidates)
        #expect(answer.remote.fingerprints.first?.hashFunction == .sha256)
    }

    /// One change to Janus' answer and what it must give: nil code means accepted.
    struct Mutation: Sendable, CustomTestStringConvertible {
        var name: String
        var change: @Sendable ([String]) -> [String]
        var code: JSEPError.Code?
        var reason: String

        var testDescription: String { name }
    }

    static func replacing(_ old: String, with new: String) -> @Sendable ([String]) -> [String] {
        { lines in lines.map { $0 == old ? new : $0 } }
    }

    static func removing(_ prefix: String) -> @Sendable ([String]) -> [String] {
        { lines in lines.filter { !$0.hasPrefix(prefix) } }
    }

    static func inserting(_ line: String, after anchor: String) -> @Sendable ([String]) -> [String] {
        { lines in lines.flatMap { $0 == anchor ? [$0, line] : [$0] } }
    }

    static func transportWideExtmap(_ id: String) -> String {
        "a=extmap:\(id) \(HeaderExtensionMapping.transportWideCC)"
    }

    static let mutations: [Mutation] = [
        Mutation(
            name: "not SDP at all",
            change: { _ in ["<html>502 Bad Gateway</html>"] },
            code: .malformedAnswer,
            reason: "line 1"
        ),
        Mutation(
            name: "only the video section",
            change: { lines in
                Array(lines.prefix { !$0.hasPrefix("m=audio") }).map {
                    $0 == "a=group:BUNDLE 0 1" ? "a=group:BUNDLE 0" : $0
                }
            },
            code: .answerMismatch,
            reason: "the answer has 1 m-sections for our offer's 2"
        ),
        Mutation(
            name: "mids swapped",
            change: { lines in lines.map { $0 == "a=mid:0" ? "a=mid:1" : $0 == "a=mid:1" ? "a=mid:0" : $0 } },
            code: .answerMismatch,
            reason: "answers video mid '1' for our video mid 0"
        ),
        Mutation(
            name: "video rejected",
            change: replacing("m=video 9 UDP/TLS/RTP/SAVPF 96 97", with: "m=video 0 UDP/TLS/RTP/SAVPF 96 97"),
            code: .answerMismatch,
            reason: "the endpoint rejected our video (port 0 on line 10)"
        ),
        Mutation(
            name: "audio rejected: video goes on alone",
            change: { lines in
                Self.replacing("m=audio 9 UDP/TLS/RTP/SAVPF 111", with: "m=audio 0 UDP/TLS/RTP/SAVPF 111")(lines)
                    .map { $0 == "a=group:BUNDLE 0 1" ? "a=group:BUNDLE 0" : $0 }
            },
            code: nil,
            reason: ""
        ),
        Mutation(
            name: "no BUNDLE group",
            change: removing("a=group:BUNDLE"),
            code: .notBundleable,
            reason: "a=group:BUNDLE is missing"
        ),
        Mutation(
            name: "no rtcp-mux on video",
            change: { lines in
                var copy = lines
                if let index = copy.firstIndex(of: "a=rtcp-mux") { copy.remove(at: index) }
                return copy
            },
            code: .noRTCPMux,
            reason: "the answer's video section (line 10) has no a=rtcp-mux"
        ),
        Mutation(
            name: "sendrecv answer",
            change: { lines in
                var copy = lines
                if let index = copy.firstIndex(of: "a=recvonly") { copy[index] = "a=sendrecv" }
                return copy
            },
            code: .answerMismatch,
            reason: "is sendrecv; an answer to our sendonly offer must be recvonly"
        ),
        Mutation(
            name: "actpass in an answer",
            change: replacing("a=setup:active", with: "a=setup:actpass"),
            code: .unsupportedSetup,
            reason: "the answer's a=setup is actpass"
        ),
        Mutation(
            name: "passive: we open the handshake",
            change: replacing("a=setup:active", with: "a=setup:passive"),
            code: nil,
            reason: ""
        ),
        Mutation(
            name: "no fingerprint",
            change: removing("a=fingerprint"),
            code: .noFingerprint,
            reason: "the answer has no a=fingerprint"
        ),
        Mutation(
            name: "no ICE password",
            change: removing("a=ice-pwd"),
            code: .noICECredentials,
            reason: "the answer has no ICE credentials (no a=ice-pwd)"
        ),
        Mutation(
            name: "a payload type we never offered",
            change: { lines in
                lines.map { $0 == "m=video 9 UDP/TLS/RTP/SAVPF 96 97" ? "m=video 9 UDP/TLS/RTP/SAVPF 100 97" : $0 }
                    .map { line in
                        for prefix in ["a=rtpmap:", "a=rtcp-fb:", "a=fmtp:"] where line.hasPrefix(prefix + "96 ") {
                            return prefix + "100" + line.dropFirst(prefix.count + 2)
                        }
                        return line
                    }
                    .map { $0 == "a=fmtp:97 apt=96" ? "a=fmtp:97 apt=100" : $0 }
            },
            code: .answerMismatch,
            reason: "lists payload type 100, which our offer did not"
        ),
        Mutation(
            name: "packetization-mode 0",
            change: replacing(
                "a=fmtp:96 profile-level-id=42e01f;packetization-mode=1",
                with: "a=fmtp:96 profile-level-id=42e01f;packetization-mode=0"
            ),
            code: .answerMismatch,
            reason: "asks for H.264 packetization-mode=0; we send mode 1"
        ),
        Mutation(
            name: "no RTX kept: retransmissions on the media SSRC",
            change: { lines in
                lines.filter { !$0.hasPrefix("a=rtpmap:97") && !$0.hasPrefix("a=fmtp:97") }
                    .map { $0 == "m=video 9 UDP/TLS/RTP/SAVPF 96 97" ? "m=video 9 UDP/TLS/RTP/SAVPF 96" : $0 }
            },
            code: nil,
            reason: ""
        ),
        Mutation(
            name: "transport-wide cc kept under our id 3",
            change: Self.inserting(Self.transportWideExtmap("3"), after: "a=fmtp:97 apt=96"),
            code: nil,
            reason: ""
        ),
        Mutation(
            name: "transport-wide cc under another id than ours",
            change: Self.inserting(Self.transportWideExtmap("5"), after: "a=fmtp:97 apt=96"),
            code: .answerMismatch,
            reason: "line 28 (a=extmap:5 http://www.ietf.org/id/draft-holmer-rmcat-transpo...): "
                + "the answer maps transport-wide cc to id 5, not to our offered 3 (RFC 8285 section 7"
        ),
        Mutation(
            name: "a DTLS-less profile",
            change: replacing("m=video 9 UDP/TLS/RTP/SAVPF 96 97", with: "m=video 9 RTP/AVPF 96 97"),
            code: .unsupportedTransport,
            reason: "has protocol 'RTP/AVPF', not UDP/TLS/RTP/SAVPF"
        ),
    ]

    @Test("each way an answer can fail to answer our offer is named", arguments: mutations)
    func mutation(_ mutation: Mutation) throws {
        let offer = try PublishOffer(Self.configuration())
        let text = Self.answer(mutation.change(Self.janusAnswer))
        guard let code = mutation.code else {
            let answer = try PublishAnswer(parsing: text, answering: offer)
            #expect(answer.video?.payloadType == 96)
            return
        }
        do {
            _ = try PublishAnswer(parsing: text, answering: offer)
            Issue.record("accepted: \(mutation.name)")
        } catch let error as JSEPError {
            #expect(error.code == code, "\(error)")
            #expect(error.reason.contains(mutation.reason), "\(error.reason)")
        }
    }

    @Test("a rejected audio section is reported and audio is not sent")
    func audioRejected() throws {
        let offer = try PublishOffer(Self.configuration())
        let lines = Self.janusAnswer.map {
            $0 == "m=audio 9 UDP/TLS/RTP/SAVPF 111" ? "m=audio 0 UDP/TLS/RTP/SAVPF 111" : $0
        }
        let answer = try PublishAnswer(parsing: Self.answer(lines), answering: offer)
        #expect(answer.audio == nil)
        #expect(answer.rejected == ["1: port 0"])
    }

    /// What the endpoint's answer does with our `a=extmap:3` transport-wide cc line, and what we
    /// stamp: RFC 8285 §7 keeps our id, the direction is the endpoint's own (§5).
    struct ExtmapCase: Sendable, CustomTestStringConvertible {
        var name: String
        var session: String? = nil
        var video: String? = nil
        var audio: String? = nil
        var videoID: UInt8?
        var audioID: UInt8?

        var testDescription: String { name }
    }

    static let extmapCases = [
        ExtmapCase(name: "left out (Janus' recorded answer): nil, not an error", videoID: nil, audioID: nil),
        ExtmapCase(
            name: "kept in both sections",
            video: transportWideExtmap("3"),
            audio: transportWideExtmap("3"),
            videoID: 3,
            audioID: 3
        ),
        ExtmapCase(name: "kept for video only", video: transportWideExtmap("3"), videoID: 3, audioID: nil),
        ExtmapCase(name: "at session level", session: transportWideExtmap("3"), videoID: 3, audioID: 3),
        ExtmapCase(
            name: "recvonly: the endpoint receives it",
            video: transportWideExtmap("3/recvonly"),
            videoID: 3,
            audioID: nil
        ),
        ExtmapCase(name: "sendrecv", video: transportWideExtmap("3/sendrecv"), videoID: 3, audioID: nil),
        ExtmapCase(
            name: "sendonly: only the endpoint would send it",
            video: transportWideExtmap("3/sendonly"),
            videoID: nil,
            audioID: nil
        ),
        ExtmapCase(name: "inactive", video: transportWideExtmap("3/inactive"), videoID: nil, audioID: nil),
        ExtmapCase(
            name: "another extension under id 3 is not ours",
            video: "a=extmap:3 urn:ietf:params:rtp-hdrext:sdes:mid",
            videoID: nil,
            audioID: nil
        ),
    ]

    static func janusAnswer(with extmap: ExtmapCase) -> [String] {
        var change: [@Sendable ([String]) -> [String]] = []
        if let line = extmap.session { change.append(inserting(line, after: "a=extmap-allow-mixed")) }
        if let line = extmap.video { change.append(inserting(line, after: "a=fmtp:97 apt=96")) }
        if let line = extmap.audio { change.append(inserting(line, after: "a=fmtp:111 stereo=1")) }
        return change.reduce(janusAnswer) { lines, change in change(lines) }
    }

    @Test("the answer's transport-wide cc a=extmap: agreed id, or none", arguments: extmapCases)
    func answeredTransportWideCC(_ extmap: ExtmapCase) throws {
        let offer = try PublishOffer(Self.configuration())
        let answer = try PublishAnswer(parsing: Self.answer(Self.janusAnswer(with: extmap)), answering: offer)
        #expect(answer.video?.transportWideSequenceNumberID == extmap.videoID)
        #expect(answer.audio?.transportWideSequenceNumberID == extmap.audioID)
        // Janus lists transport-cc for 96 either way; it counts only with the extension.
        #expect(answer.video?.feedback.contains(.transportWideCongestionControl) == (extmap.videoID != nil))
        #expect(answer.audio?.feedback.contains(.transportWideCongestionControl) == false)
    }

    @Test(
        "an answer that moves transport-wide cc to another id is refused, naming the line",
        arguments: [
            ExtmapCase(name: "video, id 5", video: transportWideExtmap("5"), videoID: nil, audioID: nil),
            ExtmapCase(name: "audio, two-byte id 15", audio: transportWideExtmap("15"), videoID: nil, audioID: nil),
            ExtmapCase(
                name: "session level, id 4",
                session: transportWideExtmap("4/recvonly"),
                videoID: nil,
                audioID: nil
            ),
        ]
    )
    func movedTransportWideCC(_ extmap: ExtmapCase) throws {
        let offer = try PublishOffer(Self.configuration())
        let lines = Self.janusAnswer(with: extmap)
        let moved = try #require(extmap.session ?? extmap.video ?? extmap.audio)
        let number = try #require(lines.firstIndex(of: moved)) + 1
        let error = #expect(throws: JSEPError.self) {
            try PublishAnswer(parsing: Self.answer(lines), answering: offer)
        }
        #expect(error?.code == .answerMismatch)
        #expect(error?.line == number)
        #expect(error?.reason.hasPrefix("line \(number) (a=extmap:") == true)
        #expect(error?.reason.contains("RFC 8285 section 7: an answer keeps the offered id") == true)
    }

    @Test("an answer's transport-wide cc we did not offer is not used")
    func unofferedTransportWideCC() throws {
        var configuration = try Self.configuration()
        configuration.headerExtensions = []
        let offer = try PublishOffer(configuration)
        let lines = Self.janusAnswer(
            with: ExtmapCase(name: "", video: Self.transportWideExtmap("7"), videoID: nil, audioID: nil)
        )
        let answer = try PublishAnswer(parsing: Self.answer(lines), answering: offer)
        #expect(answer.video?.transportWideSequenceNumberID == nil)
        #expect(answer.video?.feedback.contains(.transportWideCongestionControl) == false)
    }
}
