import Testing

@testable import RTP

@Suite("RTP packet history")
struct RTPPacketHistoryTests {
    /// A 16-byte packet: fixed header with `sequenceNumber`, then four payload bytes naming it.
    static func packet(_ sequenceNumber: UInt16, payloadLength: Int = 4) -> [UInt8] {
        [
            0x80, 0x60, UInt8(sequenceNumber >> 8), UInt8(sequenceNumber & 0xFF), 0, 0, 0x30, 0x39, 0x12, 0x34, 0x56,
            0x78,
        ]
            + (0..<payloadLength).map { UInt8(truncatingIfNeeded: Int(sequenceNumber) &+ $0) }
    }

    static func store(_ history: RTPPacketHistory, _ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { history.store($0) }
    }

    @Test("finds packets across the 16-bit wrap and copies them byte for byte")
    func wrap() throws {
        let history = try RTPPacketHistory(capacity: 1024, slotSize: 1200)
        for sequenceNumber in (65_530...65_535).map(UInt16.init) + (0...5).map(UInt16.init) {
            #expect(Self.store(history, Self.packet(sequenceNumber)))
        }
        var out = [UInt8](repeating: 0, count: 64)
        for sequenceNumber: UInt16 in [65_530, 65_535, 0, 5] {
            let length = out.withUnsafeMutableBytes { history.copy(sequenceNumber, into: $0) }
            #expect(length == 16)
            #expect(Array(out.prefix(16)) == Self.packet(sequenceNumber))
        }
        #expect(history.packet(65_529) == nil, "never stored")
        #expect(history.packet(6) == nil, "newer than the newest: not sent yet")
        #expect(history.storedCount == 12)
    }

    @Test("forgets what is older than its capacity, even when a slot still holds bytes")
    func age() throws {
        let history = try RTPPacketHistory(capacity: 1024, slotSize: 64)
        for sequenceNumber in 0..<1030 { _ = Self.store(history, Self.packet(UInt16(sequenceNumber))) }
        #expect(history.packet(5) == nil, "age 1024: overwritten by 1029")
        #expect(history.packet(6) == Self.packet(6), "age 1023: still held")
        #expect(history.packet(1029) == Self.packet(1029))
        // A packet far in the past whose slot was not reused since (nothing in between stored).
        let sparse = try RTPPacketHistory(capacity: 1024, slotSize: 64)
        _ = Self.store(sparse, Self.packet(100))
        _ = Self.store(sparse, Self.packet(100 + 2000))
        #expect(sparse.packet(100) == nil, "age 2000 is outside the history though its slot is intact")
    }

    @Test("refuses packets it cannot hold and buffers too small to copy into")
    func limits() throws {
        let history = try RTPPacketHistory(capacity: 1024, slotSize: 20)
        #expect(!Self.store(history, [0x80, 0x60, 0, 1]), "shorter than a header")
        #expect(!Self.store(history, Self.packet(1, payloadLength: 9)), "21 bytes > 20-byte slot")
        #expect(history.rejectedCount == 2)
        #expect(Self.store(history, Self.packet(2, payloadLength: 8)))
        var small = [UInt8](repeating: 0, count: 19)
        #expect(small.withUnsafeMutableBytes { history.copy(2, into: $0) } == nil)
        let buffer = try RTPPacketBuffer(capacity: 64)
        #expect(history.copy(2, into: buffer) && buffer.copyBytes() == Self.packet(2, payloadLength: 8))
        #expect(buffer.sequenceNumber == 2)
    }

    @Test("capacity is a power of two sized for a second of the stream")
    func capacity() throws {
        #expect(RTPPacketHistory.recommendedCapacity(bitsPerSecond: 2_000_000, packetSize: 1200) == 1024)
        // 20 Mbit/s in 1200-byte packets is 2083 packets a second.
        #expect(RTPPacketHistory.recommendedCapacity(bitsPerSecond: 20_000_000, packetSize: 1200) == 4096)
        #expect(RTPPacketHistory.recommendedCapacity(bitsPerSecond: 1_000_000_000, packetSize: 1200) == 16_384)
        let error = #expect(throws: RTPError.self) { try RTPPacketHistory(capacity: 1000, slotSize: 1200) }
        #expect(error?.message == "packet history capacity 1000 is not a power of two in 1024–16384")
        #expect(throws: RTPError.self) { try RTPPacketHistory(capacity: 1024, slotSize: 11) }
    }
}
