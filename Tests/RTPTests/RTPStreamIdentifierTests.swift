import Testing

@testable import RTP

@Suite("RTP stream identifiers: mid, rid and repaired rid elements (RFC 8852, RFC 8843)")
struct RTPStreamIdentifierTests {
    /// A simulcast layer's packet as the template cuts it: V=2, X=1, PT 96, sequence 1,
    /// timestamp 2, SSRC 3; one-byte extension (0xBEDE, 2 words) with the transport-wide slot
    /// tw(3), mid(4) = "0", rid(10) = "f" and a padding byte; one payload byte.
    static let layerPacket: [UInt8] = [
        0x90, 0x60, 0x00, 0x01, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x03,
        0xBE, 0xDE, 0x00, 0x02,
        0x31, 0x00, 0x00, 0x40,  // tw(3) L=1, 0x0000; mid(4) L=0
        0x30, 0xA0, 0x66, 0x00,  // "0"; rid(10) L=0, "f"; padding
        0xAA,
    ]

    /// The fixed header of `layerPacket` and a one-byte (0xBEDE) extension of `words` words.
    static func packet(_ body: [UInt8], profile: [UInt8] = [0xBE, 0xDE]) -> [UInt8] {
        let words = UInt8(body.count / 4)
        return Array(layerPacket[0..<12]) + profile + [0x00, words] + body + [0xAA]
    }

    static func value(_ bytes: [UInt8], id: UInt8) throws(RTPError) -> String? {
        let result: Result<String?, RTPError> = bytes.withUnsafeBytes { raw in
            do throws(RTPError) {
                return .success(try RTPStreamIdentifier.value(id: id, inPacket: raw))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    static func rename(_ bytes: inout [UInt8], _ id: UInt8, to newID: UInt8) throws(RTPError) -> Bool {
        let result: Result<Bool, RTPError> = bytes.withUnsafeMutableBytes { raw in
            do throws(RTPError) {
                return .success(try RTPStreamIdentifier.renameElement(id: id, to: newID, inPacket: raw))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    static func blank(_ bytes: inout [UInt8], _ id: UInt8) throws(RTPError) -> Bool {
        let result: Result<Bool, RTPError> = bytes.withUnsafeMutableBytes { raw in
            do throws(RTPError) {
                return .success(try RTPStreamIdentifier.blankElement(id: id, inPacket: raw))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    @Test("the extmap URIs (RFC 8852, RFC 8843)")
    func uris() {
        #expect(RTPStreamIdentifier.rtpStreamIDURI == "urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id")
        #expect(
            RTPStreamIdentifier.repairedRTPStreamIDURI == "urn:ietf:params:rtp-hdrext:sdes:repaired-rtp-stream-id"
        )
        #expect(RTPStreamIdentifier.midURI == "urn:ietf:params:rtp-hdrext:sdes:mid")
    }

    struct TemplateCase: Sendable, CustomTestStringConvertible {
        var name: String
        var transportWideID: UInt8?
        var mid: String
        var rid: String
        var body: [UInt8]

        var testDescription: String { name }
    }

    static let templates = [
        TemplateCase(
            name: "tw(3) mid(4)=0 rid(10)=f, a padding byte",
            transportWideID: 3,
            mid: "0",
            rid: "f",
            body: [0x31, 0x00, 0x00, 0x40, 0x30, 0xA0, 0x66, 0x00]
        ),
        TemplateCase(
            name: "no transport-wide slot: exactly one word",
            transportWideID: nil,
            mid: "0",
            rid: "f",
            body: [0x40, 0x30, 0xA0, 0x66]
        ),
        TemplateCase(
            name: "a longer mid, no padding needed",
            transportWideID: nil,
            mid: "video",
            rid: "l",
            body: [0x44, 0x76, 0x69, 0x64, 0x65, 0x6F, 0xA0, 0x6C]
        ),
        TemplateCase(
            name: "a 15-byte rid, the longest Janus reads",
            transportWideID: 3,
            mid: "1",
            rid: "abcdefghij-_XY9",
            body: [0x31, 0x00, 0x00, 0x40, 0x31, 0xAE] + Array("abcdefghij-_XY9".utf8) + [0x00, 0x00, 0x00]
        ),
    ]

    @Test("builds a layer's template, one-byte form, exact bytes", arguments: templates)
    func template(_ template: TemplateCase) throws {
        let ext = try RTPStreamIdentifier.headerExtension(
            transportWideID: template.transportWideID,
            midID: 4,
            mid: template.mid,
            ridID: 10,
            rid: template.rid
        )
        #expect(ext.profile == RTPHeaderExtension.oneByteProfile)
        #expect(ext.data == template.body)
        var expected = [RTPHeaderExtensionElement(id: 4, data: Array(template.mid.utf8))]
        expected.append(RTPHeaderExtensionElement(id: 10, data: Array(template.rid.utf8)))
        if let id = template.transportWideID {
            expected.insert(RTPHeaderExtensionElement(id: id, data: [0, 0]), at: 0)
        }
        #expect(try ext.elements() == expected)
    }

    @Test("a packet cut with the template: exact bytes, and the transport-wide slot still stamps")
    func packetFromTemplate() throws {
        let ext = try RTPStreamIdentifier.headerExtension(transportWideID: 3, midID: 4, mid: "0", ridID: 10, rid: "f")
        let packet = RTPPacket(
            header: RTPHeader(payloadType: 96, sequenceNumber: 1, timestamp: 2, ssrc: 3, headerExtension: ext),
            payload: [0xAA]
        )
        var bytes = try packet.serialize()
        #expect(bytes == Self.layerPacket)
        #expect(try Self.value(bytes, id: 4) == "0")
        #expect(try Self.value(bytes, id: 10) == "f")
        #expect(try Self.value(bytes, id: 11) == nil)
        #expect(
            try bytes.withUnsafeMutableBytes { raw in
                try RTPTransportSequenceNumber.stamp(0x1234, id: 3, as: 5, inPacket: raw)
            }
        )
        #expect(Array(bytes[16..<24]) == [0x51, 0x12, 0x34, 0x40, 0x30, 0xA0, 0x66, 0x00])
        #expect(try Self.value(bytes, id: 10) == "f")
    }

    @Test(
        "refuses rids, mids and ids it cannot put on the wire",
        arguments: [
            (
                "", "0", 3 as UInt8?, 4 as UInt8,
                "rid '' has 0 bytes; 1–15 allowed (RFC 8851 §10, and Janus reads at most 15)"
            ),
            (
                "abcdefghijklmnop", "0", 3, 4,
                "rid 'abcdefghijklmnop' has 16 bytes; 1–15 allowed (RFC 8851 §10, and Janus reads at most 15)"
            ),
            ("f l", "0", 3, 4, "rid 'f l' is not letters, digits, '-' and '_' (RFC 8851 §10 rid-id)"),
            ("h\u{E9}", "0", 3, 4, "rid 'h?' is not letters, digits, '-' and '_' (RFC 8851 §10 rid-id)"),
            ("f", "", 3, 4, "mid '' has 0 bytes; a one-byte element carries 1–16 (RFC 8285 §4.2)"),
            (
                "f", "0123456789abcdefg", 3, 4,
                "mid '0123456789abcdefg' has 17 bytes; a one-byte element carries 1–16 (RFC 8285 §4.2)"
            ),
            ("f", "a b", 3, 4, "mid 'a b' is not visible ASCII (RFC 5888 §4: a token)"),
            ("f", "0", 4, 4, "header extension ids 4, 4, 10 repeat; each element needs its own"),
            ("f", "0", nil, 15, "one-byte extension element ID 15 is outside 1–14 (RFC 8285 §4.2)"),
        ]
    )
    func refused(rid: String, mid: String, transportWideID: UInt8?, midID: UInt8, message: String) {
        let error = #expect(throws: RTPError.self) {
            try RTPStreamIdentifier.headerExtension(
                transportWideID: transportWideID,
                midID: midID,
                mid: mid,
                ridID: 10,
                rid: rid
            )
        }
        #expect(error?.message == message)
    }

    struct ReadCase: Sendable, CustomTestStringConvertible {
        var name: String
        var packet: [UInt8]
        var id: UInt8
        var value: String?
        var message: String? = nil

        var testDescription: String { name }
    }

    static let reads = [
        ReadCase(name: "mid of the layer packet", packet: layerPacket, id: 4, value: "0"),
        ReadCase(name: "rid of the layer packet", packet: layerPacket, id: 10, value: "f"),
        ReadCase(name: "an absent id", packet: layerPacket, id: 11, value: nil),
        ReadCase(name: "id 0 is padding, never an element", packet: layerPacket, id: 0, value: nil),
        ReadCase(
            name: "padding bytes before and between elements are skipped (RFC 8285 §4.2)",
            packet: packet([0x00, 0x00, 0x40, 0x30, 0x00, 0xA0, 0x66, 0x00]),
            id: 10,
            value: "f"
        ),
        ReadCase(
            name: "ID 15 ends the list: the rid after it is not read (RFC 8285 §4.2)",
            packet: packet([0x40, 0x30, 0xF0, 0x00, 0xA0, 0x66, 0x00, 0x00]),
            id: 10,
            value: nil
        ),
        ReadCase(
            name: "ID 15 ends the list: the mid before it is read",
            packet: packet([0x40, 0x30, 0xF0, 0x00, 0xA0, 0x66, 0x00, 0x00]),
            id: 4,
            value: "0"
        ),
        ReadCase(
            name: "an element running past the extension",
            packet: packet([0x40, 0x30, 0xA1, 0x66]),
            id: 10,
            value: nil,
            message: "one-byte extension element 10 at offset 18 claims 2 bytes, 1 remain"
        ),
        ReadCase(
            name: "the mid before a broken element is found before the walk reaches it",
            packet: packet([0x40, 0x30, 0xA1, 0x66]),
            id: 4,
            value: "0"
        ),
        ReadCase(
            name: "a value that is not UTF-8",
            packet: packet([0xA0, 0xFF, 0x00, 0x00]),
            id: 10,
            value: nil,
            message: "extension element 10 at offset 16 is not UTF-8 text (RFC 8852 §3: an SDES item)"
        ),
        ReadCase(
            name: "two-byte form (RFC 8285 §4.3)",
            packet: packet([0x04, 0x01, 0x30, 0x0A, 0x02, 0x68, 0x69, 0x00], profile: [0x10, 0x00]),
            id: 10,
            value: "hi"
        ),
        ReadCase(
            name: "a profile that is not RFC 8285",
            packet: packet([0x40, 0x30, 0xA0, 0x66], profile: [0x12, 0x34]),
            id: 10,
            value: nil
        ),
        ReadCase(
            name: "no header extension",
            packet: [0x80, 0x60, 0x00, 0x01, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x03, 0xAA],
            id: 10,
            value: nil
        ),
        ReadCase(
            name: "an extension longer than the packet",
            packet: Array(packet([0x40, 0x30, 0xA0, 0x66]).prefix(18)),
            id: 10,
            value: nil,
            message: "RTP packet: its CSRCs and header extension need 20 bytes, the packet has 18"
        ),
    ]

    @Test("reads an element's text from a serialized packet", arguments: reads)
    func read(_ read: ReadCase) throws {
        guard let message = read.message else {
            #expect(try Self.value(read.packet, id: read.id) == read.value)
            return
        }
        let error = #expect(throws: RTPError.self) { try Self.value(read.packet, id: read.id) }
        #expect(error?.code == .invalidExtension || error?.code == .truncated)
        #expect(error?.message == message)
    }

    @Test("an RTX packet's copied rid becomes the repaired rid, same value (RFC 8852 §3.2)")
    func renameOnRetransmission() throws {
        var rtx = try RTPRetransmission.packet(
            original: Self.layerPacket,
            ssrc: 0x0000_0004,
            payloadType: 97,
            sequenceNumber: 9
        )
        // The original's header and extension, payload type 97, sequence 9, SSRC 4, then the OSN.
        #expect(
            rtx == [
                0x90, 0x61, 0x00, 0x09, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x04,
                0xBE, 0xDE, 0x00, 0x02, 0x31, 0x00, 0x00, 0x40, 0x30, 0xA0, 0x66, 0x00,
                0x00, 0x01, 0xAA,
            ]
        )
        #expect(try Self.rename(&rtx, 10, to: 11))
        #expect(Array(rtx[16..<24]) == [0x31, 0x00, 0x00, 0x40, 0x30, 0xB0, 0x66, 0x00])
        #expect(try Self.value(rtx, id: 11) == "f")
        #expect(try Self.value(rtx, id: 10) == nil)
        #expect(try Self.value(rtx, id: 4) == "0")
        // The transport-wide slot is still where the stamp looks for it.
        try rtx.withUnsafeMutableBytes { raw in try RTPTransportSequenceNumber.stamp(7, id: 3, inPacket: raw) }
        #expect(Array(rtx[16..<19]) == [0x31, 0x00, 0x07])
    }

    struct RenameCase: Sendable, CustomTestStringConvertible {
        var name: String
        var packet: [UInt8]
        var id: UInt8
        var newID: UInt8
        /// nil: refused with `message`.
        var renamed: Bool?
        var expected: [UInt8]? = nil
        var message: String? = nil

        var testDescription: String { name }
    }

    static let renames = [
        RenameCase(
            name: "rid to repaired rid",
            packet: layerPacket,
            id: 10,
            newID: 11,
            renamed: true,
            expected: Array(layerPacket[0..<21]) + [0xB0] + Array(layerPacket[22...])
        ),
        RenameCase(
            name: "an absent element: false, nothing written",
            packet: layerPacket,
            id: 11,
            newID: 12,
            renamed: false
        ),
        RenameCase(name: "to its own id: nothing to do", packet: layerPacket, id: 10, newID: 10, renamed: true),
        RenameCase(
            name: "one-byte form cannot carry ID 15",
            packet: layerPacket,
            id: 10,
            newID: 15,
            renamed: nil,
            message:
                "one-byte extension element ID 15 is outside 1–14 (RFC 8285 §4.2); element 10 at offset 21 keeps its ID"
        ),
        RenameCase(
            name: "onto an id the packet already carries",
            packet: layerPacket,
            id: 10,
            newID: 4,
            renamed: nil,
            message: "cannot rename extension element 10 at offset 21 to 4: element 4 is already at offset 19"
        ),
        RenameCase(
            name: "two-byte form: any id 1-255",
            packet: packet([0x04, 0x01, 0x30, 0x0A, 0x01, 0x66, 0x00, 0x00], profile: [0x10, 0x00]),
            id: 10,
            newID: 200,
            renamed: true,
            expected: packet([0x04, 0x01, 0x30, 0xC8, 0x01, 0x66, 0x00, 0x00], profile: [0x10, 0x00])
        ),
        RenameCase(
            name: "two-byte form: not to padding",
            packet: packet([0x04, 0x01, 0x30, 0x0A, 0x01, 0x66, 0x00, 0x00], profile: [0x10, 0x00]),
            id: 10,
            newID: 0,
            renamed: nil,
            message: "two-byte extension element ID 0 is padding (RFC 8285 §4.3)"
        ),
    ]

    @Test("renames an element in place", arguments: renames)
    func rename(_ rename: RenameCase) throws {
        var bytes = rename.packet
        guard let renamed = rename.renamed else {
            let error = #expect(throws: RTPError.self) { try Self.rename(&bytes, rename.id, to: rename.newID) }
            #expect(error?.message == rename.message)
            #expect(bytes == rename.packet, "a refused rename writes nothing")
            return
        }
        #expect(try Self.rename(&bytes, rename.id, to: rename.newID) == renamed)
        #expect(bytes == (rename.expected ?? rename.packet))
    }

    @Test("blanks an element to padding for a receiver that did not agree on it")
    func blank() throws {
        var bytes = Self.layerPacket
        #expect(try Self.blank(&bytes, 4))
        #expect(Array(bytes[16..<24]) == [0x31, 0x00, 0x00, 0x00, 0x00, 0xA0, 0x66, 0x00])
        #expect(try Self.value(bytes, id: 4) == nil)
        #expect(try Self.value(bytes, id: 10) == "f")
        #expect(try RTPPacket.parse(bytes).header.headerExtension?.elements().map(\.id) == [3, 10])
        #expect(try Self.blank(&bytes, 10))
        #expect(try Self.blank(&bytes, 3))
        #expect(Array(bytes[16..<24]) == Array(repeating: 0, count: 8))
        #expect(try RTPPacket.parse(bytes).header.headerExtension?.elements().isEmpty == true)
        let before = bytes
        #expect(try Self.blank(&bytes, 4) == false)
        #expect(bytes == before)

        var twoByte = Self.packet([0x04, 0x01, 0x30, 0x0A, 0x01, 0x66, 0x00, 0x00], profile: [0x10, 0x00])
        #expect(try Self.blank(&twoByte, 10))
        #expect(Array(twoByte[16..<24]) == [0x04, 0x01, 0x30, 0x00, 0x00, 0x00, 0x00, 0x00])
        #expect(try Self.value(twoByte, id: 4) == "0")
    }
}
