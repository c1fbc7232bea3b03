import Testing

@testable import RTP

@Suite("RFC 4588 RTX packets")
struct RTPRetransmissionTests {
    /// V=2, M=1, PT=96, seq 1000, ts 12345, SSRC 0x12345678, payload 41 AA BB CC.
    static let original: [UInt8] = [
        0x80, 0xE0, 0x03, 0xE8, 0x00, 0x00, 0x30, 0x39, 0x12, 0x34, 0x56, 0x78, 0x41, 0xAA, 0xBB, 0xCC,
    ]
    /// PT 99 with M kept, seq 7, same timestamp, SSRC 0xCAFEBABE, OSN 1000, original payload.
    static let rtx: [UInt8] = [
        0x80, 0xE3, 0x00, 0x07, 0x00, 0x00, 0x30, 0x39, 0xCA, 0xFE, 0xBA, 0xBE, 0x03, 0xE8, 0x41, 0xAA, 0xBB, 0xCC,
    ]

    @Test("builds the RTX packet byte for byte and restores the original")
    func roundTrip() throws {
        let built = try RTPRetransmission.packet(
            original: Self.original,
            ssrc: 0xCAFE_BABE,
            payloadType: 99,
            sequenceNumber: 7
        )
        #expect(built == Self.rtx)
        let restored = try RTPRetransmission.original(
            fromRTX: built,
            originalSSRC: 0x1234_5678,
            originalPayloadType: 96
        )
        #expect(restored == Self.original)
    }

    @Test("copies CSRCs and the header extension, drops the original's padding")
    func csrcExtensionPadding() throws {
        // X=1, CC=1, P=1; CSRC 0x11223344; one-byte extension BEDE, 1 word; payload 05 06; 3 padding bytes.
        let original: [UInt8] = [
            0xB1, 0x60, 0x00, 0x01, 0, 0, 0, 9, 0x12, 0x34, 0x56, 0x78, 0x11, 0x22, 0x33, 0x44,
            0xBE, 0xDE, 0x00, 0x01, 0x10, 0xFF, 0x00, 0x00, 0x05, 0x06, 0x00, 0x00, 0x03,
        ]
        let built = try RTPRetransmission.packet(
            original: original,
            ssrc: 0xCAFE_BABE,
            payloadType: 99,
            sequenceNumber: 0xFFFF
        )
        #expect(
            built == [
                0x91, 0x63, 0xFF, 0xFF, 0, 0, 0, 9, 0xCA, 0xFE, 0xBA, 0xBE, 0x11, 0x22, 0x33, 0x44,
                0xBE, 0xDE, 0x00, 0x01, 0x10, 0xFF, 0x00, 0x00, 0x00, 0x01, 0x05, 0x06,
            ]
        )
        let parsed = try RTPPacket.parse(built)
        #expect(parsed.header.csrcs == [0x1122_3344] && parsed.header.headerExtension?.profile == 0xBEDE)
        let restored = try RTPRetransmission.original(
            fromRTX: built,
            originalSSRC: 0x1234_5678,
            originalPayloadType: 96
        )
        // The original without its padding: P cleared, 26 bytes.
        #expect(restored == [0x91] + original[1..<26])
    }

    @Test(
        "malformed input is refused with a message naming the problem",
        arguments: [
            ([0x80, 0x60, 0x00], "RTX packet: 3 bytes, shorter than the 12-byte RTP header"),
            (
                [0x80, 0x63, 0, 1, 0, 0, 0, 1, 0, 0, 0, 2, 0x07],
                "RTX packet: 1 payload bytes after the 12-byte header; the 2-byte original sequence number is missing"
            ),
            (
                [0x40, 0x63, 0, 1, 0, 0, 0, 1, 0, 0, 0, 2, 0, 1],
                "RTX packet: version 1 at offset 0; only version 2 exists (RFC 3550 §5.1)"
            ),
            (
                [0x82, 0x63, 0, 1, 0, 0, 0, 1, 0, 0, 0, 2, 0, 1],
                "RTX packet: its CSRCs and header extension need 20 bytes, the packet has 14"
            ),
            (
                [0x90, 0x63, 0, 1, 0, 0, 0, 1, 0, 0, 0, 2, 0xBE, 0xDE],
                "RTX packet: header extension announced at offset 12 is cut off"
            ),
            (
                [0xA0, 0x63, 0, 1, 0, 0, 0, 1, 0, 0, 0, 2, 0, 1, 9],
                "RTX packet: padding count 9 at offset 14 is 0 or exceeds the 3 bytes after the header"
            ),
        ] as [([UInt8], String)]
    )
    func malformed(bytes: [UInt8], message: String) {
        let error = #expect(throws: RTPError.self) {
            try RTPRetransmission.original(fromRTX: bytes, originalSSRC: 1, originalPayloadType: 96)
        }
        #expect(error?.message == message)
    }

    @Test("caller buffers are checked before writing")
    func bufferTooSmall() {
        var out = [UInt8](repeating: 0, count: 17)
        let error = #expect(throws: RTPError.self) {
            try Self.original.withUnsafeBytes { input in
                try out.withUnsafeMutableBytes { output in
                    try RTPRetransmission.write(
                        original: input,
                        ssrc: 1,
                        payloadType: 99,
                        sequenceNumber: 1,
                        into: output
                    )
                }
            }
        }
        #expect(error?.message == "RTX packet needs 18 bytes, the buffer holds 17")
        #expect(throws: RTPError.self) {
            try RTPRetransmission.packet(original: Self.original, ssrc: 1, payloadType: 128, sequenceNumber: 1)
        }
    }
}
