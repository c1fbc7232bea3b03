import Foundation
import JSEP
import SDP
import Testing

@Suite("WebRTC offer parser")
struct OfferParserTests {
    @Test("the Chromium offer: sections, ICE, DTLS, extmap, candidates")
    func chromium() throws {
        let offer = try WebRTCOffer(parsing: OfferFixtures.chromium.text)
        #expect(offer.bundleGroup == .bundle(["0", "1"]))
        #expect(offer.msidSemantic == MSIDSemantic(semantic: "WMS"))
        #expect(offer.allowsMixedHeaderExtensions)
        #expect(!offer.isICELite)
        #expect(offer.sections.map(\.kind) == [.audio, .video])
        #expect(offer.sections.map(\.line) == [8, 39])
        let audio = offer.sections[0]
        #expect(audio.iceCredentials == (try ICECredentials(ufrag: "8hhY", password: "asd88fgpdd777uzjYhagZg3x")))
        #expect(audio.iceOptions == ["trickle"])
        #expect(audio.setup == .actpass)
        #expect(audio.direction == .recvonly)
        #expect(audio.rtcpReducedSize)
        #expect(audio.fingerprints.map(\.hashFunction) == [.sha256])
        #expect(audio.fingerprints.first?.digest.count == 32)
        #expect(audio.headerExtensions.map(\.id) == [1, 2, 3, 4])
        #expect(audio.candidates.count == 3)
        #expect(audio.skippedCandidates.map(\.address) == [.hostName("6f0c3c7e-6a4e-4d5b-9e0f-2b1c8d7a4e31.local")])
        #expect(audio.candidates[1].relatedAddress == .ip(try SDPAddress("192.0.2.20")))
        #expect(audio.candidates[1].relatedPort == 54400)
        #expect(audio.candidates[2].transport == .tcp)
        #expect(audio.candidates[2].extensions.first == .init(name: "tcptype", value: "active"))
        let video = offer.sections[1]
        #expect(video.candidates.isEmpty)
        #expect(video.retransmissionPayloadType(for: 102) == 103)
        #expect(video.retransmissionPayloadType(for: 106) == 107)
        #expect(video.headerExtensions.contains { $0.uri == HeaderExtensionMapping.transportWideCC && $0.id == 3 })
    }

    @Test("Firefox's session-level fingerprint and ice-options reach every section")
    func sessionDefaults() throws {
        let offer = try WebRTCOffer(parsing: OfferFixtures.firefox.text)
        for section in offer.sections {
            #expect(section.fingerprints.map(\.hashFunction) == [.sha256])
            #expect(section.iceOptions == ["trickle"])
            #expect(section.endOfCandidates)
        }
        #expect(
            offer.sections[0].headerExtensions[1]
                == .init(id: 2, direction: .recvonly, uri: "urn:ietf:params:rtp-hdrext:csrc-audio-level")
        )
        #expect(offer.msidSemantic == MSIDSemantic(semantic: "WMS", identifiers: ["*"]))
    }

    @Test("aiortc's three fingerprints are all kept, in order")
    func fingerprints() throws {
        let offer = try WebRTCOffer(parsing: OfferFixtures.aiortc.text)
        #expect(offer.sections[0].fingerprints.map(\.hashFunction) == [.sha256, .sha384, .sha512])
        #expect(offer.sections[0].fingerprints.map(\.digest.count) == [32, 48, 64])
        #expect(
            offer.sections[0].fingerprints[0].attributeValue
                == "sha-256 8B:9E:3D:73:71:EC:6D:CD:4B:46:84:35:47:C1:06:D6:E0:7E:5E:5E:38:05:E6:8B:6E:7A:CE:F6:3B:24:DE:88"
        )
    }

    /// Each case breaks one line of a fixture; the error must name that line, show it, and say
    /// what is wrong.
    struct BadLine: Sendable, CustomTestStringConvertible {
        let name: String
        let fixture: OfferFixtures.Fixture
        let old: String
        let new: String
        let problem: String
        var code: JSEPError.Code = .malformedOffer
        /// The changed text also appears earlier in the fixture; the error is at its last line.
        var lastOccurrence = false

        var testDescription: String { name }
    }

    static let badLines = [
        BadLine(
            name: "short ice-pwd",
            fixture: OfferFixtures.chromium,
            old: "a=ice-pwd:asd88fgpdd777uzjYhagZg3x",
            new: "a=ice-pwd:short",
            problem: "(a=ice-pwd:<redacted>): ice-pwd has 5 characters; RFC 8839 needs 22 to 256"
        ),
        BadLine(
            name: "ice-ufrag with a space",
            fixture: OfferFixtures.gstreamer,
            old: "a=ice-ufrag:oTXrkw7oB5Q3G3N8vd9uWcbZ4cUTnKg5",
            new: "a=ice-ufrag:oTXr kw7o",
            problem: "(a=ice-ufrag:oTXr kw7o): ice-ufrag has a character other than letters, digits, '+' and '/'"
        ),
        BadLine(
            name: "two ice-ufrag lines in one section",
            fixture: OfferFixtures.aiortc,
            old: "a=ice-ufrag:Qm3T",
            new: "a=ice-ufrag:Qm3T\r\na=ice-ufrag:Qm3U",
            problem: "(a=ice-ufrag:Qm3U): a second a=ice-ufrag at this level"
        ),
        BadLine(
            name: "fingerprint that is not hex",
            fixture: OfferFixtures.gstreamer,
            old: "sha-256 27:80:04",
            new: "sha-256 27:8G:04",
            problem: "(a=fingerprint:sha-256 27:8G:04:53:24:5D:9A:B4:5C:5C:35:BE:44...): "
                + "fingerprint '27:8G:04:53:24:5D:9A:B4:...' is not hex byte pairs separated by ':'"
        ),
        BadLine(
            name: "sha-256 fingerprint of the wrong length",
            fixture: OfferFixtures.gstreamer,
            old: ":98:1B:14:A2",
            new: ":98:1B:14",
            problem: "(a=fingerprint:sha-256 27:80:04:53:24:5D:9A:B4:5C:5C:35:BE:44...): "
                + "a sha-256 fingerprint has 32 bytes, this one 31"
        ),
        BadLine(
            name: "unknown setup",
            fixture: OfferFixtures.gstreamer,
            old: "a=setup:actpass",
            new: "a=setup:maybe",
            problem: "(a=setup:maybe): a=setup is not active, passive, actpass or holdconn"
        ),
        BadLine(
            name: "candidate without typ",
            fixture: OfferFixtures.chromium,
            old: "54400 typ host generation 0 network-id 1 network-cost 10",
            new: "54400 type host generation 0 network-id 1 network-cost 10",
            problem: "(a=candidate:2999745851 1 udp 2122260223 192.0.2.20 54400 typ...): "
                + "expected 'typ' after the port, found 'type'"
        ),
        BadLine(
            name: "candidate with a bad IPv4 address",
            fixture: OfferFixtures.gstreamer,
            old: "198.51.100.7 48702",
            new: "198.51.100.700 48702",
            problem: "(a=candidate:1 1 UDP 2015363327 198.51.100.700 48702 typ host): "
                + "address '198.51.100.700' is not an IPv4 literal"
        ),
        BadLine(
            name: "candidate with a component of 0",
            fixture: OfferFixtures.gstreamer,
            old: "a=candidate:1 1 UDP",
            new: "a=candidate:1 0 UDP",
            problem: "(a=candidate:1 0 UDP 2015363327 198.51.100.7 48702 typ host): component '0' is not a number 1-256"
        ),
        BadLine(
            name: "candidate extension without a value",
            fixture: OfferFixtures.gstreamer,
            old: "typ host tcptype active",
            new: "typ host tcptype",
            problem: "(a=candidate:2 1 TCP 1015021823 198.51.100.7 9 typ host tcpty...): "
                + "extension 'tcptype' has no value"
        ),
        BadLine(
            name: "candidate at session level",
            fixture: OfferFixtures.gstreamer,
            old: "a=ice-options:trickle",
            new: "a=candidate:1 1 UDP 2015363327 198.51.100.7 48702 typ host",
            problem: "(a=candidate:1 1 UDP 2015363327 198.51.100.7 48702 typ host): "
                + "a=candidate belongs in an m-section, not at session level"
        ),
        BadLine(
            name: "BUNDLE naming an unknown mid",
            fixture: OfferFixtures.chromium,
            old: "a=group:BUNDLE 0 1",
            new: "a=group:BUNDLE 0 1 7",
            problem: "(a=group:BUNDLE 0 1 7): a=group:BUNDLE names mid '7', which no m-section has"
        ),
        BadLine(
            name: "mid used twice",
            fixture: OfferFixtures.aiortc,
            old: "a=mid:1",
            new: "a=mid:0",
            problem: "(a=mid:0): mid '0' is already used by another m-section",
            lastOccurrence: true
        ),
        BadLine(
            name: "extmap id 0",
            fixture: OfferFixtures.gstreamer,
            old: "a=extmap:1 http",
            new: "a=extmap:0 http",
            problem: "(a=extmap:0 http://www.ietf.org/id/draft-holmer-rmcat-transpo...): "
                + "a=extmap id '0' is not 1-255 or 4096-4351 (RFC 8285 section 7)"
        ),
        BadLine(
            name: "rtcp-rsize with a value",
            fixture: OfferFixtures.gstreamer,
            old: "a=rtcp-rsize",
            new: "a=rtcp-rsize:yes",
            problem: "(a=rtcp-rsize:yes): a=rtcp-rsize takes no value"
        ),
        BadLine(
            name: "an RFC 8866 error from the strict parser",
            fixture: OfferFixtures.chromium,
            old: "a=rtpmap:102 H264/90000",
            new: "a=rtpmap:102 H264/abc",
            problem: "(a=rtpmap:102 H264/abc): a=rtpmap clock rate 'abc' is not a positive number"
        ),
        BadLine(
            name: "a control character",
            fixture: OfferFixtures.gstreamer,
            old: "a=mid:video0",
            new: "a=mid:vid\u{1B}[31meo0",
            problem: "(a=mid:vid?[31meo0): a=mid value 'vid?[31meo0' is not a token"
        ),
    ]

    @Test("a broken line is named by number, excerpt and problem", arguments: badLines)
    func badLine(_ bad: BadLine) throws {
        let text = bad.fixture.replacing(bad.old, with: bad.new)
        let lines = text.components(separatedBy: "\r\n")
        let lastChanged = bad.new.components(separatedBy: "\r\n").last ?? bad.new
        let index =
            bad.lastOccurrence
            ? lines.lastIndex { $0.contains(lastChanged) } : lines.firstIndex { $0.contains(lastChanged) }
        let number = try #require(index) + 1
        let error = #expect(throws: JSEPError.self) { try WebRTCOffer(parsing: text) }
        #expect(error?.code == bad.code)
        #expect(error?.line == number)
        #expect(error?.reason == "line \(number) \(bad.problem)")
    }

    @Test("limits: bytes, m-sections, formats, candidates")
    func limits() throws {
        let big = OfferFixtures.chromium.text + String(repeating: "a=x-pad:0123456789\r\n", count: 3300)
        let tooBig = #expect(throws: JSEPError.self) { try WebRTCOffer(parsing: big) }
        #expect(tooBig?.code == .offerTooLarge)
        #expect(tooBig?.reason == "the offer has \(big.utf8.count) bytes, more than the limit of 65536")

        let section = "m=audio 9 UDP/TLS/RTP/SAVPF 111\r\nc=IN IP4 0.0.0.0\r\na=rtpmap:111 opus/48000/2\r\n"
        let many = "v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\n" + String(repeating: section, count: 17)
        let sections = #expect(throws: JSEPError.self) { try WebRTCOffer(parsing: many) }
        #expect(sections?.code == .offerTooLarge)
        #expect(sections?.line == 5 + 16 * 3)
        #expect(sections?.reason == "line 53 (m=audio 9 UDP/TLS/RTP/SAVPF 111): more than 16 m-sections")

        let formats = #expect(throws: JSEPError.self) {
            try WebRTCOffer(parsing: OfferFixtures.chromium.text, limits: .init(maximumFormatsPerSection: 10))
        }
        #expect(formats?.line == 39)
        #expect(formats?.reason.hasSuffix("): more than 10 formats on one m= line") == true)

        let candidate = "a=candidate:1 1 UDP 2015363327 198.51.100.7 48702 typ host\r\n"
        let crowded = OfferFixtures.gstreamer.replacing(
            "a=mid:audio1\r\n",
            with: "a=mid:audio1\r\n" + String(repeating: candidate, count: 63)
        )
        let candidates = #expect(throws: JSEPError.self) { try WebRTCOffer(parsing: crowded) }
        #expect(candidates?.code == .offerTooLarge)
        #expect(candidates?.reason.hasSuffix("): more than 64 a=candidate lines") == true)
    }

    @Test("errors that no line causes say so without a line number")
    func linelessErrors() {
        let empty = #expect(throws: JSEPError.self) { try WebRTCOffer(parsing: "") }
        #expect(empty?.line == nil)
        #expect(empty?.reason == "the offer is not valid SDP: the description is empty")
        let noTiming = #expect(throws: JSEPError.self) {
            try WebRTCOffer(parsing: "v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\n")
        }
        #expect(noTiming?.reason == "the offer is not valid SDP: the description has no t= line")
    }

    @Test("a reason never exceeds the signaling limit nor carries control characters")
    func boundedReason() {
        let error = JSEPError(code: .malformedOffer, reason: String(repeating: "\u{7}x", count: 1000))
        #expect(error.reason.utf8.count <= JSEPError.maximumReasonBytes)
        #expect(error.reason.unicodeScalars.allSatisfy { (0x20..<0x7F).contains($0.value) })
    }
}
