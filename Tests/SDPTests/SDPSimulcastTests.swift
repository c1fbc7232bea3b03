import Testing

@testable import SDP

@Suite("SDP a=rid (RFC 8851) and a=simulcast (RFC 8853)")
struct SDPSimulcastTests {
    /// A session around one video section's attribute lines, for parsing.
    static func text(_ lines: [String], formats: String = "96 97 98 99") -> String {
        (["v=0", "o=- 1 1 IN IP4 h", "s=-", "t=0 0", "m=video 9 RTP/AVPF \(formats)"] + lines)
            .joined(separator: "\r\n") + "\r\n"
    }

    static func video(_ lines: [String], formats: String = "96 97 98 99") throws -> MediaDescription {
        try #require(try SDPParser.parse(text(lines, formats: formats)).media.first)
    }

    static func streams(_ rids: [String]) -> [SDPSimulcast.Stream] {
        rids.map { rid in
            SDPSimulcast.Stream(
                alternatives: rid.split(separator: ",").map {
                    $0.hasPrefix("~")
                        ? SDPSimulcast.Alternative(rid: String($0.dropFirst()), isPaused: true)
                        : SDPSimulcast.Alternative(rid: String($0))
                }
            )
        }
    }

    struct SimulcastCase: Sendable, CustomTestStringConvertible {
        var name: String
        var value: String
        var send: [String]
        var receive: [String]
        /// How it is written back: send part first.
        var written: String

        var testDescription: String { name }
    }

    static let simulcastCases = [
        SimulcastCase(
            name: "RFC 8853 section 5.1: alternatives and paused streams in both directions",
            value: "send 1,2,3;~4,~5 recv 6;~7,~8",
            send: ["1,2,3", "~4,~5"],
            receive: ["6", "~7,~8"],
            written: "send 1,2,3;~4,~5 recv 6;~7,~8"
        ),
        SimulcastCase(
            name: "RFC 8853 section 6: an answer, recv part first",
            value: "recv 1;2 send 4",
            send: ["4"],
            receive: ["1", "2"],
            written: "send 4 recv 1;2"
        ),
        SimulcastCase(
            name: "RFC 8853 section 6: an offer with two alternatives for the second stream",
            value: "send 1;2,3 recv 4",
            send: ["1", "2,3"],
            receive: ["4"],
            written: "send 1;2,3 recv 4"
        ),
        SimulcastCase(
            name: "our WHIP offer: three layers, highest first",
            value: "send f;l;q",
            send: ["f", "l", "q"],
            receive: [],
            written: "send f;l;q"
        ),
        SimulcastCase(
            name: "Janus' answer to it",
            value: "recv f;l;q",
            send: [],
            receive: ["f", "l", "q"],
            written: "recv f;l;q"
        ),
        SimulcastCase(
            name: "a paused layer in an answer",
            value: "recv h;~m;l",
            send: [],
            receive: ["h", "~m", "l"],
            written: "recv h;~m;l"
        ),
        SimulcastCase(
            name: "rid-ids with '-' and '_'",
            value: "send hi-res;lo_res",
            send: ["hi-res", "lo_res"],
            receive: [],
            written: "send hi-res;lo_res"
        ),
    ]

    @Test("a=simulcast: parsed, typed and written back", arguments: simulcastCases)
    func simulcast(_ example: SimulcastCase) throws {
        let video = try Self.video(["a=simulcast:\(example.value)"])
        let simulcast = try #require(video.simulcast)
        #expect(simulcast.send == Self.streams(example.send))
        #expect(simulcast.receive == Self.streams(example.receive))
        #expect(video.attributes.isEmpty, "typed, not kept as a generic attribute")
        #expect(simulcast.attributeValue == example.written)
    }

    struct RIDCase: Sendable, CustomTestStringConvertible {
        var name: String
        var value: String
        var rid: SDPRID
        var payloadTypes: [UInt8]?

        var testDescription: String { name }
    }

    static func restrictions(_ pairs: [(String, String?)]) -> [SDPRIDRestriction] {
        pairs.map { SDPRIDRestriction(name: $0.0, value: $0.1) }
    }

    static let ridCases = [
        RIDCase(
            name: "RFC 8853 section 6: a send stream restricted to a payload type and a size",
            value: "1 send pt=97;max-width=1280;max-height=720",
            rid: SDPRID(
                id: "1",
                direction: .send,
                restrictions: restrictions([("pt", "97"), ("max-width", "1280"), ("max-height", "720")])
            ),
            payloadTypes: [97]
        ),
        RIDCase(
            name: "RFC 8853 section 6: an answer's recv stream",
            value: "2 recv pt=98;max-width=320;max-height=180",
            rid: SDPRID(
                id: "2",
                direction: .receive,
                restrictions: restrictions([("pt", "98"), ("max-width", "320"), ("max-height", "180")])
            ),
            payloadTypes: [98]
        ),
        RIDCase(
            name: "RFC 8851 section 11 style: several payload types, bitrate and frame rate",
            value: "5 send pt=96,98;max-br=64000;max-width=1280;max-height=720;max-fps=30",
            rid: SDPRID(
                id: "5",
                direction: .send,
                restrictions: restrictions([
                    ("pt", "96,98"), ("max-br", "64000"), ("max-width", "1280"), ("max-height", "720"),
                    ("max-fps", "30"),
                ])
            ),
            payloadTypes: [96, 98]
        ),
        RIDCase(
            name: "RFC 8851 section 11 style: a layer that depends on others",
            value: "6 send max-fps=29.97;max-bpp=0.5;depend=1,5",
            rid: SDPRID(
                id: "6",
                direction: .send,
                restrictions: restrictions([("max-fps", "29.97"), ("max-bpp", "0.5"), ("depend", "1,5")])
            )
        ),
        RIDCase(
            name: "our offer and Janus' answer: no restrictions",
            value: "f recv",
            rid: SDPRID(id: "f", direction: .receive)
        ),
        RIDCase(
            name: "a restriction without a value, and an unknown one whose value has a space",
            value: "q send max-width;x-label=low res",
            rid: SDPRID(
                id: "q",
                direction: .send,
                restrictions: restrictions([("max-width", nil), ("x-label", "low res")])
            )
        ),
        RIDCase(
            name: "an unknown restriction with an empty value",
            value: "hi-res_2 send foo=",
            rid: SDPRID(id: "hi-res_2", direction: .send, restrictions: restrictions([("foo", "")]))
        ),
    ]

    @Test("a=rid: parsed, typed and written back unchanged", arguments: ridCases)
    func rid(_ example: RIDCase) throws {
        let video = try Self.video(["a=rid:\(example.value)"])
        #expect(video.rids == [example.rid])
        #expect(video.rids.first?.payloadTypes == example.payloadTypes)
        #expect(video.rids.first?.attributeValue == example.value)
        #expect(video.attributes.isEmpty)
    }

    /// RFC 8853 §6's offer, as a whole section: written in our order, parsed back equal.
    static let sectionText = """
        v=0\r
        o=- 1 1 IN IP4 127.0.0.1\r
        s=-\r
        t=0 0\r
        m=video 49300 RTP/AVP 97 98 99\r
        a=rtpmap:97 H264/90000\r
        a=fmtp:97 profile-level-id=42c01f;max-fs=3600;max-mbps=108000\r
        a=rtpmap:98 H264/90000\r
        a=fmtp:98 profile-level-id=42c00b;max-fs=240;max-mbps=3600\r
        a=rtpmap:99 VP8/90000\r
        a=fmtp:99 max-fs=240;max-fr=30\r
        a=rid:1 send pt=97;max-width=1280;max-height=720\r
        a=rid:2 send pt=98;max-width=320;max-height=180\r
        a=rid:3 send pt=99;max-width=320;max-height=180\r
        a=rid:4 recv pt=97\r
        a=simulcast:send 1;2,3 recv 4\r
        a=extmap:1 urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id\r

        """

    @Test("a whole section round-trips: written exactly, parsed back equal")
    func section() throws {
        let parsed = try SDPParser.parse(Self.sectionText)
        let video = try #require(parsed.media.first)
        #expect(video.rids.map(\.id) == ["1", "2", "3", "4"])
        #expect(video.rids.map(\.direction) == [.send, .send, .send, .receive])
        #expect(video.rids.map(\.payloadTypes) == [[97], [98], [99], [97]])
        #expect(video.simulcast == SDPSimulcast(send: Self.streams(["1", "2,3"]), receive: Self.streams(["4"])))
        #expect(SDPSimulcast.rids(of: video.simulcast?.send ?? []) == ["1", "2", "3"])
        #expect(
            video.attributes == [SDPAttribute(name: "extmap", value: "1 urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id")]
        )
        #expect(try SDPWriter.write(parsed) == Self.sectionText)
    }

    @Test("outside an RTP section a=rid and a=simulcast stay generic attributes")
    func nonRTP() throws {
        let text =
            "v=0\r\no=- 1 1 IN IP4 h\r\ns=-\r\nt=0 0\r\nm=application 9 UDP/DTLS/SCTP webrtc-datachannel\r\n"
            + "a=rid:whatever\r\na=simulcast:anything\r\n"
        let media = try #require(try SDPParser.parse(text).media.first)
        #expect(media.rids.isEmpty && media.simulcast == nil)
        #expect(media.attributes.map(\.name) == ["rid", "simulcast"])
    }

    static let tooManyRIDs = (0...SDPRID.maximumPerSection).map { "a=rid:r\($0) send" }
    static let tooManyRestrictions =
        "a=rid:f send " + (0...SDPRID.maximumRestrictions).map { "x\($0)=1" }.joined(separator: ";")
    static let tooManySimulcastRIDs =
        "a=simulcast:send " + (0...SDPSimulcast.maximumIdentifiers).map { "r\($0)" }.joined(separator: ";")

    @Test(
        "malformed a=rid and a=simulcast name the line and what is wrong",
        arguments: [
            (["a=rid:f"], "line 6: a=rid needs '<rid-id> <send|recv> [<restrictions>]'"),
            (["a=rid:f sendonly"], "line 6: a=rid direction 'sendonly' is not send or recv (RFC 8851 section 10)"),
            (["a=rid:f SEND"], "line 6: a=rid direction 'SEND' is not send or recv (RFC 8851 section 10)"),
            (
                ["a=rid:f.1 send"],
                "line 6: a=rid id 'f.1' is not 1-255 letters, digits, '-' and '_' (RFC 8851 section 10)"
            ),
            (["a=rid: send"], "line 6: a=rid id '' is not 1-255 letters, digits, '-' and '_' (RFC 8851 section 10)"),
            (
                ["a=rid:" + String(repeating: "a", count: 256) + " send"],
                "line 6: a=rid id '\(String(repeating: "a", count: 40))...' is not 1-255 letters, digits, '-' and '_' "
                    + "(RFC 8851 section 10)"
            ),
            (
                ["a=rid:f send "],
                "line 6: a=rid restriction '' is not '<name>[=<value>]' with a name of letters, digits and '-'"
            ),
            (
                ["a=rid:f send max-width=1;;max-height=2"],
                "line 6: a=rid restriction '' is not '<name>[=<value>]' with a name of letters, digits and '-'"
            ),
            (
                ["a=rid:f send max width=1"],
                "line 6: a=rid restriction 'max width=1' is not '<name>[=<value>]' with a name of letters, digits and '-'"
            ),
            (
                ["a=rid:f send max-width=1280;pt=96"],
                "line 6: a=rid pt= must come before the other restrictions (RFC 8851 section 10)"
            ),
            (["a=rid:f send pt="], "line 6: a=rid pt= list '' is not payload types 0-127 separated by ','"),
            (["a=rid:f send pt=96,,97"], "line 6: a=rid pt= list '96,,97' is not payload types 0-127 separated by ','"),
            (["a=rid:f send pt=128"], "line 6: a=rid pt= list '128' is not payload types 0-127 separated by ','"),
            (["a=rid:f send pt=100"], "line 6: a=rid for payload type 100, which the m= line does not list"),
            (
                ["a=rid:f send max-width=12.5"],
                "line 6: a=rid restriction 'max-width=12.5' does not follow RFC 8851 section 10 for 'max-width'"
            ),
            (
                ["a=rid:f send max-fps=1.2.3"],
                "line 6: a=rid restriction 'max-fps=1.2.3' does not follow RFC 8851 section 10 for 'max-fps'"
            ),
            (
                ["a=rid:f send depend"],
                "line 6: a=rid restriction 'depend' does not follow RFC 8851 section 10 for 'depend'"
            ),
            (
                ["a=rid:f send depend=a,,b"],
                "line 6: a=rid restriction 'depend=a,,b' does not follow RFC 8851 section 10 for 'depend'"
            ),
            (["a=rid:f send max-width=1;max-width=2"], "line 6: a=rid 'f' restricts 'max-width' twice"),
            (["a=rid:f send x=\u{7F}"], "line 6: a=rid restriction 'x' has a value with a character outside %x20-7E"),
            ([tooManyRestrictions], "line 6: a=rid 'f' has 17 restrictions; at most 16 are read"),
            (["a=rid:f send", "a=rid:f recv"], "line 7: a=rid 'f' is already in this media section"),
            (tooManyRIDs, "line 38: more than 32 a=rid lines in this media section"),
            (
                ["a=simulcast:f;l;q"],
                "line 6: a=simulcast needs '<send|recv> <streams>', once or once per direction (RFC 8853 section 5.1)"
            ),
            (
                ["a=simulcast: recv rid=f;l"],
                "line 6: a=simulcast needs '<send|recv> <streams>', once or once per direction (RFC 8853 section 5.1)"
            ),
            (
                ["a=simulcast:sendrecv f;l"],
                "line 6: a=simulcast direction 'sendrecv' is not send or recv (RFC 8853 section 5.1)"
            ),
            (
                ["a=simulcast:send f recv l send q"],
                "line 6: a=simulcast needs '<send|recv> <streams>', once or once per direction (RFC 8853 section 5.1)"
            ),
            (["a=simulcast:send f send l"], "line 6: a=simulcast lists direction send twice"),
            (
                ["a=simulcast:send f;;q"],
                "line 6: a=simulcast rid '' is not 1-255 letters, digits, '-' and '_' (RFC 8851 section 10)"
            ),
            (
                ["a=simulcast:send f,;q"],
                "line 6: a=simulcast rid '' is not 1-255 letters, digits, '-' and '_' (RFC 8851 section 10)"
            ),
            (
                ["a=simulcast:send ~~f"],
                "line 6: a=simulcast rid '~f' is not 1-255 letters, digits, '-' and '_' (RFC 8851 section 10)"
            ),
            (["a=simulcast:send f;l recv f"], "line 6: a=simulcast names rid 'f' twice"),
            ([tooManySimulcastRIDs], "line 6: a=simulcast names more than 32 rids"),
            (["a=simulcast:send f", "a=simulcast:send l"], "line 7: second a=simulcast in this media section"),
        ]
    )
    func malformed(lines: [String], message: String) {
        let error = #expect(throws: SDPError.self) { try SDPParser.parse(Self.text(lines)) }
        #expect(error?.code == .malformedLine || error?.code == .unexpectedLine)
        #expect(error?.message == message)
    }

    @Test("the writer refuses what the parser could not read back")
    func writerChecks() throws {
        var description = try SDPParser.parse(Self.sectionText)
        func refused(_ message: String) {
            let error = #expect(throws: SDPError.self) { try SDPWriter.write(description) }
            #expect(error?.code == .invalidDescription)
            #expect(error?.message == message)
        }
        let original = description.media[0]
        description.media[0].rids.append(SDPRID(id: "1", direction: .receive))
        refused("media section 1: a=rid '1' is listed twice")
        description.media[0] = original
        description.media[0].rids[0].id = "a b"
        refused("media section 1: a=rid id 'a b' is not 1-255 letters, digits, '-' and '_' (RFC 8851 section 10)")
        description.media[0] = original
        description.media[0].rids[0].restrictions.append(SDPRIDRestriction(name: "x", value: "a;b"))
        refused("media section 1: a=rid '1' would not read back as written")
        description.media[0] = original
        description.media[0].rids[0].restrictions = [SDPRIDRestriction(name: "pt", value: "100")]
        refused("media section 1: a=rid '1' restricts to payload type 100, which the m= line does not list")
        description.media[0] = original
        description.media[0].simulcast = SDPSimulcast()
        refused("media section 1: a=simulcast lists no stream in either direction")
        description.media[0].simulcast = SDPSimulcast(send: [SDPSimulcast.Stream(alternatives: [])])
        refused("media section 1: a=simulcast rid '' is not 1-255 letters, digits, '-' and '_' (RFC 8851 section 10)")
        description.media[0].simulcast = SDPSimulcast(send: Self.streams(["f"]), receive: Self.streams(["f"]))
        refused("media section 1: a=simulcast names rid 'f' twice")
        description.media[0] = original
        description.media[0].attributes.append(SDPAttribute(name: "simulcast", value: "send 1"))
        refused("media section 1: a=simulcast has a typed field; set that instead of a generic attribute")
    }
}
