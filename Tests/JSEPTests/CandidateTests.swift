import Foundation
import JSEP
import SDP
import Testing

/// RFC 8839 §5.1 `a=candidate` values, as the stacks write them and broken.
@Suite("ICE candidates")
struct CandidateTests {
    @Test(
        "valid candidates read back to the same text",
        arguments: [
            "2999745851 1 udp 2122260223 192.0.2.20 54400 typ host generation 0 network-id 1 network-cost 10",
            "842163049 1 udp 1686052607 203.0.113.7 54400 typ srflx raddr 192.0.2.20 rport 54400 generation 0",
            "4233069003 1 tcp 1518280447 192.0.2.20 9 typ host tcptype active generation 0",
            "1 1 UDP 2015363327 2001:db8::7 48702 typ host",
            "2 2 UDP 16777215 198.51.100.9 3478 typ relay raddr 203.0.113.1 rport 61000",
            "0 1 UDP 2122252543 2c2c4e5f-8f1e-4b8d-9d4d-0e7c9f3a1b2d.local 49770 typ host",
            "a+/Z 256 UDP 1 192.0.2.1 0 typ prflx",
        ]
    )
    func roundTrip(_ text: String) throws {
        let candidate = try ICECandidate(attributeValue: text)
        let normalized = text.replacingOccurrences(of: " udp ", with: " UDP ").replacingOccurrences(
            of: " tcp ",
            with: " TCP "
        )
        #expect(candidate.attributeValue == normalized)
        #expect(try ICECandidate(attributeValue: candidate.attributeValue) == candidate)
    }

    @Test(
        "a relay-only answer hides the related address (raddr 0.0.0.0 / ::, rport 0); host candidates have none",
        arguments: [
            (
                "2 1 UDP 505414655 127.0.0.9 40061 typ relay raddr 127.0.0.1 rport 39469",
                "2 1 UDP 505414655 127.0.0.9 40061 typ relay raddr 0.0.0.0 rport 0"
            ),
            (
                "3 1 UDP 505414399 2001:db8::9 40062 typ relay raddr 2001:db8::1 rport 39470",
                "3 1 UDP 505414399 2001:db8::9 40062 typ relay raddr :: rport 0"
            ),
            ("1 1 UDP 2015363327 2001:db8::7 48702 typ host", "1 1 UDP 2015363327 2001:db8::7 48702 typ host"),
        ]
    )
    func relatedAddressHidden(_ text: String, _ hidden: String) throws {
        #expect(try ICECandidate(attributeValue: text).relatedAddressHidden.attributeValue == hidden)
    }

    @Test("fields of a server-reflexive candidate")
    func fields() throws {
        let candidate = try ICECandidate(
            attributeValue: "842163049 1 udp 1686052607 203.0.113.7 54400 typ srflx raddr 192.0.2.20 rport 54400"
        )
        #expect(candidate.foundation == "842163049")
        #expect(candidate.component == 1)
        #expect(candidate.transport == .udp)
        #expect(candidate.priority == 1_686_052_607)
        #expect(candidate.address == .ip(try SDPAddress("203.0.113.7")))
        #expect(candidate.port == 54400)
        #expect(candidate.type == .serverReflexive)
        #expect(candidate.relatedAddress == .ip(try SDPAddress("192.0.2.20")))
        #expect(candidate.relatedPort == 54400)
        #expect(!candidate.isMDNS)
    }

    @Test("whole attributes, as trickle and libnice write them, read and write back")
    func wholeAttribute() throws {
        let value = "1 1 UDP 2015363327 192.0.2.20 40000 typ host"
        for text in ["candidate:" + value, "a=candidate:" + value, "a=candidate:" + value + "\r\n"] {
            let candidate = try ICECandidate(attribute: text)
            #expect(candidate == (try ICECandidate(attributeValue: value)))
            #expect(candidate.attribute == "candidate:" + value)
            #expect(candidate.description == candidate.attribute)
        }
        let error = #expect(throws: CandidateSyntaxError.self) { try ICECandidate(attribute: "a=ice-ufrag:abcd") }
        #expect(error?.problem == "not a candidate attribute: 'ice-ufrag:abcd'")
        #expect(throws: CandidateSyntaxError.self) { try ICECandidate(attribute: "candidate:1 1 UDP 1 192.0.2.1 9") }
    }

    @Test(
        "broken candidates say what is wrong",
        arguments: [
            (
                "1 1 UDP 1 192.0.2.1 9",
                "a=candidate needs foundation, component, transport, priority, address, port, 'typ' and a type"
            ),
            ("1 1 UDP 1 192.0.2.1 9 typ  host", "a=candidate has an empty field (two spaces in a row?)"),
            ("fo:o 1 UDP 1 192.0.2.1 9 typ host", "foundation 'fo:o' is not 1 to 32 ice-chars"),
            ("1 257 UDP 1 192.0.2.1 9 typ host", "component '257' is not a number 1-256"),
            ("1 1 UDP 0 192.0.2.1 9 typ host", "priority '0' is not a number 1-4294967295"),
            ("1 1 UDP 4294967296 192.0.2.1 9 typ host", "priority '4294967296' is not a number 1-4294967295"),
            ("1 1 UDP 1 192.0.2.1 65536 typ host", "port '65536' is not a number 0-65535"),
            ("1 1 UDP 1 2001:db8::g 9 typ host", "address '2001:db8::g' is not an IPv6 literal"),
            ("1 1 UDP 1 host_name 9 typ host", "address 'host_name' is neither an IP literal nor a host name"),
            ("1 1 UDP 1 192.0.2.1 9 typ host raddr", "'raddr' without an address"),
            ("1 1 UDP 1 192.0.2.1 9 typ host generation", "extension 'generation' has no value"),
        ]
    )
    func broken(_ text: String, _ problem: String) {
        let error = #expect(throws: CandidateSyntaxError.self) { try ICECandidate(attributeValue: text) }
        #expect(error?.problem == problem)
    }
}
