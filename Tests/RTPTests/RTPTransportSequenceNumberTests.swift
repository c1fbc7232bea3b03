import Testing

@testable import RTP

@Suite("Transport-wide sequence number extension (draft-holmer-rmcat-transport-wide-cc-extensions-01 §2)")
struct RTPTransportSequenceNumberTests {
    /// Chrome's RTP packet (no payload) as captured by Wireshark, from olivermichel/webrtc-analysis
    /// test/include/data.h (rtp_pkt1): one-byte elements 2 (abs-send-time, 3 bytes), 4 (the
    /// transport-wide sequence number 155) and 13, then a padding byte.
    static let chromeOneByte: [UInt8] = [
        0x90, 0x2D, 0x1A, 0x5F, 0xD4, 0x09, 0x05, 0x49, 0xF7, 0xB1, 0x6E, 0x83, 0xBE, 0xDE, 0x00, 0x03,
        0x22, 0xF3, 0x43, 0x50, 0x41, 0x00, 0x9B, 0xD2, 0x81, 0x00, 0x45, 0x00,
    ]

    /// The same source's rtp_pkt3: two-byte elements (profile 0x1000), element 4 holding 2.
    static let chromeTwoByte: [UInt8] = [
        0x90, 0x2D, 0x61, 0xC5, 0x95, 0x0A, 0x0F, 0xEE, 0x8D, 0x38, 0x14, 0xE5, 0x10, 0x00, 0x00, 0x11,
        0x02, 0x03, 0x03, 0xF7, 0xAE,
        0x04, 0x02, 0x00, 0x02,
        0x09, 0x01, 0x30,
        0x03, 0x01, 0x00,
        0x06, 0x01, 0x02,
        0x07, 0x0D, 0x01, 0x00, 0x01, 0x00, 0x07, 0x00, 0x07, 0x00, 0x0A, 0x00, 0x00, 0x00, 0x00,
        0x0D, 0x21, 0xC0, 0x00, 0x01, 0x80, 0x03, 0x18, 0x7A, 0xAA, 0xF1, 0x30, 0xA0, 0xA0, 0x14, 0xD1,
        0x41, 0x38, 0x23, 0x04, 0x60, 0x08, 0x64, 0x22, 0x22, 0x26, 0x50, 0x09, 0xF0, 0x07, 0x70, 0x13,
        0xF0, 0x0E, 0xF0,
    ]

    static func read(_ bytes: [UInt8], id: UInt8) throws(RTPError) -> UInt16? {
        let result: Result<UInt16?, RTPError> = bytes.withUnsafeBytes { raw in
            do throws(RTPError) {
                return .success(try RTPTransportSequenceNumber.read(id: id, inPacket: raw))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    @Test("reads the number from Chrome's packets, both element forms")
    func readsChrome() throws {
        #expect(try Self.read(Self.chromeOneByte, id: 4) == 155)
        #expect(try Self.read(Self.chromeOneByte, id: 5) == nil)
        #expect(try Self.read(Self.chromeTwoByte, id: 4) == 2)
        #expect(try Self.read(Self.chromeTwoByte, id: 5) == nil)
        let parsed = try RTPPacket.parse(Self.chromeOneByte)
        #expect(try parsed.header.headerExtension?.transportSequenceNumber(id: 4) == 155)
        #expect(try RTPPacket.parse(Self.chromeTwoByte).header.headerExtension?.transportSequenceNumber(id: 4) == 2)
        let wrong = #expect(throws: RTPError.self) { try Self.read(Self.chromeOneByte, id: 2) }
        #expect(
            wrong?.message
                == "transport-wide sequence number element 2 at offset 16 has 3 bytes; it holds 2 "
                + "(draft-holmer-rmcat-transport-wide-cc-extensions-01 §2.2)"
        )
    }

    @Test("the element and the §2.2 layout")
    func element() throws {
        #expect(
            RTPTransportSequenceNumber.uri
                == "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01"
        )
        let element = RTPTransportSequenceNumber.element(id: 5, sequenceNumber: 0x1234)
        #expect(element == RTPHeaderExtensionElement(id: 5, data: [0x12, 0x34]))
        #expect(try RTPTransportSequenceNumber.value(of: element) == 0x1234)
        let ext = try RTPHeaderExtension.oneByte([element])
        #expect(ext.profile == 0xBEDE)
        #expect(ext.data == [0x51, 0x12, 0x34, 0x00])  // ID 5, L=1, the number, zero padding
        #expect(try ext.transportSequenceNumber(id: 5) == 0x1234)
        #expect(try ext.transportSequenceNumber(id: 6) == nil)
        #expect(
            try RTPHeaderExtension(profile: 0x1234, data: [0x51, 0x12, 0x34, 0x00]).transportSequenceNumber(id: 5)
                == nil
        )
        let short = #expect(throws: RTPError.self) {
            try RTPTransportSequenceNumber.value(of: RTPHeaderExtensionElement(id: 5, data: [1]))
        }
        #expect(short?.code == .invalidExtension)
        #expect(short?.message.hasPrefix("transport-wide sequence number element 5 has 1 bytes") == true)
    }

    @Test("writes the element into a caller's buffer")
    func write() throws {
        var storage = [UInt8](repeating: 0xEE, count: 6)
        let end = try storage.withUnsafeMutableBytes { buffer in
            try RTPTransportSequenceNumber.write(0xABCD, id: 14, into: buffer, at: 2)
        }
        #expect(end == 5)
        #expect(storage == [0xEE, 0xEE, 0xE1, 0xAB, 0xCD, 0xEE])
        let small = #expect(throws: RTPError.self) {
            try storage.withUnsafeMutableBytes { try RTPTransportSequenceNumber.write(1, id: 1, into: $0, at: 4) }
        }
        #expect(small?.code == .bufferTooSmall)
        #expect(
            small?.message == "transport-wide sequence number element at offset 4 needs 7 bytes, the buffer holds 6"
        )
        let reserved = #expect(throws: RTPError.self) {
            try storage.withUnsafeMutableBytes { try RTPTransportSequenceNumber.write(1, id: 15, into: $0, at: 0) }
        }
        #expect(reserved?.message == "transport-wide sequence number element ID 15 is outside 1–14 (RFC 8285 §4.2)")
    }

    @Test("stamps each packet in place on the send path")
    func stamp() throws {
        let template = try RTPHeaderExtension.oneByte([
            RTPHeaderExtensionElement(id: 1, data: [0xAA, 0xBB, 0xCC]),
            RTPTransportSequenceNumber.element(id: 3, sequenceNumber: 0),
        ])
        let packet = RTPPacket(
            header: RTPHeader(
                payloadType: 96,
                sequenceNumber: 7,
                timestamp: 9,
                ssrc: 11,
                csrcs: [0x0102_0304],
                headerExtension: template
            ),
            payload: [1, 2, 3]
        )
        var bytes = try packet.serialize()
        for number: UInt16 in [0, 1, 0xFFFF] {
            try bytes.withUnsafeMutableBytes { raw in
                try RTPTransportSequenceNumber.stamp(number, id: 3, inPacket: raw)
            }
            #expect(try Self.read(bytes, id: 3) == number)
            let parsed = try RTPPacket.parse(bytes)
            #expect(try parsed.header.headerExtension?.transportSequenceNumber(id: 3) == number)
            #expect(parsed.payload == [1, 2, 3])
        }
        let offset = try bytes.withUnsafeBytes { raw in
            try RTPTransportSequenceNumber.valueOffset(id: 3, inPacket: raw)
        }
        #expect(offset == 12 + 4 + 4 + 5)  // header, CSRC, preamble, element 1 (1 + 3) and element 3's byte
        let missing = #expect(throws: RTPError.self) {
            try bytes.withUnsafeMutableBytes { raw in
                try RTPTransportSequenceNumber.stamp(1, id: 4, inPacket: raw)
            }
        }
        #expect(missing?.message == "RTP packet of 31 bytes has no transport-wide sequence number element with ID 4")
        let plain = try RTPPacket(
            header: RTPHeader(payloadType: 96, sequenceNumber: 1, timestamp: 2, ssrc: 3),
            payload: [1]
        )
        .serialize()
        #expect(try Self.read(plain, id: 3) == nil)
    }

    @Test("gives a template's element to each receiver: its ID and number, or padding")
    func stampForReceiver() throws {
        // The send path's template (RFC 8285 one-byte form, element 3, a padding byte) on a
        // packet without CSRCs: what every packet is cut with when transport-wide numbers are on.
        let template: [UInt8] = [
            0x90, 0x60, 0x00, 0x01, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x03,
            0xBE, 0xDE, 0x00, 0x01, 0x31, 0x00, 0x00, 0x00,
            0xAA,
        ]
        var copy = template
        let stamped = try copy.withUnsafeMutableBytes { raw in
            try RTPTransportSequenceNumber.stamp(0x1234, id: 3, as: 5, inPacket: raw)
        }
        #expect(stamped)
        #expect(copy == Array(template[0..<16]) + [0x51, 0x12, 0x34, 0x00, 0xAA])
        #expect(try Self.read(copy, id: 5) == 0x1234)
        #expect(try Self.read(copy, id: 3) == nil)

        copy = template
        let blanked = try copy.withUnsafeMutableBytes { raw in
            try RTPTransportSequenceNumber.blank(id: 3, inPacket: raw)
        }
        #expect(blanked)
        #expect(copy == Array(template[0..<16]) + [0x00, 0x00, 0x00, 0x00, 0xAA])
        #expect(try RTPPacket.parse(copy).header.headerExtension?.elements().isEmpty == true)

        // No element 3 (a packet cut without the template): left alone, no error.
        var plain: [UInt8] = [0x80, 0x60, 0x00, 0x01, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x03, 0xAA]
        let original = plain
        let plainStamped = try plain.withUnsafeMutableBytes { raw in
            try RTPTransportSequenceNumber.stamp(1, id: 3, as: 5, inPacket: raw)
        }
        let plainBlanked = try plain.withUnsafeMutableBytes { raw in
            try RTPTransportSequenceNumber.blank(id: 3, inPacket: raw)
        }
        #expect(!plainStamped && !plainBlanked)
        #expect(plain == original)

        // A one-byte element cannot carry ID 15 (RFC 8285 §4.2).
        copy = template
        let reserved = #expect(throws: RTPError.self) {
            try copy.withUnsafeMutableBytes { try RTPTransportSequenceNumber.stamp(1, id: 3, as: 15, inPacket: $0) }
        }
        #expect(reserved?.message == "transport-wide sequence number element ID 15 is outside 1–14 (RFC 8285 §4.2)")

        // The two-byte form: Chrome's element 4 becomes element 11 holding 7, then padding.
        var twoByte = Self.chromeTwoByte
        let restamped = try twoByte.withUnsafeMutableBytes { raw in
            try RTPTransportSequenceNumber.stamp(7, id: 4, as: 11, inPacket: raw)
        }
        #expect(restamped)
        #expect(Array(twoByte[21..<25]) == [0x0B, 0x02, 0x00, 0x07])
        #expect(try Self.read(twoByte, id: 11) == 7)
        let padded = try twoByte.withUnsafeMutableBytes { raw in
            try RTPTransportSequenceNumber.blank(id: 11, inPacket: raw)
        }
        #expect(padded)
        #expect(Array(twoByte[21..<25]) == [0x00, 0x00, 0x00, 0x00])
        #expect(try Self.read(twoByte, id: 11) == nil)
        #expect(Array(twoByte[0..<21]) == Array(Self.chromeTwoByte[0..<21]))
        #expect(Array(twoByte[25...]) == Array(Self.chromeTwoByte[25...]))
    }

    @Test("rejects malformed extensions while walking them")
    func rejects() {
        // One-byte element 1 claims 4 bytes, 3 remain in the body.
        var bytes: [UInt8] = [0x90, 0x60, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0xBE, 0xDE, 0x00, 0x01, 0x13, 0xAA, 0x00, 0x00]
        let oneByte = #expect(throws: RTPError.self) { try Self.read(bytes, id: 4) }
        #expect(oneByte?.message == "one-byte extension element 1 at offset 16 claims 4 bytes, 3 remain")
        // Two-byte element 7 at the last byte of the body has no length byte.
        bytes = [0x90, 0x60, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0x10, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x07]
        let twoByte = #expect(throws: RTPError.self) { try Self.read(bytes, id: 4) }
        #expect(twoByte?.message == "two-byte extension element 7 at offset 19 has no length byte")
        // The packet itself is cut inside its extension.
        let cut = #expect(throws: RTPError.self) { try Self.read(Array(Self.chromeOneByte.prefix(20)), id: 4) }
        #expect(cut?.code == .truncated)
    }
}
