import Testing

@testable import RTP

@Suite("Transport-wide congestion control feedback (draft-holmer-rmcat-transport-wide-cc-extensions-01 §3.1)")
struct RTCPTransportFeedbackTests {
    struct Vector: Sendable, CustomTestStringConvertible {
        var name: String
        /// The bytes as received.
        var wire: [UInt8]
        /// What our writer makes of the parsed value (zero padding, its own chunks); nil when
        /// it is `wire` itself.
        var written: [UInt8]?
        var feedback: RTCPTransportFeedback
        var testDescription: String { name }
    }

    static func received(_ pairs: [(UInt16, Int64)]) -> [RTCPTransportFeedback.ReceivedPacket] {
        pairs.map { RTCPTransportFeedback.ReceivedPacket(sequenceNumber: $0.0, arrivalTime: $0.1) }
    }

    static let vectors: [Vector] = [
        Vector(
            // Chrome's feedback as captured by Wireshark, from olivermichel/webrtc-analysis
            // test/include/data.h (twcc_pkt1): RTCP padding (P=1, count 1) after the deltas.
            name: "Chrome capture: run of 9 small deltas, RTCP padding",
            wire: [
                0xAF, 0xCD, 0x00, 0x07, 0x00, 0x00, 0x00, 0x01, 0xDD, 0x58, 0x6E, 0xB6,
                0x00, 0x01, 0x00, 0x09,  // base 1, 9 statuses
                0x5E, 0x91, 0x10, 0x00,  // reference time 6197520, feedback packet 0
                0x20, 0x09,  // run of 9 "received, small delta"
                0x1C, 0x0C, 0x2C, 0x38, 0x00, 0x04, 0x00, 0x08, 0x18,  // 7, 3, 11, 14, 0, 1, 0, 2, 6 ms
                0x01,  // RTCP padding count
            ],
            written: [
                0x8F, 0xCD, 0x00, 0x07, 0x00, 0x00, 0x00, 0x01, 0xDD, 0x58, 0x6E, 0xB6,
                0x00, 0x01, 0x00, 0x09, 0x5E, 0x91, 0x10, 0x00, 0x20, 0x09,
                0x1C, 0x0C, 0x2C, 0x38, 0x00, 0x04, 0x00, 0x08, 0x18, 0x00,
            ],
            feedback: RTCPTransportFeedback(
                senderSSRC: 1,
                mediaSSRC: 0xDD58_6EB6,
                baseSequenceNumber: 1,
                packetStatusCount: 9,
                referenceTime: 6_197_520,
                feedbackPacketCount: 0,
                receivedPackets: received([
                    (1, 396_641_287_000), (2, 396_641_290_000), (3, 396_641_301_000), (4, 396_641_315_000),
                    (5, 396_641_315_000), (6, 396_641_316_000), (7, 396_641_316_000), (8, 396_641_318_000),
                    (9, 396_641_324_000),
                ])
            )
        ),
        Vector(
            // pion/rtcp transport_layer_cc_test.go, TestTransportLayerCC_Unmarshal "example1".
            name: "Pion example1: one small delta",
            wire: [
                0xAF, 0xCD, 0x00, 0x05, 0xFA, 0x17, 0xFA, 0x17, 0x43, 0x03, 0x2F, 0xA0,
                0x00, 0x99, 0x00, 0x01, 0x3D, 0xE8, 0x02, 0x17, 0x20, 0x01, 0x94, 0x01,
            ],
            written: [
                0x8F, 0xCD, 0x00, 0x05, 0xFA, 0x17, 0xFA, 0x17, 0x43, 0x03, 0x2F, 0xA0,
                0x00, 0x99, 0x00, 0x01, 0x3D, 0xE8, 0x02, 0x17, 0x20, 0x01, 0x94, 0x00,
            ],
            feedback: RTCPTransportFeedback(
                senderSSRC: 0xFA17_FA17,
                mediaSSRC: 0x4303_2FA0,
                baseSequenceNumber: 153,
                packetStatusCount: 1,
                referenceTime: 4_057_090,
                feedbackPacketCount: 23,
                receivedPackets: received([(153, 259_653_797_000)])  // + 37 ms
            )
        ),
        Vector(
            // pion/rtcp transport_layer_cc_test.go, TestTransportLayerCC_Unmarshal "example4".
            name: "Pion example4: run of 7 small deltas, 3 bytes of RTCP padding",
            wire: [
                0xAF, 0xCD, 0x00, 0x07, 0xFA, 0x17, 0xFA, 0x17, 0x19, 0x3D, 0xD8, 0xBB,
                0x00, 0x04, 0x00, 0x07, 0x10, 0x63, 0x6E, 0x01, 0x20, 0x07,
                0x4C, 0x24, 0x24, 0x10, 0x0C, 0x0C, 0x10, 0x00, 0x00, 0x03,
            ],
            written: [
                0x8F, 0xCD, 0x00, 0x07, 0xFA, 0x17, 0xFA, 0x17, 0x19, 0x3D, 0xD8, 0xBB,
                0x00, 0x04, 0x00, 0x07, 0x10, 0x63, 0x6E, 0x01, 0x20, 0x07,
                0x4C, 0x24, 0x24, 0x10, 0x0C, 0x0C, 0x10, 0x00, 0x00, 0x00,
            ],
            feedback: RTCPTransportFeedback(
                senderSSRC: 0xFA17_FA17,
                mediaSSRC: 0x193D_D8BB,
                baseSequenceNumber: 4,
                packetStatusCount: 7,
                referenceTime: 1_074_030,
                feedbackPacketCount: 1,
                receivedPackets: received([
                    (4, 68_737_939_000), (5, 68_737_948_000), (6, 68_737_957_000), (7, 68_737_961_000),
                    (8, 68_737_964_000), (9, 68_737_967_000), (10, 68_737_971_000),
                ])
            )
        ),
        Vector(
            // pion/rtcp transport_layer_cc_test.go, TestTransportLayerCC_Unmarshal "example6": the
            // run of 48 "not received" covers more than the 2 statuses left; we write a run of 2.
            name: "Pion example6: 2-bit vector with a large delta, then a run past the count",
            wire: [
                0xAF, 0xCD, 0x00, 0x07, 0x9B, 0x74, 0xF6, 0x1F, 0x93, 0x71, 0xDC, 0xBC,
                0x85, 0x3C, 0x00, 0x09, 0x63, 0xF9, 0x16, 0xB3,
                0xD5, 0x52,  // 2-bit vector: 5 × small, not received, large
                0x00, 0x30,  // run of 48 "not received"
                0x9B, 0xAA, 0x6A, 0xAA, 0x7B, 0x01, 0x09, 0x01,
            ],
            written: [
                0x8F, 0xCD, 0x00, 0x07, 0x9B, 0x74, 0xF6, 0x1F, 0x93, 0x71, 0xDC, 0xBC,
                0x85, 0x3C, 0x00, 0x09, 0x63, 0xF9, 0x16, 0xB3, 0xD5, 0x52, 0x00, 0x02,
                0x9B, 0xAA, 0x6A, 0xAA, 0x7B, 0x01, 0x09, 0x00,
            ],
            feedback: RTCPTransportFeedback(
                senderSSRC: 0x9B74_F61F,
                mediaSSRC: 0x9371_DCBC,
                baseSequenceNumber: 34_108,
                packetStatusCount: 9,
                referenceTime: 6_551_830,
                feedbackPacketCount: 179,
                receivedPackets: received([
                    (34_108, 419_317_158_750), (34_109, 419_317_201_250), (34_110, 419_317_227_750),
                    (34_111, 419_317_270_250), (34_112, 419_317_301_000), (34_114, 419_317_367_250),
                ])
            )
        ),
        Vector(
            // pion/rtcp transport_layer_cc_test.go, TestTransportLayerCC_Unmarshal "example7".
            name: "Pion example7: no statuses at all",
            wire: [
                0x8F, 0xCD, 0x00, 0x04, 0x9A, 0xCB, 0x04, 0x42, 0x00, 0x00, 0x00, 0x00,
                0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            ],
            feedback: RTCPTransportFeedback(
                senderSSRC: 0x9ACB_0442,
                mediaSSRC: 0,
                baseSequenceNumber: 0,
                packetStatusCount: 0,
                referenceTime: 0,
                feedbackPacketCount: 0,
                receivedPackets: []
            )
        ),
        Vector(
            name: "run-length chunks only: the draft's §3.1.3 example 1 (221 not received), then 3 small",
            wire: [
                0x8F, 0xCD, 0x00, 0x06, 0x0A, 0x0B, 0x0C, 0x0D, 0x01, 0x02, 0x03, 0x04,
                0x00, 0x64, 0x00, 0xE0,  // base 100, 224 statuses
                0x00, 0x00, 0x00, 0x05,
                0x00, 0xDD, 0x20, 0x03,  // run of 221 not received, run of 3 small
                0x04, 0x08, 0x0C, 0x00,  // 1, 2, 3 ms, one byte of zero padding
            ],
            feedback: RTCPTransportFeedback(
                senderSSRC: 0x0A0B_0C0D,
                mediaSSRC: 0x0102_0304,
                baseSequenceNumber: 100,
                packetStatusCount: 224,
                referenceTime: 0,
                feedbackPacketCount: 5,
                receivedPackets: received([(321, 1000), (322, 3000), (323, 6000)])
            )
        ),
        Vector(
            name: "1-bit status vector: the draft's §3.1.4 example 1",
            wire: [
                0x8F, 0xCD, 0x00, 0x07, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x02,
                0x00, 0x07, 0x00, 0x0E, 0x00, 0x00, 0x02, 0x00,  // base 7, 14 statuses, reference 128 ms
                0x9F, 0x1C,  // 0 11111 000 111 00
                0x40, 0x01, 0x02, 0x03, 0x04, 0xFF, 0x00, 0x0A,  // 16, 0.25, 0.5, 0.75, 1, 63.75, 0, 2.5 ms
                0x00, 0x00,
            ],
            feedback: RTCPTransportFeedback(
                senderSSRC: 1,
                mediaSSRC: 2,
                baseSequenceNumber: 7,
                packetStatusCount: 14,
                referenceTime: 2,
                feedbackPacketCount: 0,
                receivedPackets: received([
                    (8, 144_000), (9, 144_250), (10, 144_750), (11, 145_500), (12, 146_500),
                    (16, 210_250), (17, 210_250), (18, 212_750),
                ])
            )
        ),
        Vector(
            name: "2-bit status vector with a large and a negative delta",
            wire: [
                0x8F, 0xCD, 0x00, 0x06, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x02,
                0x03, 0xE8, 0x00, 0x05, 0x00, 0x03, 0xE8, 0x07,  // base 1000, 5 statuses, reference 64 s
                0xD8, 0x90,  // small, large, not received, large, small
                0x04, 0x01, 0x90, 0xFF, 0xEC, 0x0A,  // +1 ms, +100 ms, −5 ms, +2.5 ms
            ],
            feedback: RTCPTransportFeedback(
                senderSSRC: 1,
                mediaSSRC: 2,
                baseSequenceNumber: 1000,
                packetStatusCount: 5,
                referenceTime: 1000,
                feedbackPacketCount: 7,
                receivedPackets: received([
                    (1000, 64_001_000), (1001, 64_101_000), (1003, 64_096_000), (1004, 64_098_500),
                ])
            )
        ),
        Vector(
            name: "sequence numbers wrap: base 65530, 10 packets, 0 not received",
            wire: [
                0x8F, 0xCD, 0x00, 0x07, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x02,
                0xFF, 0xFA, 0x00, 0x0A, 0x00, 0x00, 0x00, 0x01,
                0xBF, 0x70,  // 111111 0 111 (0000 unused)
                0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x00,
            ],
            feedback: RTCPTransportFeedback(
                senderSSRC: 1,
                mediaSSRC: 2,
                baseSequenceNumber: 65_530,
                packetStatusCount: 10,
                referenceTime: 0,
                feedbackPacketCount: 1,
                receivedPackets: received([
                    (65_530, 1000), (65_531, 2000), (65_532, 3000), (65_533, 4000), (65_534, 5000),
                    (65_535, 6000), (1, 7000), (2, 8000), (3, 9000),
                ])
            )
        ),
        Vector(
            name: "reference time −1 (0xFFFFFF, sign-extended)",
            wire: [
                0x8F, 0xCD, 0x00, 0x05, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x02,
                0x00, 0x00, 0x00, 0x01, 0xFF, 0xFF, 0xFF, 0x00, 0x20, 0x01, 0x10, 0x00,
            ],
            feedback: RTCPTransportFeedback(
                senderSSRC: 1,
                mediaSSRC: 2,
                baseSequenceNumber: 0,
                packetStatusCount: 1,
                referenceTime: -1,
                feedbackPacketCount: 0,
                receivedPackets: received([(0, -60_000)])  // −64 ms + 4 ms
            )
        ),
        Vector(
            name: "most negative reference time and delta",
            wire: [
                0x8F, 0xCD, 0x00, 0x05, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x02,
                0x00, 0x00, 0x00, 0x01, 0x80, 0x00, 0x00, 0x00, 0x40, 0x01, 0x80, 0x00,
            ],
            feedback: RTCPTransportFeedback(
                senderSSRC: 1,
                mediaSSRC: 2,
                baseSequenceNumber: 0,
                packetStatusCount: 1,
                referenceTime: -8_388_608,
                feedbackPacketCount: 0,
                receivedPackets: received([(0, -536_879_104_000)])  // −2²³ × 64 ms − 8192 ms
            )
        ),
        Vector(
            name: "RTCP padding (a whole word) after zero padding",
            wire: [
                0xAF, 0xCD, 0x00, 0x06, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x02,
                0x00, 0x00, 0x00, 0x01, 0xFF, 0xFF, 0xFF, 0x00, 0x20, 0x01, 0x10, 0x00,
                0x00, 0x00, 0x00, 0x04,
            ],
            written: [
                0x8F, 0xCD, 0x00, 0x05, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x02,
                0x00, 0x00, 0x00, 0x01, 0xFF, 0xFF, 0xFF, 0x00, 0x20, 0x01, 0x10, 0x00,
            ],
            feedback: RTCPTransportFeedback(
                senderSSRC: 1,
                mediaSSRC: 2,
                baseSequenceNumber: 0,
                packetStatusCount: 1,
                referenceTime: -1,
                feedbackPacketCount: 0,
                receivedPackets: received([(0, -60_000)])
            )
        ),
    ]

    @Test("parses byte vectors", arguments: vectors)
    func parse(vector: Vector) throws {
        #expect(try RTCPPacket.parseCompound(vector.wire) == [.transportFeedback(vector.feedback)])
    }

    @Test("writes byte vectors", arguments: vectors)
    func write(vector: Vector) throws {
        let bytes = try RTCPPacket.serialize([.transportFeedback(vector.feedback)])
        #expect(bytes == (vector.written ?? vector.wire))
        #expect(RTCPPacket.transportFeedback(vector.feedback).serializedLength == bytes.count)
        #expect(try RTCPPacket.parseCompound(bytes) == [.transportFeedback(vector.feedback)])
    }

    @Test("statuses per sequence number across the wrap")
    func statuses() throws {
        let feedback = Self.vectors[8].feedback
        #expect(feedback.covers(65_530) && feedback.covers(3))
        #expect(!feedback.covers(65_529) && !feedback.covers(4))
        #expect(feedback.arrivalTime(of: 65_535) == 6000)
        #expect(feedback.arrivalTime(of: 0) == nil)
        #expect(feedback.arrivalTime(of: 1) == 7000)
        #expect(feedback.arrivalTime(of: 3) == 9000)
        #expect(feedback.arrivalTime(of: 4) == nil)
        #expect(feedback.notReceivedCount == 1)
        #expect(feedback.referenceTimeMicroseconds == 0)
        #expect(
            feedback.packetStatuses.map(\.sequenceNumber) == [
                65_530, 65_531, 65_532, 65_533, 65_534, 65_535, 0, 1, 2, 3,
            ]
        )
        #expect(
            feedback.packetStatuses.map(\.isReceived) == [true, true, true, true, true, true, false, true, true, true]
        )
        var visited = 0
        feedback.forEachStatus { status in
            #expect(status.arrivalTime == feedback.arrivalTime(of: status.sequenceNumber))
            visited += 1
        }
        #expect(visited == 10)
        #expect(Self.vectors[10].feedback.referenceTimeMicroseconds == -536_870_912_000)
    }

    @Test("symbols past the status count are ignored, the reserved one too")
    func symbolsPastCount() throws {
        // The draft's §3.1.4 example 2 (0xCD50: not received, 3, …) for one status.
        let bytes: [UInt8] = [
            0x8F, 0xCD, 0x00, 0x05, 0, 0, 0, 1, 0, 0, 0, 2, 0x00, 0x0A, 0x00, 0x01, 0, 0, 0, 0,
            0xCD, 0x50, 0x00, 0x00,
        ]
        guard case .transportFeedback(let feedback) = try RTCPPacket.parseCompound(bytes).first else {
            Issue.record("no transport feedback")
            return
        }
        #expect(feedback.packetStatusCount == 1)
        #expect(feedback.receivedPackets.isEmpty)
        #expect(feedback.packetStatuses == [.init(sequenceNumber: 10, arrivalTime: nil)])
    }

    struct BadInput: Sendable, CustomTestStringConvertible {
        var name: String
        var bytes: [UInt8]
        var code: RTPError.Code
        var message: String
        var testDescription: String { name }
    }

    @Test(
        "rejects malformed feedback naming the field and the offset",
        arguments: [
            BadInput(
                name: "too short for the reference time",
                bytes: [0x8F, 0xCD, 0x00, 0x03, 0, 0, 0, 1, 0, 0, 0, 2, 0x00, 0x01, 0x00, 0x01],
                code: .truncated,
                message:
                    "RTCP packet 0 (RTPFB (205)) at offset 0: 0 bytes left at offset 16, need 3 for the reference time"
            ),
            BadInput(
                name: "too short for the status count, second packet",
                bytes: [0x80, 0xC9, 0x00, 0x01, 1, 2, 3, 4, 0x8F, 0xCD, 0x00, 0x02, 0, 0, 0, 1, 0, 0, 0, 2],
                code: .truncated,
                message:
                    "RTCP packet 1 (RTPFB (205)) at offset 8: 0 bytes left at offset 20, need 2 for the base sequence number"
            ),
            BadInput(
                name: "chunks describe fewer statuses than the count",
                bytes: [
                    0x8F, 0xCD, 0x00, 0x05, 0, 0, 0, 1, 0, 0, 0, 2, 0x00, 0x00, 0x00, 0x14, 0, 0, 0, 0,
                    0x00, 0x05, 0x00, 0x05,
                ],
                code: .truncated,
                message:
                    "RTCP packet 0 (RTPFB (205)) at offset 0: 0 bytes left at offset 24, need 2 for packet chunk 2; "
                    + "the chunks before it describe 10 of the 20 packet statuses"
            ),
            BadInput(
                // pion/rtcp transport_layer_cc_test.go "example8": 3 small deltas announced, 1 present.
                name: "receive deltas missing (Pion example8)",
                bytes: [
                    0xAF, 0xCD, 0x00, 0x05, 0xFA, 0x17, 0xFA, 0x17, 0x43, 0x03, 0x2F, 0xA0,
                    0x00, 0x99, 0x00, 0x03, 0x3D, 0xE8, 0x02, 0x17, 0x20, 0x03, 0x94, 0x01,
                ],
                code: .truncated,
                message:
                    "RTCP packet 0 (RTPFB (205)) at offset 0: 1 bytes left at offset 22, need 3 for the receive deltas "
                    + "of 3 received packets"
            ),
            BadInput(
                // pion/rtcp transport_layer_cc_test.go "example9": 2 large deltas announced, 1 byte present.
                name: "large receive deltas missing (Pion example9)",
                bytes: [
                    0xAF, 0xCD, 0x00, 0x05, 0xFA, 0x17, 0xFA, 0x17, 0x43, 0x03, 0x2F, 0xA0,
                    0x00, 0x99, 0x00, 0x02, 0x3D, 0xE8, 0x02, 0x17, 0x40, 0x02, 0x94, 0x01,
                ],
                code: .truncated,
                message: "1 bytes left at offset 22, need 4 for the receive deltas of 2 received packets"
            ),
            BadInput(
                // The draft's §3.1.3 example 2 (0x6018) is a run of symbol 3, which -00 called
                // "received, w/o recv delta" and -01 reserves; libwebrtc refuses it too.
                name: "reserved symbol in a run (draft §3.1.3 example 2)",
                bytes: [
                    0x8F, 0xCD, 0x00, 0x05, 0, 0, 0, 1, 0, 0, 0, 2, 0x00, 0x0A, 0x00, 0x18, 0, 0, 0, 0,
                    0x60, 0x18, 0x00, 0x00,
                ],
                code: .invalidField,
                message:
                    "RTCP packet 0 (RTPFB (205)) at offset 0: packet chunk 0x6018 at offset 20 gives status 0 of 24 "
                    + "(sequence number 10) the reserved symbol 3 (§3.1.1)"
            ),
            BadInput(
                name: "reserved symbol in a 2-bit vector (draft §3.1.4 example 2)",
                bytes: [
                    0x8F, 0xCD, 0x00, 0x05, 0, 0, 0, 1, 0, 0, 0, 2, 0xFF, 0xFF, 0x00, 0x07, 0, 0, 0, 0,
                    0xCD, 0x50, 0x00, 0x00,
                ],
                code: .invalidField,
                message:
                    "packet chunk 0xCD50 at offset 20 gives status 1 of 7 (sequence number 0) the reserved symbol 3"
            ),
            BadInput(
                name: "a word after the receive deltas",
                bytes: [
                    0x8F, 0xCD, 0x00, 0x06, 0, 0, 0, 1, 0, 0, 0, 2, 0x00, 0x00, 0x00, 0x01, 0xFF, 0xFF, 0xFF, 0x00,
                    0x20, 0x01, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00,
                ],
                code: .invalidLength,
                message:
                    "RTCP packet 0 (RTPFB (205)) at offset 0: 5 bytes follow the receive deltas at offset 23; only zero "
                    + "padding to a 32-bit boundary (at most 3 bytes) may"
            ),
            BadInput(
                name: "length field beyond the datagram",
                bytes: [
                    0x8F, 0xCD, 0x00, 0x07, 0, 0, 0, 1, 0, 0, 0, 2, 0x00, 0x00, 0x00, 0x01, 0xFF, 0xFF, 0xFF, 0x00,
                    0x20, 0x01, 0x10, 0x00,
                ],
                code: .invalidLength,
                message: "RTCP packet 0 (RTPFB (205)) at offset 0: length field says 32 bytes, 24 remain"
            ),
            BadInput(
                name: "RTCP padding count beyond the body",
                bytes: [
                    0xAF, 0xCD, 0x00, 0x05, 0, 0, 0, 1, 0, 0, 0, 2, 0x00, 0x00, 0x00, 0x01, 0xFF, 0xFF, 0xFF, 0x00,
                    0x20, 0x01, 0x10, 0x40,
                ],
                code: .invalidPadding,
                message: "padding count 64 at offset 23 is 0 or exceeds the 20-byte body"
            ),
            BadInput(
                name: "RTCP padding that cuts into the receive deltas",
                bytes: [
                    0xAF, 0xCD, 0x00, 0x05, 0, 0, 0, 1, 0, 0, 0, 2, 0x00, 0x00, 0x00, 0x01, 0xFF, 0xFF, 0xFF, 0x00,
                    0x20, 0x01, 0x10, 0x02,
                ],
                code: .truncated,
                message: "0 bytes left at offset 22, need 1 for the receive deltas of 1 received packets"
            ),
        ]
    )
    func rejects(input: BadInput) {
        let error = #expect(throws: RTPError.self) { try RTCPPacket.parseCompound(input.bytes) }
        #expect(error?.code == input.code)
        #expect(error?.message.contains(input.message) == true, "\(error?.message ?? "no error")")
    }

    // MARK: The writer

    /// Arrival steps for the chunk tests: "s" +1 ms (small), "L" +100 ms (large), "-" not received.
    static func build(_ pattern: String, base: UInt16 = 0) throws -> RTCPTransportFeedback {
        var packets: [RTCPTransportFeedback.PacketStatus] = []
        var time: Int64 = 1_000_000
        for (index, character) in pattern.enumerated() {
            let sequenceNumber = base &+ UInt16(index)
            switch character {
            case "s":
                time += 1000
                packets.append(.init(sequenceNumber: sequenceNumber, arrivalTime: time))
            case "L":
                time += 100_000
                packets.append(.init(sequenceNumber: sequenceNumber, arrivalTime: time))
            default:
                packets.append(.init(sequenceNumber: sequenceNumber, arrivalTime: nil))
            }
        }
        return try RTCPTransportFeedback(senderSSRC: 1, mediaSSRC: 2, feedbackPacketCount: 0, packets: packets)
    }

    static func chunks(of feedback: RTCPTransportFeedback) -> [UInt16] {
        var result: [UInt16] = []
        feedback.forEachChunk { result.append($0) }
        return result
    }

    @Test(
        "chooses chunks like libwebrtc: runs, else 1-bit vectors, 2-bit ones for large deltas",
        arguments: [
            ("ssssssssssssssssssss", [0x2014]),  // one run of 20 small
            ("ssssssssssL", [0x200A, 0x4001]),  // the run ends where the large delta starts
            ("sss-sssL", [0xD515, 0x4001]),  // 7 mixed then a large delta: a 2-bit vector of 7
            ("sLLLLLLLLL", [0xDAAA, 0x4003]),  // the first delta (from the reference time) is small
            ("s--------------------s", [0xA000, 0x8040]),  // 1-bit vector of 14, then one of 8
            ("-s-s", [0x9400]),  // the last chunk: 1-bit, unused symbols 0
            ("s-L", [0xD200]),  // the last chunk with a large delta: 2-bit
            ("s---", [0xA000]),  // mixed, no large delta: 1-bit
        ] as [(String, [UInt16])]
    )
    func chunkChoice(pattern: String, expected: [UInt16]) throws {
        let feedback = try Self.build(pattern)
        #expect(Self.chunks(of: feedback) == expected)
        let bytes = try RTCPPacket.serialize([.transportFeedback(feedback)])
        #expect(try RTCPPacket.parseCompound(bytes) == [.transportFeedback(feedback)])
    }

    @Test("a gap longer than a run splits into 8191-packet runs")
    func longGap() throws {
        let feedback = try RTCPTransportFeedback(
            senderSSRC: 1,
            mediaSSRC: 2,
            feedbackPacketCount: 9,
            packets: [.init(sequenceNumber: 10, arrivalTime: nil), .init(sequenceNumber: 10 &+ 20_000, arrivalTime: 0)]
        )
        #expect(feedback.packetStatusCount == 20_001)
        // Runs of 8191, 8191 and 3618 not received; the received packet cannot join a run of
        // another symbol, so it gets a run of its own.
        #expect(Self.chunks(of: feedback) == [0x1FFF, 0x1FFF, 0x0E22, 0x2001])
        let bytes = try RTCPPacket.serialize([.transportFeedback(feedback)])
        #expect(bytes.count == 20 + 8 + 1 + 3)
        #expect(try RTCPPacket.parseCompound(bytes) == [.transportFeedback(feedback)])
        #expect(feedback.arrivalTime(of: 20_010) == 0)
    }

    @Test("the builder rounds to 250 µs and takes the reference time down to 64 ms")
    func builderRounding() throws {
        let feedback = try RTCPTransportFeedback(
            senderSSRC: 1,
            mediaSSRC: 2,
            feedbackPacketCount: 3,
            packets: [
                .init(sequenceNumber: 5, arrivalTime: 1_000_125),  // 4001 ticks
                .init(sequenceNumber: 6, arrivalTime: 1_000_124),  // 4000 ticks: a delta of −1
                .init(sequenceNumber: 8, arrivalTime: nil),
            ]
        )
        #expect(feedback.referenceTime == 15)  // 4001 / 256
        #expect(feedback.baseSequenceNumber == 5 && feedback.packetStatusCount == 4)
        #expect(
            feedback.receivedPackets == Self.received([(5, 1_000_250), (6, 1_000_000)])
        )
        #expect(Self.chunks(of: feedback) == [0xD800])
        let bytes = try RTCPPacket.serialize([.transportFeedback(feedback)])
        #expect(Array(bytes[16..<28]) == [0x00, 0x00, 0x0F, 0x03, 0xD8, 0x00, 0xA1, 0xFF, 0xFF, 0x00, 0x00, 0x00])
    }

    @Test("the builder wraps the reference time into 24 bits")
    func builderWrap() throws {
        let period = RTCPTransportFeedback.referenceTimeWrapPeriod
        let feedback = try RTCPTransportFeedback(
            senderSSRC: 1,
            mediaSSRC: 2,
            feedbackPacketCount: 0,
            packets: [
                .init(sequenceNumber: 0, arrivalTime: period + 64_000),
                .init(sequenceNumber: 1, arrivalTime: period + 65_000),
            ]
        )
        #expect(period == 1_073_741_824_000)
        #expect(feedback.referenceTime == 1)
        #expect(feedback.receivedPackets == Self.received([(0, 64_000), (1, 65_000)]))
        let negative = try RTCPTransportFeedback(
            senderSSRC: 1,
            mediaSSRC: 2,
            feedbackPacketCount: 0,
            packets: [.init(sequenceNumber: 0, arrivalTime: -period / 2 - 64_000)]
        )
        #expect(negative.referenceTime == 8_388_607)
        #expect(negative.receivedPackets == Self.received([(0, period / 2 - 64_000)]))
    }

    @Test("the builder refuses what one message cannot carry")
    func builderRejects() {
        func message(_ packets: [RTCPTransportFeedback.PacketStatus]) -> String? {
            let error = #expect(throws: RTPError.self) {
                try RTCPTransportFeedback(senderSSRC: 1, mediaSSRC: 2, feedbackPacketCount: 0, packets: packets)
            }
            return error?.message
        }
        #expect(message([]) == "transport feedback needs at least one packet status; libwebrtc drops empty ones")
        #expect(
            message([.init(sequenceNumber: 10, arrivalTime: nil), .init(sequenceNumber: 9, arrivalTime: nil)])
                == "transport feedback packet status 1: sequence number 9 is not newer than 10"
        )
        #expect(
            message([.init(sequenceNumber: 10, arrivalTime: 0), .init(sequenceNumber: 10, arrivalTime: 0)])
                == "transport feedback packet status 1: sequence number 10 is not newer than 10"
        )
        #expect(
            message([
                .init(sequenceNumber: 0, arrivalTime: nil), .init(sequenceNumber: 0x7FFF, arrivalTime: nil),
                .init(sequenceNumber: 0xFFFE, arrivalTime: nil), .init(sequenceNumber: 0xFFFF, arrivalTime: nil),
            ])
                == "transport feedback packet status 3: sequence number 65535 is 65535 after the base 0; the status "
                + "count allows 65,535 packets"
        )
        #expect(
            message([.init(sequenceNumber: 0, arrivalTime: 0), .init(sequenceNumber: 1, arrivalTime: 8_192_000)])
                == "transport feedback packet status 1 (sequence number 1): arrival 8192000 µs is not within "
                + "−8192000…8191750 µs of the previous arrival, 0 µs: a receive delta cannot hold it, a new feedback "
                + "message must start here (§3.1.5)"
        )
        #expect(
            message([.init(sequenceNumber: 0, arrivalTime: 20_000_000), .init(sequenceNumber: 1, arrivalTime: 0)])
                != nil
        )
    }

    @Test("the builder accepts the extreme deltas")
    func builderLimits() throws {
        let feedback = try RTCPTransportFeedback(
            senderSSRC: 1,
            mediaSSRC: 2,
            feedbackPacketCount: 0,
            packets: [
                .init(sequenceNumber: 0, arrivalTime: 0),
                .init(sequenceNumber: 1, arrivalTime: 8_191_750),
                .init(sequenceNumber: 2, arrivalTime: -250),
            ]
        )
        let bytes = try RTCPPacket.serialize([.transportFeedback(feedback)])
        #expect(Array(bytes[20..<28]) == [0xDA, 0x00, 0x00, 0x7F, 0xFF, 0x80, 0x00, 0x00])
        #expect(try RTCPPacket.parseCompound(bytes) == [.transportFeedback(feedback)])
    }

    @Test("serializing refuses values the wire cannot hold")
    func serializeRejects() {
        func message(_ feedback: RTCPTransportFeedback) -> String? {
            let error = #expect(throws: RTPError.self) { try RTCPPacket.serialize([.transportFeedback(feedback)]) }
            #expect(error?.code == .invalidField)
            return error?.message
        }
        var feedback = Self.vectors[7].feedback
        feedback.referenceTime = 0x80_0000
        #expect(
            message(feedback)
                == "transport feedback reference time 8388608 does not fit the signed 24-bit field (−8388608…8388607)"
        )
        feedback = Self.vectors[7].feedback
        feedback.receivedPackets[1].arrivalTime += 1
        #expect(
            message(feedback)
                == "transport feedback received packet 1 (sequence number 1001): arrival 64101001 µs is not a multiple "
                + "of 250 µs within −8192000…8191750 µs of the previous arrival (§3.1.5)"
        )
        feedback = Self.vectors[7].feedback
        feedback.receivedPackets[2].arrivalTime = 64_101_000 + 8_192_000
        #expect(message(feedback)?.hasPrefix("transport feedback received packet 2 (sequence number 1003)") == true)
        feedback = Self.vectors[7].feedback
        feedback.receivedPackets.swapAt(1, 2)
        #expect(
            message(feedback)
                == "transport feedback received packet 2: sequence number 1001 does not follow the previous one within "
                + "the 5 statuses from 1000"
        )
        feedback = Self.vectors[7].feedback
        feedback.packetStatusCount = 4
        #expect(message(feedback)?.hasPrefix("transport feedback received packet 3: sequence number 1004") == true)
    }

    @Test("writer → parser round trip over random feedback")
    func randomRoundTrip() throws {
        var generator = SeededGenerator(seed: 0x7CC)
        let smallest = Int64(Int16.min) * 250
        let largest = Int64(Int16.max) * 250
        for _ in 0..<500 {
            let base = UInt16.random(in: 0...UInt16.max, using: &generator)
            let isLong = Bool.random(using: &generator)
            let statuses = Int.random(in: 1...(isLong ? 3000 : 40), using: &generator)
            let receivedShare = Double.random(in: 0...1, using: &generator)
            let largeShare = Double.random(in: 0...0.5, using: &generator)
            // Start anywhere the 24-bit reference time reaches, on the 250 µs grid.
            var time = Int64.random(in: -2_000_000_000...2_000_000_000, using: &generator) * 250
            var packets: [RTCPTransportFeedback.PacketStatus] = []
            var expected: [RTCPTransportFeedback.PacketStatus] = []
            var anyReceived = false
            for offset in 0..<statuses {
                let sequenceNumber = base &+ UInt16(offset)
                let isFirstOrLast = offset == 0 || offset == statuses - 1
                guard Double.random(in: 0...1, using: &generator) < receivedShare else {
                    expected.append(.init(sequenceNumber: sequenceNumber, arrivalTime: nil))
                    // A gap in the list or an explicit entry: both mean not received.
                    if isFirstOrLast || Bool.random(using: &generator) {
                        packets.append(.init(sequenceNumber: sequenceNumber, arrivalTime: nil))
                    }
                    continue
                }
                if !anyReceived {
                    // The first delta counts from the reference time, 0…255 ticks by construction.
                    anyReceived = true
                } else if Double.random(in: 0...1, using: &generator) < largeShare {
                    let delta = Int64.random(in: -8_200_000...8_200_000, using: &generator) / 250 * 250
                    time += min(max(delta, smallest), largest)
                } else {
                    time += Int64.random(in: 0...255, using: &generator) * 250
                }
                packets.append(.init(sequenceNumber: sequenceNumber, arrivalTime: time))
                expected.append(.init(sequenceNumber: sequenceNumber, arrivalTime: time))
            }
            let feedback = try RTCPTransportFeedback(
                senderSSRC: UInt32.random(in: 0...UInt32.max, using: &generator),
                mediaSSRC: UInt32.random(in: 0...UInt32.max, using: &generator),
                feedbackPacketCount: UInt8.random(in: 0...UInt8.max, using: &generator),
                packets: packets
            )
            #expect(feedback.packetStatuses == expected)
            let bytes = try RTCPPacket.serialize([.transportFeedback(feedback)])
            #expect(bytes.count % 4 == 0)
            let parsed = try RTCPPacket.parseCompound(bytes)
            #expect(parsed == [.transportFeedback(feedback)])
            guard case .transportFeedback(let read) = parsed.first else { continue }
            #expect(read.packetStatuses == expected)
        }
    }

    @Test("compound packet: RR, transport feedback, PLI")
    func compound() throws {
        let rr: [UInt8] = [0x80, 0xC9, 0x00, 0x01, 0x01, 0x02, 0x03, 0x04]
        let pli: [UInt8] = [0x81, 0xCE, 0x00, 0x02, 0xAA, 0xBB, 0xCC, 0xDD, 0x11, 0x22, 0x33, 0x44]
        let twcc = Self.vectors[0]
        let expected: [RTCPPacket] = [
            .receiverReport(RTCPReceiverReport(ssrc: 0x0102_0304)),
            .transportFeedback(twcc.feedback),
            .pictureLossIndication(RTCPPictureLossIndication(senderSSRC: 0xAABB_CCDD, mediaSSRC: 0x1122_3344)),
        ]
        #expect(try RTCPPacket.parseCompound(rr + twcc.wire + pli) == expected)
        let bytes = try RTCPPacket.serialize(expected)
        #expect(bytes == rr + (twcc.written ?? twcc.wire) + pli)
        #expect(try RTCPPacket.parseCompound(bytes) == expected)
        let buffer = try RTPPacketBuffer(capacity: 200)
        try RTCPPacket.serialize(expected, into: buffer)
        #expect(buffer.copyBytes() == bytes)
    }
}
