import Testing

@testable import SDP

@Suite("SDP writer")
struct SDPWriterTests {
    @Test("our offer is written exactly as the hand-written SDP")
    func exactOffer() throws {
        #expect(try SDPWriter.write(Fixtures.offer()) == Fixtures.offerText)
    }

    @Test("plain RTP/AVP variant, rtcp-mux and IPv6")
    func plainVariant() throws {
        var description = try Fixtures.offer()
        description.connection = .ipv6Loopback
        description.origin = SDPOrigin(sessionID: 7, addressFamily: .ipv6, unicastAddress: "::1")
        for index in description.media.indices {
            description.media[index].transport = .rtp(encrypted: false)
            description.media[index].crypto = []
            description.media[index].rtcp = nil
            description.media[index].rtcpMux = true
            description.media[index].direction = .recvonly
            description.media[index].mid = nil
            description.media[index].rtcpFeedback = [.pictureLossIndication(payloadType: nil)]
        }
        description.media[1].formats[0] = .opus(
            payloadType: 111,
            parameters: OpusFormatParameters(usesInbandFEC: false)
        )
        let text = try SDPWriter.write(description)
        #expect(text.hasPrefix("v=0\r\no=- 7 1 IN IP6 ::1\r\ns=rtc-publisher\r\nc=IN IP6 ::1\r\nt=0 0\r\n"))
        #expect(text.contains("m=video 5004 RTP/AVP 96\r\n"))
        #expect(
            text.contains(
                "\r\na=rtcp-fb:* nack pli\r\na=recvonly\r\na=rtcp-mux\r\na=ssrc:305419896 cname:alice_sub\r\n"
            )
        )
        #expect(
            text.contains(
                "m=audio 5006 RTP/AVP 111\r\na=rtpmap:111 opus/48000/2\r\na=fmtp:111 minptime=10;sprop-stereo=1;stereo=1\r\n"
            )
        )
        #expect(!text.contains("crypto"))
        #expect(!text.contains("useinbandfec"))
    }

    @Test("every line ends in CRLF and no bare LF occurs")
    func lineEnds() throws {
        let text = try SDPWriter.write(Fixtures.offer())
        let bytes = Array(text.utf8)
        for (index, byte) in bytes.enumerated() where byte == 0x0A {
            #expect(index > 0 && bytes[index - 1] == 0x0D)
        }
        #expect(text.hasSuffix("\r\n"))
    }

    @Test("a random origin has a fresh session id")
    func randomOrigin() {
        let first = SDPOrigin.random()
        let second = SDPOrigin.random()
        #expect(first.sessionID != second.sessionID)
        #expect(first.sessionID < 1 << 62 && first.sessionID > 0)
        #expect(first.unicastAddress == "127.0.0.1" && first.username == "-")
    }

    @Test(
        "descriptions the parser could not read back are refused",
        arguments: [
            ("session name with a line break", "session name must not contain line breaks or NUL"),
            (
                "generic crypto attribute",
                "media section 1: a=crypto has a typed field; set that instead of a generic attribute"
            ),
            ("payload type listed twice", "media section 1: payload type 96 listed twice"),
            ("payload type above 127", "media section 1: payload type 200 is above 127"),
            (
                "fmtp value with semicolon",
                "media section 2: fmtp minptime value must not contain ';' or line breaks, nor start or end with a space"
            ),
            ("cname with a line break", "media section 1: ssrc cname value contains a line break"),
            ("mid with a space", "media section 1: mid 'a b' is not a token"),
            ("crypto suite with a dash", "media section 1: crypto suite 'AES-CM' is not letters, digits and '_'"),
            ("no formats", "media section 2: an RTP m= line needs at least one payload type"),
        ]
    )
    func refusedDescriptions(problem: String, message: String) throws {
        var description = try Fixtures.offer()
        switch problem {
        case "session name with a line break": description.sessionName = "evil\r\na=inject"
        case "generic crypto attribute":
            description.media[0].attributes = [SDPAttribute(name: "crypto", value: "2 X inline:AA==")]
        case "payload type listed twice": description.media[0].formats.append(description.media[0].formats[0])
        case "payload type above 127": description.media[0].formats[0].payloadType = 200
        case "fmtp value with semicolon": description.media[1].formats[0].parameters[0].value = "10;x=1"
        case "cname with a line break": description.media[0].ssrcAttributes[0].value = "a\nb"
        case "mid with a space": description.media[0].mid = "a b"
        case "crypto suite with a dash": description.media[0].crypto[0].suite = "AES-CM"
        default: description.media[1].formats = []
        }
        let error = #expect(throws: SDPError.self) { try SDPWriter.write(description) }
        #expect(error?.code == .invalidDescription)
        #expect(error?.message == message)
    }

    @Test("crypto values print without their key")
    func cryptoRedaction() throws {
        let description = try Fixtures.offer()
        var dumped = ""
        dump(description, to: &dumped)
        for text in ["\(description)", String(reflecting: description), dumped] {
            #expect(!text.contains("AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwd"))
            #expect(!text.contains("[0, 1, 2, 3"), "raw key bytes must not print")
            #expect(!text.contains("100, 101, 102"), "raw key bytes must not print")
            #expect(text.contains("redacted"))
        }
    }
}

@Suite("Codec format parameters")
struct CodecParameterTests {
    /// H.264 §7.3.2.1.1: SPS bytes 1-3 are profile_idc, constraint flags, level_idc.
    @Test(
        "profile-level-id from real SPS bytes",
        arguments: [
            ([0x67, 0x42, 0xC0, 0x1F, 0xDA, 0x02, 0x80, 0xBF, 0xE5, 0xC0, 0x44], "42c01f"),  // Constrained Baseline 3.1
            ([0x67, 0x42, 0xC0, 0x0A, 0xDA, 0x10, 0x9B, 0x01, 0x10], "42c00a"),  // x264 64x64 baseline, level 1
            ([0x67, 0x64, 0x00, 0x28, 0xAC, 0xD9, 0x40, 0x78], "640028"),  // High 4.0
            ([0x27, 0x4D, 0x40, 0x1E, 0x95, 0xA0], "4d401e"),  // Main 3.0, NRI 1
        ] as [([UInt8], String)]
    )
    func profileLevelID(sps: [UInt8], expected: String) throws {
        #expect(try H264FormatParameters.profileLevelID(sequenceParameterSet: sps) == expected)
        let parameters = try H264FormatParameters(sequenceParameterSet: sps, pictureParameterSet: [0x68, 0xEE])
        #expect(parameters.profileLevelID == expected)
    }

    @Test(
        "parameter sets that are not SPS/PPS NAL units are refused",
        arguments: [
            ([0x67, 0x42, 0xC0], [0x68, 0xCE], "SPS of 3 bytes is too short (at least 4)"),
            (
                [0, 0, 0, 1, 0x67, 0x42, 0xC0, 0x1F], [0x68, 0xCE],
                "SPS starts with an Annex B start code; pass the NAL unit without it"
            ),
            ([0x68, 0x42, 0xC0, 0x1F], [0x68, 0xCE], "SPS header byte 0x68 is not a NAL unit of type 7"),
            ([0xE7, 0x42, 0xC0, 0x1F], [0x68, 0xCE], "SPS header byte 0xe7 is not a NAL unit of type 7"),
            ([0x67, 0x42, 0xC0, 0x1F], [0x67, 0xCE], "PPS header byte 0x67 is not a NAL unit of type 8"),
            ([0x67, 0x42, 0xC0, 0x1F], [0x68], "PPS of 1 bytes is too short (at least 2)"),
        ] as [([UInt8], [UInt8], String)]
    )
    func invalidParameterSets(sps: [UInt8], pps: [UInt8], message: String) {
        let error = #expect(throws: SDPError.self) {
            try H264FormatParameters(sequenceParameterSet: sps, pictureParameterSet: pps)
        }
        #expect(error?.code == .invalidParameterSet)
        #expect(error?.message == message)
    }

    @Test("opus parameters follow RFC 7587 §7")
    func opus() {
        let withFEC = OpusFormatParameters(usesInbandFEC: true).formatParameters
        #expect(
            withFEC.map { "\($0.name)=\($0.value ?? "")" } == [
                "minptime=10", "useinbandfec=1", "sprop-stereo=1", "stereo=1",
            ]
        )
        let withoutFEC = OpusFormatParameters(usesInbandFEC: false, sendsStereo: false).formatParameters
        #expect(withoutFEC.map { "\($0.name)=\($0.value ?? "")" } == ["minptime=10", "sprop-stereo=0", "stereo=1"])
        let format = SDPRTPFormat.opus(parameters: OpusFormatParameters(usesInbandFEC: true))
        #expect(format.rtpmap == SDPRTPMap(encodingName: "opus", clockRate: 48_000, channels: 2))
        #expect(format.parameter("USEINBANDFEC") == "1")
        #expect(format.payloadType == 97)
    }
}
