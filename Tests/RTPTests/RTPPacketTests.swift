import Testing

@testable import RTP

@Suite("RTP packet (RFC 3550 §5.1)")
struct RTPPacketTests {
    struct Vector: Sendable, CustomTestStringConvertible {
        var name: String
        var bytes: [UInt8]
        var packet: RTPPacket
        var testDescription: String { name }
    }

    static let vectors: [Vector] = [
        Vector(
            name: "marker, no options",
            bytes: [
                0x80, 0xE0, 0x12, 0x34,  // V=2, M=1 PT=96, seq 0x1234
                0xDE, 0xAD, 0xBE, 0xEF,  // timestamp
                0x11, 0x22, 0x33, 0x44,  // SSRC
                0xAA, 0xBB,  // payload
            ],
            packet: RTPPacket(
                header: RTPHeader(
                    marker: true,
                    payloadType: 96,
                    sequenceNumber: 0x1234,
                    timestamp: 0xDEAD_BEEF,
                    ssrc: 0x1122_3344
                ),
                payload: [0xAA, 0xBB]
            )
        ),
        Vector(
            name: "two CSRCs",
            bytes: [
                0x82, 0x00, 0x00, 0x01,  // CC=2, PT=0, seq 1
                0x00, 0x00, 0x00, 0x02,
                0x00, 0x00, 0x00, 0x03,
                0x0A, 0x0B, 0x0C, 0x0D,  // CSRC 0
                0x01, 0x02, 0x03, 0x04,  // CSRC 1
                0x01,
            ],
            packet: RTPPacket(
                header: RTPHeader(
                    payloadType: 0,
                    sequenceNumber: 1,
                    timestamp: 2,
                    ssrc: 3,
                    csrcs: [0x0A0B_0C0D, 0x0102_0304]
                ),
                payload: [0x01]
            )
        ),
        Vector(
            name: "one-byte header extension",
            bytes: [
                0x90, 0x6F, 0xFF, 0xFF,  // X=1, PT=111, seq 65535
                0x00, 0x00, 0x00, 0x00,
                0xCA, 0xFE, 0xBA, 0xBE,
                0xBE, 0xDE, 0x00, 0x01,  // profile 0xBEDE, 1 word
                0x10, 0xFF, 0x00, 0x00,  // ID 1, 1 byte: 0xFF; 2 padding bytes
                0x55,
            ],
            packet: RTPPacket(
                header: RTPHeader(
                    payloadType: 111,
                    sequenceNumber: 0xFFFF,
                    timestamp: 0,
                    ssrc: 0xCAFE_BABE,
                    headerExtension: RTPHeaderExtension(profile: 0xBEDE, data: [0x10, 0xFF, 0x00, 0x00])
                ),
                payload: [0x55]
            )
        ),
        Vector(
            name: "padding",
            bytes: [
                0xA0, 0x60, 0x00, 0x07,  // P=1, PT=96, seq 7
                0x00, 0x00, 0x01, 0x00,
                0x00, 0x00, 0x00, 0x09,
                0x01, 0x02, 0x03,  // payload
                0x00, 0x00, 0x03,  // 3 bytes of padding
            ],
            packet: RTPPacket(
                header: RTPHeader(payloadType: 96, sequenceNumber: 7, timestamp: 256, ssrc: 9),
                payload: [0x01, 0x02, 0x03],
                paddingLength: 3
            )
        ),
        Vector(
            name: "padding, extension, CSRC, empty payload",
            bytes: [
                0xB1, 0x88, 0x80, 0x00,  // P X CC=1, M PT=8, seq 32768
                0x12, 0x34, 0x56, 0x78,
                0x9A, 0xBC, 0xDE, 0xF0,
                0x00, 0x00, 0x00, 0x2A,  // CSRC 42
                0x12, 0x34, 0x00, 0x00,  // profile 0x1234, empty body
                0x01,  // padding count 1
            ],
            packet: RTPPacket(
                header: RTPHeader(
                    marker: true,
                    payloadType: 8,
                    sequenceNumber: 0x8000,
                    timestamp: 0x1234_5678,
                    ssrc: 0x9ABC_DEF0,
                    csrcs: [42],
                    headerExtension: RTPHeaderExtension(profile: 0x1234, data: [])
                ),
                payload: [],
                paddingLength: 1
            )
        ),
    ]

    @Test("parses hand-built bytes", arguments: vectors)
    func parse(vector: Vector) throws {
        #expect(try RTPPacket.parse(vector.bytes) == vector.packet)
    }

    @Test("serializes to hand-built bytes, into arrays and caller buffers", arguments: vectors)
    func serialize(vector: Vector) throws {
        #expect(try vector.packet.serialize() == vector.bytes)
        #expect(vector.packet.serializedLength == vector.bytes.count)

        var storage = [UInt8](repeating: 0xEE, count: vector.bytes.count + 5)
        let length = try storage.withUnsafeMutableBytes { try vector.packet.serialize(into: $0) }
        #expect(length == vector.bytes.count)
        #expect(Array(storage[..<length]) == vector.bytes)
        #expect(storage[length...].allSatisfy { $0 == 0xEE })

        let buffer = try RTPPacketBuffer(capacity: 200)
        try vector.packet.serialize(into: buffer)
        #expect(buffer.copyBytes() == vector.bytes)
        #expect(buffer.sequenceNumber == vector.packet.header.sequenceNumber)
        #expect(buffer.timestamp == vector.packet.header.timestamp)
        #expect(buffer.marker == vector.packet.header.marker)
    }

    @Test("parse → serialize → parse round trip of a parsed slice")
    func roundTripFromSlice() throws {
        for vector in Self.vectors {
            let framed = [0xFF] + vector.bytes + [0xFF]
            let packet = try RTPPacket.parse(framed[1..<framed.count - 1])
            #expect(try RTPPacket.parse(packet.serialize()) == packet)
        }
    }

    struct BadInput: Sendable, CustomTestStringConvertible {
        var name: String
        var bytes: [UInt8]
        var code: RTPError.Code
        var messageContains: String
        var testDescription: String { name }
    }

    static let fixed: [UInt8] = [0x80, 0x60, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3]

    static let badInputs: [BadInput] = [
        BadInput(name: "empty", bytes: [], code: .truncated, messageContains: "need 12 for the 12-byte fixed header"),
        BadInput(
            name: "11 bytes",
            bytes: Array(fixed.prefix(11)),
            code: .truncated,
            messageContains: "11 bytes left at offset 0"
        ),
        BadInput(
            name: "version 1",
            bytes: [0x40] + fixed.dropFirst(),
            code: .unsupportedVersion,
            messageContains: "version 1 at offset 0"
        ),
        BadInput(
            name: "version 0 (STUN-like)",
            bytes: [0x00] + fixed.dropFirst(),
            code: .unsupportedVersion,
            messageContains: "version 0"
        ),
        BadInput(
            name: "CSRC count beyond the data",
            bytes: [0x83] + fixed.dropFirst() + [0, 0, 0, 1],
            code: .truncated,
            messageContains: "4 bytes left at offset 12, need 12 for the 3 CSRCs announced by CC"
        ),
        BadInput(
            name: "extension preamble missing",
            bytes: [0x90] + fixed.dropFirst() + [0xBE],
            code: .truncated,
            messageContains: "header extension profile"
        ),
        BadInput(
            name: "extension body beyond the data",
            bytes: [0x90] + fixed.dropFirst() + [0xBE, 0xDE, 0x00, 0x02, 1, 2, 3, 4],
            code: .truncated,
            messageContains: "4 bytes left at offset 16, need 8 for the header extension body of 2 words"
        ),
        BadInput(
            name: "padding count zero",
            bytes: [0xA0] + fixed.dropFirst() + [1, 0],
            code: .invalidPadding,
            messageContains: "padding count 0 at offset 13"
        ),
        BadInput(
            name: "padding longer than the payload",
            bytes: [0xA0] + fixed.dropFirst() + [1, 2, 4],
            code: .invalidPadding,
            messageContains: "padding count 4 at offset 14 exceeds the 3 bytes after the header"
        ),
        BadInput(
            name: "padding bit with nothing after the header",
            bytes: [0xA0] + fixed.dropFirst(),
            code: .invalidPadding,
            messageContains: "nothing follows the 12-byte header"
        ),
        BadInput(
            name: "larger than a datagram",
            bytes: fixed + [UInt8](repeating: 0, count: 65_524),
            code: .tooLarge,
            messageContains: "65536 bytes"
        ),
    ]

    @Test("rejects bad input with a code and a message naming field and offset", arguments: badInputs)
    func rejects(input: BadInput) {
        let error = #expect(throws: RTPError.self) { try RTPPacket.parse(input.bytes) }
        #expect(error?.code == input.code)
        #expect(error?.message.contains(input.messageContains) == true, "\(error?.message ?? "no error")")
    }

    @Test("padding may cover the whole payload")
    func paddingCoversPayload() throws {
        let packet = try RTPPacket.parse([0xA0] + Self.fixed.dropFirst() + [0, 0, 3])
        #expect(packet.payload.isEmpty)
        #expect(packet.paddingLength == 3)
    }

    @Test("serializing refuses fields that do not fit")
    func serializeRejects() throws {
        var header = RTPHeader(payloadType: 128, sequenceNumber: 0, timestamp: 0, ssrc: 0)
        #expect(throws: RTPError.self) { try RTPPacket(header: header, payload: []).serialize() }
        header.payloadType = 96
        header.csrcs = Array(0..<16)
        let tooMany = #expect(throws: RTPError.self) { try RTPPacket(header: header, payload: []).serialize() }
        #expect(tooMany?.code == .invalidField)
        header.csrcs = []
        header.headerExtension = RTPHeaderExtension(profile: 1, data: [1, 2, 3])
        let unaligned = #expect(throws: RTPError.self) { try RTPPacket(header: header, payload: []).serialize() }
        #expect(unaligned?.code == .invalidExtension)
        header.headerExtension = nil
        let small = #expect(throws: RTPError.self) {
            var storage = [UInt8](repeating: 0, count: 13)
            return try storage.withUnsafeMutableBytes {
                try RTPPacket(header: header, payload: [1, 2]).serialize(into: $0)
            }
        }
        #expect(small?.code == .bufferTooSmall)
        #expect(small?.message == "RTP packet needs 14 bytes, the buffer holds 13")
    }
}
