import Testing

@testable import RTP

@Suite("RTCP packets (RFC 3550 §6.4–6.6, RFC 4585, RFC 5104, REMB)")
struct RTCPPacketTests {
    struct Vector: Sendable, CustomTestStringConvertible {
        var name: String
        var bytes: [UInt8]
        var packet: RTCPPacket
        var testDescription: String { name }
    }

    static let block = RTCPReceptionReport(
        ssrc: 0x5566_7788,
        fractionLost: 0x40,
        cumulativeLost: -2,
        extendedHighestSequenceNumber: 0x0001_0005,
        jitter: 0x20,
        lastSenderReport: 0xB2C3_8000,
        delaySinceLastSenderReport: 0x0001_0000
    )
    static let blockBytes: [UInt8] = [
        0x55, 0x66, 0x77, 0x88,  // SSRC
        0x40, 0xFF, 0xFF, 0xFE,  // fraction lost 1/4, cumulative lost −2
        0x00, 0x01, 0x00, 0x05,  // 1 wrap, highest 5
        0x00, 0x00, 0x00, 0x20,  // jitter
        0xB2, 0xC3, 0x80, 0x00,  // LSR
        0x00, 0x01, 0x00, 0x00,  // DLSR 1 s
    ]

    static let vectors: [Vector] = [
        Vector(
            name: "SR with one report block",
            bytes: [
                0x81, 0xC8, 0x00, 0x0C,  // V=2 RC=1, PT 200, 13 words
                0x11, 0x22, 0x33, 0x44,
                0xE6, 0xA1, 0xB2, 0xC3, 0x80, 0x00, 0x00, 0x00,  // NTP
                0x00, 0x01, 0x5F, 0x90,  // RTP 90000
                0x00, 0x00, 0x00, 0x64,  // 100 packets
                0x00, 0x01, 0x86, 0xA0,  // 100000 octets
            ] + blockBytes,
            packet: .senderReport(
                RTCPSenderReport(
                    ssrc: 0x1122_3344,
                    ntpTimestamp: NTPTimestamp(seconds: 0xE6A1_B2C3, fraction: 0x8000_0000),
                    rtpTimestamp: 90_000,
                    packetCount: 100,
                    octetCount: 100_000,
                    reports: [block]
                )
            )
        ),
        Vector(
            name: "empty RR",
            bytes: [0x80, 0xC9, 0x00, 0x01, 0x01, 0x02, 0x03, 0x04],
            packet: .receiverReport(RTCPReceiverReport(ssrc: 0x0102_0304))
        ),
        Vector(
            name: "RR with one report block",
            bytes: [0x81, 0xC9, 0x00, 0x07, 0x01, 0x02, 0x03, 0x04] + blockBytes,
            packet: .receiverReport(RTCPReceiverReport(ssrc: 0x0102_0304, reports: [block]))
        ),
        Vector(
            name: "SDES CNAME, one null byte ends the chunk",
            bytes: [
                0x81, 0xCA, 0x00, 0x03,
                0x11, 0x22, 0x33, 0x44,
                0x01, 0x05, 0x61, 0x6C, 0x69, 0x63, 0x65,  // CNAME "alice"
                0x00,
            ],
            packet: .sourceDescription(RTCPSourceDescription(ssrc: 0x1122_3344, cname: "alice"))
        ),
        Vector(
            name: "SDES CNAME ending on a word boundary gets a whole null word",
            bytes: [
                0x81, 0xCA, 0x00, 0x04,
                0x11, 0x22, 0x33, 0x44,
                0x01, 0x06, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66,  // CNAME "abcdef"
                0x00, 0x00, 0x00, 0x00,
            ],
            packet: .sourceDescription(RTCPSourceDescription(ssrc: 0x1122_3344, cname: "abcdef"))
        ),
        Vector(
            name: "SDES two chunks, two items",
            bytes: [
                0x82, 0xCA, 0x00, 0x06,
                0x00, 0x00, 0x00, 0x01,
                0x01, 0x01, 0x61, 0x06, 0x02, 0x74, 0x74, 0x00,  // CNAME "a", TOOL "tt"
                0x00, 0x00, 0x00, 0x02,
                0x01, 0x03, 0x62, 0x6F, 0x62, 0x00, 0x00, 0x00,  // CNAME "bob"
            ],
            packet: .sourceDescription(
                RTCPSourceDescription(chunks: [
                    .init(source: 1, items: [.init(type: .cname, text: "a"), .init(type: .tool, text: "tt")]),
                    .init(source: 2, items: [.init(type: .cname, text: "bob")]),
                ])
            )
        ),
        Vector(
            name: "BYE without reason",
            bytes: [0x81, 0xCB, 0x00, 0x01, 0x11, 0x22, 0x33, 0x44],
            packet: .goodbye(RTCPGoodbye(sources: [0x1122_3344]))
        ),
        Vector(
            name: "BYE with a padded reason",
            bytes: [
                0x82, 0xCB, 0x00, 0x04,
                0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,
                0x05, 0x65, 0x6E, 0x64, 0x65, 0x64, 0x00, 0x00,  // "ended" + 2 null bytes
            ],
            packet: .goodbye(RTCPGoodbye(sources: [0x1122_3344, 0x5566_7788], reason: "ended"))
        ),
        Vector(
            name: "generic NACK",
            bytes: [
                0x81, 0xCD, 0x00, 0x03,  // FMT 1, PT 205
                0xAA, 0xBB, 0xCC, 0xDD, 0x11, 0x22, 0x33, 0x44,
                0x00, 0x64, 0x00, 0x05,  // PID 100, BLP: 101 and 103
            ],
            packet: .genericNACK(
                RTCPGenericNACK(senderSSRC: 0xAABB_CCDD, mediaSSRC: 0x1122_3344, lostSequenceNumbers: [100, 101, 103])
            )
        ),
        Vector(
            name: "PLI",
            bytes: [0x81, 0xCE, 0x00, 0x02, 0xAA, 0xBB, 0xCC, 0xDD, 0x11, 0x22, 0x33, 0x44],
            packet: .pictureLossIndication(RTCPPictureLossIndication(senderSSRC: 0xAABB_CCDD, mediaSSRC: 0x1122_3344))
        ),
        Vector(
            name: "FIR",
            bytes: [
                0x84, 0xCE, 0x00, 0x04,  // FMT 4, PT 206
                0xAA, 0xBB, 0xCC, 0xDD, 0x00, 0x00, 0x00, 0x00,
                0x11, 0x22, 0x33, 0x44, 0x07, 0x00, 0x00, 0x00,
            ],
            packet: .fullIntraRequest(
                RTCPFullIntraRequest(senderSSRC: 0xAABB_CCDD, entries: [.init(ssrc: 0x1122_3344, sequenceNumber: 7)])
            )
        ),
        Vector(
            name: "REMB 1 Mbit/s",
            bytes: [
                0x8F, 0xCE, 0x00, 0x05,  // FMT 15, PT 206
                0xAA, 0xBB, 0xCC, 0xDD, 0x00, 0x00, 0x00, 0x00,
                0x52, 0x45, 0x4D, 0x42,  // "REMB"
                0x01, 0x0B, 0xD0, 0x90,  // 1 SSRC, exp 2, mantissa 250000
                0x11, 0x22, 0x33, 0x44,
            ],
            packet: .receiverEstimatedMaximumBitrate(
                RTCPReceiverEstimatedMaximumBitrate(senderSSRC: 0xAABB_CCDD, bitrate: 1_000_000, ssrcs: [0x1122_3344])
            )
        ),
    ]

    @Test("parses hand-built bytes", arguments: vectors)
    func parse(vector: Vector) throws {
        #expect(try RTCPPacket.parseCompound(vector.bytes) == [vector.packet])
    }

    @Test("serializes to hand-built bytes", arguments: vectors)
    func serialize(vector: Vector) throws {
        #expect(try RTCPPacket.serialize([vector.packet]) == vector.bytes)
        #expect(vector.packet.serializedLength == vector.bytes.count)
    }

    @Test("compound round trip: every vector back to back")
    func compoundRoundTrip() throws {
        let packets = Self.vectors.map(\.packet)
        let bytes = try RTCPPacket.serialize(packets)
        #expect(bytes == Self.vectors.flatMap(\.bytes))
        #expect(try RTCPPacket.parseCompound(bytes) == packets)
        let buffer = try RTPPacketBuffer(capacity: 1000)
        try RTCPPacket.serialize(packets, into: buffer)
        #expect(buffer.copyBytes() == bytes)
    }

    @Test("unknown types and feedback formats are skipped by their length")
    func skipsUnknown() throws {
        let app: [UInt8] = [0x80, 0xCC, 0x00, 0x02, 0, 0, 0, 1, 0x6E, 0x61, 0x6D, 0x65]  // APP "name"
        let tmmbr: [UInt8] = [0x83, 0xCD, 0x00, 0x02, 0, 0, 0, 1, 0, 0, 0, 2]  // RTPFB FMT 3
        let otherAFB: [UInt8] = [0x8F, 0xCE, 0x00, 0x03, 0, 0, 0, 1, 0, 0, 0, 0, 0x41, 0x42, 0x43, 0x44]
        let rr = Self.vectors[1]
        let pli = Self.vectors[9]
        let parsed = try RTCPPacket.parseCompound(rr.bytes + app + tmmbr + otherAFB + pli.bytes)
        #expect(parsed == [rr.packet, pli.packet])
    }

    @Test("padding on the last packet is honoured")
    func padding() throws {
        let padded: [UInt8] = [0xA0, 0xC9, 0x00, 0x02, 0x01, 0x02, 0x03, 0x04, 0x00, 0x00, 0x00, 0x04]
        #expect(try RTCPPacket.parseCompound(padded) == [.receiverReport(RTCPReceiverReport(ssrc: 0x0102_0304))])
    }

    struct BadInput: Sendable, CustomTestStringConvertible {
        var name: String
        var bytes: [UInt8]
        var code: RTPError.Code
        var message: String
        var testDescription: String { name }
    }

    @Test(
        "rejects truncated and invalid input with the packet index and offset",
        arguments: [
            BadInput(name: "empty", bytes: [], code: .truncated, message: "RTCP input is empty"),
            BadInput(
                name: "3 bytes",
                bytes: [0x80, 0xC9, 0x00],
                code: .truncated,
                message: "RTCP packet 0 at offset 0: 3 bytes left, need 4 for the header"
            ),
            BadInput(
                name: "version 1",
                bytes: [0x40, 0xC9, 0x00, 0x01, 0, 0, 0, 0],
                code: .unsupportedVersion,
                message: "RTCP packet 0 at offset 0: version 1; only version 2 exists (RFC 3550 §6.4.1)"
            ),
            BadInput(
                name: "an RTP packet",
                bytes: [0x80, 0x60, 0x00, 0x01, 0, 0, 0, 0],
                code: .notRTCP,
                message: "RTCP packet 0 at offset 0: packet type 96 is outside 192–223"
            ),
            BadInput(
                name: "length beyond the input, second packet",
                bytes: [0x80, 0xC9, 0x00, 0x01, 0, 0, 0, 0, 0x81, 0xCE, 0x00, 0x05, 0, 0, 0, 0],
                code: .invalidLength,
                message: "RTCP packet 1 (PSFB (206)) at offset 8: length field says 24 bytes, 8 remain"
            ),
            BadInput(
                name: "SR announcing more report blocks than it holds",
                bytes: [0x82, 0xC8, 0x00, 0x0C] + Array(vectors[0].bytes.dropFirst(4)),
                code: .truncated,
                message:
                    "RTCP packet 0 (SR (200)) at offset 0: 48 bytes left at offset 4, need 72 for the sender info and 2 report blocks"
            ),
            BadInput(
                name: "RR too short for its reporter SSRC",
                bytes: [0x80, 0xC9, 0x00, 0x00],
                code: .truncated,
                message: "need 4 for the reporter SSRC and 0 report blocks"
            ),
            BadInput(
                name: "padding count zero",
                bytes: [0xA0, 0xC9, 0x00, 0x01, 0, 0, 0, 0],
                code: .invalidPadding,
                message: "padding count 0 at offset 7 is 0 or exceeds the 4-byte body"
            ),
            BadInput(
                name: "padding larger than the body",
                bytes: [0xA0, 0xC9, 0x00, 0x01, 0, 0, 0, 5],
                code: .invalidPadding,
                message: "padding count 5"
            ),
            BadInput(
                name: "SDES item running past the packet",
                bytes: [0x81, 0xCA, 0x00, 0x02, 0, 0, 0, 1, 0x01, 0x09, 0x61, 0x62],
                code: .truncated,
                message: "need 9 for the 9-byte item of type 1 in chunk 0"
            ),
            BadInput(
                name: "BYE reason running past the packet",
                bytes: [0x81, 0xCB, 0x00, 0x02, 0, 0, 0, 1, 0x09, 0x61, 0x62, 0x63],
                code: .truncated,
                message: "need 9 for the 9-byte reason"
            ),
            BadInput(
                name: "NACK entries cut by padding",
                bytes: [0xA1, 0xCD, 0x00, 0x03, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0x64, 0, 2],
                code: .invalidLength,
                message: "2 bytes of NACK entries, not a multiple of 4"
            ),
            BadInput(
                name: "FIR entry cut short",
                bytes: [0x84, 0xCE, 0x00, 0x03, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2],
                code: .invalidLength,
                message: "4 bytes of FIR entries, not a multiple of 8"
            ),
            BadInput(
                name: "REMB listing more SSRCs than it holds",
                bytes: [0x8F, 0xCE, 0x00, 0x04, 0, 0, 0, 1, 0, 0, 0, 0, 0x52, 0x45, 0x4D, 0x42, 0x02, 0, 0, 1],
                code: .truncated,
                message: "need 8 for the 2 REMB SSRCs"
            ),
        ]
    )
    func rejects(input: BadInput) {
        let error = #expect(throws: RTPError.self) { try RTCPPacket.parseCompound(input.bytes) }
        #expect(error?.code == input.code)
        #expect(error?.message.contains(input.message) == true, "\(error?.message ?? "no error")")
    }

    @Test("serializing refuses fields that do not fit")
    func serializeRejects() {
        let many = RTCPReceiverReport(ssrc: 1, reports: Array(repeating: Self.block, count: 32))
        let count = #expect(throws: RTPError.self) { try RTCPPacket.serialize([.receiverReport(many)]) }
        #expect(count?.message == "RTCP RR (201) with 32 report blocks; the 5-bit count field allows 31")
        let long = RTCPSourceDescription(chunks: [
            .init(source: 1, items: [.init(type: .note, value: Array(repeating: 1, count: 256))])
        ])
        #expect(throws: RTPError.self) { try RTCPPacket.serialize([.sourceDescription(long)]) }
        let zero = RTCPSourceDescription(chunks: [.init(source: 1, items: [.init(type: .init(rawValue: 0), value: [])])]
        )
        #expect(throws: RTPError.self) { try RTCPPacket.serialize([.sourceDescription(zero)]) }
        let reason = RTCPGoodbye(sources: [1], reason: String(repeating: "x", count: 256))
        #expect(throws: RTPError.self) { try RTCPPacket.serialize([.goodbye(reason)]) }
        let remb = RTCPReceiverEstimatedMaximumBitrate(senderSSRC: 1, exponent: 64, mantissa: 1, ssrcs: [])
        #expect(throws: RTPError.self) { try RTCPPacket.serialize([.receiverEstimatedMaximumBitrate(remb)]) }
        let small = #expect(throws: RTPError.self) {
            var storage = [UInt8](repeating: 0, count: 7)
            return try storage.withUnsafeMutableBytes { try RTCPPacket.serialize([Self.vectors[1].packet], into: $0) }
        }
        #expect(small?.code == .bufferTooSmall)
    }

    @Test("cumulative loss is a signed 24-bit field, clamped when serialized")
    func cumulativeLost() throws {
        var report = Self.block
        report.cumulativeLost = 10_000_000
        let bytes = try RTCPPacket.serialize([.receiverReport(RTCPReceiverReport(ssrc: 1, reports: [report]))])
        #expect(Array(bytes[13..<16]) == [0x7F, 0xFF, 0xFF])
        report.cumulativeLost = -10_000_000
        let negative = try RTCPPacket.serialize([.receiverReport(RTCPReceiverReport(ssrc: 1, reports: [report]))])
        #expect(Array(negative[13..<16]) == [0x80, 0x00, 0x00])
        guard case .receiverReport(let parsed) = try RTCPPacket.parseCompound(negative).first else {
            Issue.record("not an RR")
            return
        }
        #expect(parsed.reports.first?.cumulativeLost == -8_388_608)
    }

    @Test("SDES and BYE text helpers")
    func textHelpers() {
        let sdes = RTCPSourceDescription(ssrc: 9, cname: "user@host")
        #expect(sdes.cname(of: 9) == "user@host")
        #expect(sdes.cname(of: 8) == nil)
        #expect(RTCPGoodbye(sources: [1], reason: "done").reasonText == "done")
    }
}
