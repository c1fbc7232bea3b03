import Testing

@testable import RTP

@Suite("Header extension elements (RFC 8285)")
struct RTPHeaderExtensionTests {
    @Test("one-byte form: byte layout and round trip")
    func oneByte() throws {
        let elements = [
            RTPHeaderExtensionElement(id: 1, data: [0xFF]),
            RTPHeaderExtensionElement(id: 14, data: [0x01, 0x02, 0x03]),
        ]
        let ext = try RTPHeaderExtension.oneByte(elements)
        #expect(ext.profile == 0xBEDE)
        #expect(ext.data == [0x10, 0xFF, 0xE2, 0x01, 0x02, 0x03, 0x00, 0x00])
        #expect(try ext.elements() == elements)

        let packet = RTPPacket(
            header: RTPHeader(payloadType: 96, sequenceNumber: 1, timestamp: 2, ssrc: 3, headerExtension: ext),
            payload: [9]
        )
        #expect(try RTPPacket.parse(packet.serialize()).header.headerExtension?.elements() == elements)
    }

    @Test("one-byte form skips padding and stops at ID 15")
    func oneByteParsingRules() throws {
        let ext = RTPHeaderExtension(profile: 0xBEDE, data: [0x00, 0x21, 0xAA, 0xBB, 0xF0, 0x31, 0xCC, 0xDD])
        #expect(try ext.elements() == [RTPHeaderExtensionElement(id: 2, data: [0xAA, 0xBB])])
    }

    @Test("two-byte form: byte layout and round trip")
    func twoByte() throws {
        let elements = [
            RTPHeaderExtensionElement(id: 200, data: []),
            RTPHeaderExtensionElement(id: 3, data: Array(repeating: 7, count: 20)),
        ]
        let ext = try RTPHeaderExtension.twoByte(elements, appBits: 5)
        #expect(ext.profile == 0x1005)
        #expect(Array(ext.data.prefix(4)) == [200, 0, 3, 20])
        #expect(ext.data.count == 24)
        #expect(try ext.elements() == elements)
    }

    @Test("rejects elements that do not fit their form")
    func rejects() {
        #expect(throws: RTPError.self) { try RTPHeaderExtension.oneByte([.init(id: 15, data: [1])]) }
        #expect(throws: RTPError.self) { try RTPHeaderExtension.oneByte([.init(id: 1, data: [])]) }
        #expect(throws: RTPError.self) {
            try RTPHeaderExtension.oneByte([.init(id: 1, data: Array(repeating: 0, count: 17))])
        }
        #expect(throws: RTPError.self) { try RTPHeaderExtension.twoByte([.init(id: 0, data: [1])]) }
        let truncated = #expect(throws: RTPError.self) {
            try RTPHeaderExtension(profile: 0xBEDE, data: [0x13, 0xAA, 0x00, 0x00]).elements()
        }
        #expect(truncated?.message == "one-byte extension element 1 at offset 0 claims 4 bytes, 3 remain")
        let opaque = #expect(throws: RTPError.self) { try RTPHeaderExtension(profile: 0x1234, data: []).elements() }
        #expect(opaque?.code == .invalidExtension)
    }
}
