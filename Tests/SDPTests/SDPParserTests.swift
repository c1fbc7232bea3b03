import Testing

@testable import SDP

@Suite("SDP parser")
struct SDPParserTests {
    @Test("parse(write(x)) == x for our offer")
    func roundTripOffer() throws {
        let offer = try Fixtures.offer()
        #expect(try SDPParser.parse(SDPWriter.write(offer)) == offer)
        #expect(try SDPParser.parse(Fixtures.offerText) == offer)
    }

    @Test("parse(write(x)) == x with every optional field used")
    func roundTripEverything() throws {
        var description = try Fixtures.offer()
        description.sessionName = " "
        description.timing = SDPTiming(start: 3_600_000_000, stop: 3_600_003_600)
        description.direction = .inactive
        description.attributes = [
            SDPAttribute(name: "group", value: "BUNDLE video audio"), SDPAttribute(name: "ice-lite"),
        ]
        description.media[0].portCount = 2
        description.media[0].connection = try SDPAddress("2001:db8::7")
        description.media[0].rtcp = SDPRTCPAttribute(port: 5005, address: try SDPAddress("192.0.2.9"))
        description.media[0].rtcpMux = true
        description.media[0].formats.append(
            SDPRTPFormat(
                payloadType: 98,
                rtpmap: SDPRTPMap(encodingName: "rtx", clockRate: 90_000),
                parameters: [SDPFormatParameter(name: "apt", value: "96")]
            )
        )
        description.media[0].formats.append(SDPRTPFormat(payloadType: 0, rtpmap: nil))
        description.media[0].crypto.append(
            SDPCrypto(
                tag: 2,
                suite: "AES_CM_128_HMAC_SHA1_32",
                keys: [
                    SDPCryptoKey(keySalt: Fixtures.audioKey, lifetime: "2^20", mki: "1:4"),
                    SDPCryptoKey(keySalt: Fixtures.videoKey, mki: "2:4"),
                ],
                sessionParameters: ["KDR=1", "UNENCRYPTED_SRTCP"]
            )
        )
        description.media[0].ssrcAttributes.append(SDPSSRCAttribute(ssrc: 1, name: "msid", value: "stream track 2"))
        description.media[0].ssrcAttributes.append(SDPSSRCAttribute(ssrc: 1, name: "x-flag", value: nil))
        description.media[0].attributes = [
            SDPAttribute(name: "x-empty", value: "")
        ]
        description.media[0].rtcpFeedback = [
            .nack(payloadType: 96), SDPRTCPFeedback(payloadType: nil, type: "trr-int", parameter: "100"),
        ]
        description.media[0].ssrcGroups = [.flowIdentification(original: 1, retransmission: 2)]
        description.media.append(
            MediaDescription(
                kind: .application,
                port: 9,
                transport: SDPTransport(rawValue: "UDP/DTLS/SCTP"),
                otherFormats: ["webrtc-datachannel"],
                attributes: [SDPAttribute(name: "sctp-port", value: "5000"), SDPAttribute(name: "fmtp", value: "x y")]
            )
        )
        let text = try SDPWriter.write(description)
        #expect(try SDPParser.parse(text) == description)
    }

    /// What a browser-style subscriber might answer: LF line ends, extra lines we skip, a session
    /// connection, two payload types, rtcp-mux.
    @Test("a subscriber's answer with LF line ends")
    func subscriberAnswer() throws {
        let answer = """
            v=0
            o=mozilla...THIS_IS_SDPARTA-99.0 8912734 0 IN IP4 0.0.0.0
            s=-
            i=a subscriber
            c=IN IP4 192.0.2.10
            b=AS:2000
            t=0 0
            a=sendrecv
            a=msid-semantic:WMS *
            m=video 40000 RTP/SAVPF 96 97
            c=IN IP6 2001:db8::10
            b=AS:1800
            a=rtpmap:96 H264/90000
            a=rtpmap:97 rtx/90000
            a=fmtp:97 apt=96
            a=fmtp:96 profile-level-id = 42e01f ; packetization-mode=1;
            a=recvonly
            a=rtcp-mux
            a=crypto:1  AES_CM_128_HMAC_SHA1_80  inline:ZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXp7fH1+f4CB
            a=ssrc:99 cname:{bob}
            """
        let parsed = try SDPParser.parse(answer)
        #expect(parsed.origin.sessionID == 8_912_734 && parsed.origin.unicastAddress == "0.0.0.0")
        #expect(parsed.connection == (try SDPAddress("192.0.2.10")))
        #expect(parsed.direction == .sendrecv)
        #expect(parsed.attributes == [SDPAttribute(name: "msid-semantic", value: "WMS *")])
        let video = try #require(parsed.media.first)
        #expect(video.kind == .video && video.port == 40_000 && video.transport == .rtpSAVPF)
        #expect(video.connection?.family == .ipv6 && video.connection?.address == "2001:db8::10")
        #expect(video.formats.map(\.payloadType) == [96, 97])
        #expect(video.format(payloadType: 96)?.rtpmap?.encodingName == "H264")
        #expect(video.format(payloadType: 96)?.parameter("profile-level-id") == "42e01f")
        #expect(video.format(payloadType: 96)?.parameter("packetization-mode") == "1")
        #expect(video.format(payloadType: 97)?.parameter("apt") == "96")
        #expect(video.direction == .recvonly && video.rtcpMux && video.rtcp == nil)
        #expect(video.crypto.first?.suite == "AES_CM_128_HMAC_SHA1_80")
        #expect(video.crypto.first?.keys.first?.keySalt == Fixtures.audioKey)
        #expect(video.ssrcAttributes == [.cname(ssrc: 99, "{bob}")])
    }

    @Test(
        "malformed input names the line and the problem",
        arguments: [
            ("o=- 1 1 IN IP4 127.0.0.1\r\n", "line 1: expected v= here, found o="),
            ("v=1\r\n", "line 1: SDP version '1' is not 0"),
            ("v=0\r\ns=x\r\n", "line 2: expected o= here, found s="),
            ("v=0\r\no=- 1 1 IN IP4\r\n", "line 2: o= line needs 6 fields, found 5"),
            ("v=0\r\no=- x 1 IN IP4 127.0.0.1\r\n", "line 2: o= line has a non-numeric session id 'x'"),
            ("v=0\r\no=- 1 1 IN IPX 127.0.0.1\r\n", "line 2: o= address type 'IPX' is not IP4 or IP6"),
            (
                "v=0\r\no=- 1 1 IN IP4 h\r\ns=-\r\nc=IN IP4 300.1.1.1\r\n",
                "line 4: c= address '300.1.1.1' is not an IP4 address literal"
            ),
            (
                "v=0\r\no=- 1 1 IN IP4 h\r\ns=-\r\nc=IN IP4 224.2.1.1/127\r\n",
                "line 4: c= multicast address '224.2.1.1/127' is not supported"
            ),
            (
                "v=0\r\no=- 1 1 IN IP4 h\r\ns=-\r\nt=0 0\r\nm=video abc RTP/AVP 96\r\n",
                "line 5: m= line has a non-numeric port 'abc'"
            ),
            (
                "v=0\r\no=- 1 1 IN IP4 h\r\ns=-\r\nt=0 0\r\nm=video 70000 RTP/AVP 96\r\n",
                "line 5: m= line has an out-of-range port '70000' (0-65535)"
            ),
            (
                "v=0\r\no=- 1 1 IN IP4 h\r\ns=-\r\nt=0 0\r\nm=video 5004 RTP/AVP\r\n",
                "line 5: m= line needs media, port, protocol and a format"
            ),
            (
                "v=0\r\no=- 1 1 IN IP4 h\r\ns=-\r\nt=0 0\r\nm=video 5004  RTP/AVP 96\r\n",
                "line 5: m= line has an empty field (two spaces in a row?)"
            ),
            (
                "v=0\r\no=- 1 1 IN IP4 h\r\ns=-\r\nt=0 0\r\nm=video 5004 RTP/AVP 128\r\n",
                "line 5: payload type '128' is not a number 0-127"
            ),
            (
                "v=0\r\no=- 1 1 IN IP4 h\r\ns=-\r\nt=0 0\r\nm=video 5004 RTP/AVP 96\r\na=rtpmap:97 H264/90000\r\n",
                "line 6: a=rtpmap for payload type 97, which the m= line does not list"
            ),
            (
                "v=0\r\no=- 1 1 IN IP4 h\r\ns=-\r\nt=0 0\r\nm=video 5004 RTP/AVP 96\r\na=rtpmap:96 H264\r\n",
                "line 6: a=rtpmap encoding 'H264' is not '<name>/<clock rate>[/<channels>]'"
            ),
            (
                "v=0\r\no=- 1 1 IN IP4 h\r\ns=-\r\nt=0 0\r\nm=video 5004 RTP/AVP 96\r\na=rtpmap:96 H264/0\r\n",
                "line 6: a=rtpmap clock rate '0' is not a positive number"
            ),
            (
                "v=0\r\no=- 1 1 IN IP4 h\r\ns=-\r\nt=0 0\r\nm=video 5004 RTP/AVP 96\r\na=fmtp:96 ;;\r\n",
                "line 6: a=fmtp for payload type 96 has no parameters"
            ),
            (
                "v=0\r\no=- 1 1 IN IP4 h\r\ns=-\r\nt=0 0\r\nm=video 5004 RTP/AVP 96\r\na=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:###\r\n",
                "line 6: a=crypto inline key is not valid base64"
            ),
            (
                "v=0\r\no=- 1 1 IN IP4 h\r\ns=-\r\nt=0 0\r\nm=video 5004 RTP/AVP 96\r\na=crypto:1 AES_CM_128_HMAC_SHA1_80 uri:x\r\n",
                "line 6: a=crypto key method 'uri' is not supported (only inline:)"
            ),
            (
                "v=0\r\no=- 1 1 IN IP4 h\r\ns=-\r\nt=0 0\r\nm=video 5004 RTP/AVP 96\r\na=crypto:1234567890 X inline:AA==\r\n",
                "line 6: a=crypto tag '1234567890' is not 1-9 digits"
            ),
            (
                "v=0\r\no=- 1 1 IN IP4 h\r\ns=-\r\nt=0 0\r\nm=video 5004 RTP/AVP 96\r\na=rtcp:x\r\n",
                "line 6: a=rtcp has an invalid port 'x'"
            ),
            (
                "v=0\r\no=- 1 1 IN IP4 h\r\ns=-\r\nt=0 0\r\nm=video 5004 RTP/AVP 96\r\na=rtcp-mux:yes\r\n",
                "line 6: a=rtcp-mux takes no value"
            ),
            (
                "v=0\r\no=- 1 1 IN IP4 h\r\ns=-\r\nt=0 0\r\nm=video 5004 RTP/AVP 96\r\na=ssrc:-1 cname:x\r\n",
                "line 6: a=ssrc id '-1' is not a 32-bit number"
            ),
            (
                "v=0\r\no=- 1 1 IN IP4 h\r\ns=-\r\nt=0 0\r\nm=video 5004 RTP/AVP 96\r\na=sendonly\r\na=recvonly\r\n",
                "line 7: second direction attribute in this media section"
            ),
            (
                "v=0\r\no=- 1 1 IN IP4 h\r\ns=-\r\nt=0 0\r\nm=video 5004 RTP/AVP 96\r\ns=again\r\n",
                "line 6: s= is not allowed inside a media section"
            ),
            ("v=0\r\no=- 1 1 IN IP4 h\r\ns=-\r\nt=0 0\r\nx=1\r\n", "line 5: unknown line type 'x='"),
            ("v=0\r\no=- 1 1 IN IP4 h\r\ns=-\r\nt=0 0\r\na=\r\n", "line 5: attribute name '' is not a token"),
            (
                "v=0\r\no=- 1 1 IN IP4 h\r\ns=-\r\nt=0 0\r\nbad line\r\n",
                "line 5: expected '<letter>=' at the start of 'bad line'"
            ),
            ("v=0\r\no=- 1 1 IN IP4 h\r\n\r\ns=-\r\n", "line 3: empty line inside the description"),
            ("v=0\r\no=- 1 1 IN IP4 h\r\ns=x\ry\r\n", "line 3: carriage return inside the line"),
            ("v=0\r\no=- 1 1 IN IP4 h\r\ns=-\r\nt=0\r\n", "line 4: t= line must be two decimal times, found '0'"),
            ("v=0\r\no=- 1 1 IN IP4 h\r\ns=-\r\nt=0 0\r\ns=again\r\n", "line 5: s= may appear only once, at the start"),
            (
                "v=0\r\no=- 1 1 IN IP4 h\r\ns=-\r\nt=0 0\r\nt=0 0\r\n",
                "line 5: more than one t= line (repeated sessions) is not supported"
            ),
            ("v=0\r\no=- 1 1 IN IP4 h\r\ns=-\r\n", "the description has no t= line"),
            ("", "the description is empty"),
        ]
    )
    func malformed(text: String, message: String) {
        let error = #expect(throws: SDPError.self) { try SDPParser.parse(text) }
        #expect(error?.message == message)
        if message.hasPrefix("line ") {
            let number = Int(message.dropFirst(5).prefix { $0.isNumber })
            #expect(error?.line == number)
        }
    }

    @Test("a non-UTF-8 line and a NUL byte are refused by line")
    func invalidBytes() {
        let prefix = Array("v=0\r\no=- 1 1 IN IP4 h\r\n".utf8)
        let latin1 = #expect(throws: SDPError.self) {
            try SDPParser.parse(bytes: prefix + [0x73, 0x3D, 0xE9, 0x0D, 0x0A])
        }
        #expect(latin1?.code == .invalidCharacters)
        #expect(latin1?.message == "line 3: line is not valid UTF-8")
        let nul = #expect(throws: SDPError.self) { try SDPParser.parse(bytes: prefix + [0x73, 0x3D, 0x00]) }
        #expect(nul?.message == "line 3: NUL character inside the line")
    }

    @Test("limits are checked before parsing: size, line count, line length")
    func limits() throws {
        let tooLarge = #expect(throws: SDPError.self) { try SDPParser.parse(String(repeating: "a", count: 65_537)) }
        #expect(tooLarge?.code == .tooLarge)
        #expect(tooLarge?.message == "description of 65537 bytes exceeds the limit of 65536")

        let manyLines = String(repeating: "a=x\n", count: 1025)
        let tooMany = #expect(throws: SDPError.self) { try SDPParser.parse(manyLines) }
        #expect(tooMany?.code == .tooManyLines)
        #expect(tooMany?.message == "description has more than 1024 lines")

        let longLine = "v=0\r\no=- 1 1 IN IP4 h\r\ns=" + String(repeating: "n", count: 4095) + "\r\n"
        let tooLong = #expect(throws: SDPError.self) { try SDPParser.parse(longLine) }
        #expect(tooLong?.code == .lineTooLong)
        #expect(tooLong?.message == "line 3: line is longer than 4096 characters")

        // Exactly at the limit is fine: 4096 characters ("s=" + 4094).
        let atLimit = "v=0\r\no=- 1 1 IN IP4 h\r\ns=" + String(repeating: "n", count: 4094) + "\r\nt=0 0\r\n"
        #expect(try SDPParser.parse(atLimit).sessionName.count == 4094)

        let custom = SDPParser.Limits(maximumBytes: 10)
        #expect(throws: SDPError.self) { try SDPParser.parse(Fixtures.offerText, limits: custom) }
    }

    @Test("trailing empty lines and a missing final line end are accepted")
    func lenientEnds() throws {
        let base = "v=0\r\no=- 1 1 IN IP4 h\r\ns=-\r\nt=0 0"
        #expect(try SDPParser.parse(base).timing == .permanent)
        #expect(try SDPParser.parse(base + "\r\n\r\n\n").timing == .permanent)
    }
}
