import ICE
import JSEP
import SDP
import Testing

@Suite struct ICEValueTests {
    @Test func classifiesByFirstByteAsRFC7983Says() {
        func classify(_ bytes: [UInt8]) -> ICEDatagramClass? { bytes.withUnsafeBytes { ICEDatagramClass.classify($0) } }
        #expect(classify([22, 254, 253]) == .dtls)
        #expect(classify([20]) == .dtls)
        #expect(classify([63]) == .dtls)
        #expect(classify([0x80, 96]) == .srtp)
        #expect(classify([0x80, 200]) == .srtcp)
        #expect(classify([191, 223]) == .srtcp)
        #expect(classify([0, 1]) == nil)  // STUN: libnice's
        #expect(classify([17]) == nil)  // ZRTP
        #expect(classify([64]) == nil)  // TURN channel
        #expect(classify([192, 0]) == nil)
        #expect(classify([0x80]) == nil)
        #expect(classify([]) == nil)
    }

    /// The candidate lines libnice writes (`a=`, upper-case UDP) and trickle carries (no `a=`,
    /// a line end) read with JSEP's parser, and JSEP's writer gives the attribute back.
    @Test func readsCandidateLines() throws {
        let host = try ICECandidate(attribute: "candidate:1 1 UDP 2015363327 127.0.0.1 40000 typ host\r\n")
        #expect(host.attribute == "candidate:1 1 UDP 2015363327 127.0.0.1 40000 typ host")
        #expect(host.component == 1 && host.transport == .udp && host.port == 40000 && host.type == .host)
        #expect(!host.isMDNS)
        let srflx = try ICECandidate(
            attribute: "a=candidate:2 1 UDP 1686052607 203.0.113.7 54400 typ srflx raddr 192.0.2.20 rport 54400"
        )
        #expect(srflx.type == .serverReflexive && srflx.relatedPort == 54400)
        #expect(
            srflx.attribute == "candidate:2 1 UDP 1686052607 203.0.113.7 54400 typ srflx raddr 192.0.2.20 rport 54400"
        )
        #expect(ICEEndpoint(address: "192.0.2.1", port: 9, type: srflx.type).description == "192.0.2.1:9 srflx")
        let mdns = try ICECandidate(
            attribute: "a=candidate:9 1 udp 2113937151 0b6d0a4e-2a4c-4f4c-9c1a-1d2a3b4c5d6e.local 53412 typ host"
        )
        #expect(mdns.isMDNS)
        #expect(throws: CandidateSyntaxError.self) {
            try ICECandidate(attribute: "a=candidate:1 1 udp x 127.0.0.1 5 typ host")
        }
        #expect(throws: CandidateSyntaxError.self) { try ICECandidate(attribute: "a=ice-ufrag:abcd") }
    }

    /// The agent's credentials are JSEP's, checked against RFC 8839's ice-chars and lengths.
    @Test func checksCredentials() throws {
        _ = try ICECredentials(ufrag: "abcd", password: "0123456789abcdef+/ABCD")
        #expect(throws: SDPError.self) { try ICECredentials(ufrag: "abc", password: "0123456789abcdef+/ABCD") }
        #expect(throws: SDPError.self) { try ICECredentials(ufrag: "abcd", password: "short") }
        #expect(throws: SDPError.self) { try ICECredentials(ufrag: "ab:d", password: "0123456789abcdef+/ABCD") }
    }
}
