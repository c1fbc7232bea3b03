import JSEP
import SDP
import Testing

/// RFC 8840 §9 fragments as WHIP's PATCH carries them (RFC 9725 §4.3.2).
@Suite("Trickle ICE fragments")
struct TrickleFragmentTests {
    @Test("our ICE restart fragment, byte for byte")
    func written() throws {
        let fragment = TrickleFragment(
            credentials: try ICECredentials(ufrag: "pUbL", password: "publisherPassword0123456"),
            candidates: [try ICECandidate(attributeValue: "1 1 UDP 2015363327 127.0.0.2 41234 typ host")],
            endOfCandidates: true
        )
        #expect(
            fragment.text(bundle: ["0", "1"], firstMedia: "video 9 UDP/TLS/RTP/SAVPF 96")
                == "a=group:BUNDLE 0 1\r\nm=video 9 UDP/TLS/RTP/SAVPF 96\r\na=mid:0\r\na=ice-ufrag:pUbL\r\n"
                + "a=ice-pwd:publisherPassword0123456\r\n"
                + "a=candidate:1 1 UDP 2015363327 127.0.0.2 41234 typ host\r\na=end-of-candidates\r\n"
        )
    }

    @Test("simple-whip-server's answer to a restart: credentials only")
    func simpleWHIPServerAnswer() throws {
        let fragment = try TrickleFragment(parsing: "a=ice-ufrag:eqD5\r\na=ice-pwd:e8iryQXJUEeXqjonhrosY2\r\n")
        #expect(fragment.credentials?.ufrag == "eqD5")
        #expect(fragment.credentials?.password == "e8iryQXJUEeXqjonhrosY2")
        #expect(fragment.candidates.isEmpty && !fragment.endOfCandidates)
    }

    @Test("a fragment we wrote reads back the same")
    func roundTrip() throws {
        let fragment = TrickleFragment(
            credentials: try ICECredentials(ufrag: "abcd", password: "0123456789012345678901"),
            candidates: [try ICECandidate(attributeValue: "2 1 udp 1 127.0.0.3 9 typ host")],
            endOfCandidates: true
        )
        #expect(
            try TrickleFragment(parsing: fragment.text(bundle: ["0"], firstMedia: "audio 9 UDP/TLS/RTP/SAVPF 111"))
                == fragment
        )
    }

    @Test(
        "bad fragments are refused by line",
        arguments: [
            ("a=ice-ufrag:abcd\na=ice-ufrag:efgh\n", "line 2 (a=ice-ufrag:efgh): a second a=ice-ufrag"),
            ("a=ice-ufrag:abcd\n", "the fragment has only one of a=ice-ufrag and a=ice-pwd"),
            (
                "a=candidate:1 1 UDP x 127.0.0.2 9 typ host\n",
                "line 1 (a=candidate:1 1 UDP x 127.0.0.2 9 typ ho...): priority 'x' is not a number"
            ),
            ("a=ice-ufrag:a b\na=ice-pwd:0123456789012345678901\n", "the fragment's ICE credentials"),
        ]
    )
    func refused(text: String, reason: String) {
        do {
            _ = try TrickleFragment(parsing: text)
            Issue.record("accepted: \(text)")
        } catch let error as JSEPError {
            #expect(error.reason.hasPrefix(reason), "\(error.reason)")
        } catch {
            Issue.record("not a JSEPError: \(error)")
        }
    }
}
