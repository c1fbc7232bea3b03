import Testing

@testable import RTP

@Suite("Reusable packet buffer")
struct RTPPacketBufferTests {
    @Test("leaves SRTP room after every packet and lets an in-place encryptor grow it")
    func inPlaceGrowth() throws {
        var payloader = H264Payloader()
        var stream = try makeStream()
        let buffer = RTPPacketBuffer(budget: .standard)
        var lengths: [Int] = []
        // A 2352-byte body splits into two full 1176-byte fragments: 1190-byte packets.
        try payloader.packetize(
            accessUnit: [patternBytes(2353, header: 0x41)[...]],
            timestamp: 0,
            stream: &stream,
            into: buffer
        ) { buffer in
            #expect(buffer.capacity - buffer.count >= RTPPacketBuffer.trailerSpare + 10)
            // What srtp_protect does: append a 10-byte tag behind the packet, in place.
            buffer.withUnsafeMutableStorage { storage, count in
                for index in count..<count + 10 { storage[index] = 0xAA }
                count += 10
            }
            lengths.append(buffer.count)
            #expect(buffer.withUnsafeBytes { Array($0.suffix(10)) } == Array(repeating: 0xAA, count: 10))
        }
        #expect(lengths == [1200, 1200])  // exactly the MTU once the tag is on
    }

    @Test("packet length stays within the buffer")
    func bounds() throws {
        let buffer = try RTPPacketBuffer(capacity: 64)
        try buffer.setCount(64)
        #expect(buffer.count == 64)
        let error = #expect(throws: RTPError.self) { try buffer.setCount(65) }
        #expect(error?.message == "packet length 65 is outside the buffer's 0–64 bytes")
        buffer.withUnsafeMutableStorage { _, count in count = 1000 }
        #expect(buffer.count == 64)
        buffer.withUnsafeMutableStorage { _, count in count = -5 }
        #expect(buffer.count == 0)
        #expect(buffer.sequenceNumber == nil)
        #expect(throws: RTPError.self) { try RTPPacketBuffer(capacity: 11) }
        #expect(throws: RTPError.self) { try RTPPacketBuffer(capacity: RTPPacketBuffer.maximumCapacity + 1) }
    }
}
