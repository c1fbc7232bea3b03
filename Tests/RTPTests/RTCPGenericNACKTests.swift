import Testing

@testable import RTP

@Suite("Generic NACK PID/BLP encoding (RFC 4585 §6.2.1)")
struct RTCPGenericNACKTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var lost: [UInt16]
        var entries: [RTCPGenericNACK.Entry]
        var testDescription: String { "\(lost)" }
    }

    @Test(
        "encodes lost lists into entries",
        arguments: [
            Case(lost: [100], entries: [.init(packetID: 100, lostBitmask: 0)]),
            Case(lost: [100, 101, 103], entries: [.init(packetID: 100, lostBitmask: 0b101)]),
            Case(lost: [10, 26], entries: [.init(packetID: 10, lostBitmask: 0x8000)]),  // 16 away: last BLP bit
            Case(lost: [10, 27], entries: [.init(packetID: 10, lostBitmask: 0), .init(packetID: 27, lostBitmask: 0)]),
            Case(
                lost: [65_534, 65_535, 0, 17, 50],  // across the wrap
                entries: [
                    .init(packetID: 65_534, lostBitmask: 0b11),
                    .init(packetID: 17, lostBitmask: 0),
                    .init(packetID: 50, lostBitmask: 0),
                ]
            ),
            Case(lost: [5, 5, 6, 6], entries: [.init(packetID: 5, lostBitmask: 1)]),
            Case(lost: [], entries: []),
        ]
    )
    func encode(input: Case) {
        let nack = RTCPGenericNACK(senderSSRC: 1, mediaSSRC: 2, lostSequenceNumbers: input.lost)
        #expect(nack.entries == input.entries)
    }

    @Test("decodes entries back into the lost list")
    func decode() {
        let nack = RTCPGenericNACK(
            senderSSRC: 1,
            mediaSSRC: 2,
            entries: [.init(packetID: 65_530, lostBitmask: 0b1000_0000_0010_0001), .init(packetID: 7, lostBitmask: 0)]
        )
        // Bits 0, 5 and 15: PID + 1, PID + 6 (wraps to 0) and PID + 16 (wraps to 10).
        #expect(nack.lostSequenceNumbers == [65_530, 65_531, 0, 10, 7])
    }

    @Test("ascending lost lists round-trip through the wire format")
    func roundTrip() throws {
        var generator = SeededGenerator(seed: 99)
        for _ in 0..<200 {
            var sequence = UInt16.random(in: 0...UInt16.max, using: &generator)
            var lost: [UInt16] = []
            for _ in 0..<Int.random(in: 1...60, using: &generator) {
                sequence &+= UInt16.random(in: 1...40, using: &generator)
                lost.append(sequence)
            }
            let nack = RTCPGenericNACK(senderSSRC: 3, mediaSSRC: 4, lostSequenceNumbers: lost)
            let parsed = try RTCPPacket.parseCompound(RTCPPacket.serialize([.genericNACK(nack)]))
            #expect(parsed == [.genericNACK(nack)])
            #expect(nack.lostSequenceNumbers == lost)
        }
    }
}
