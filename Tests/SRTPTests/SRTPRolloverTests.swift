import Testing

@testable import SRTP

@Suite("SRTP across the 16-bit sequence wrap")
struct SRTPRolloverTests {
    /// RFC 3711 §3.3.1: sender and receiver both track the rollover counter; 70 000 packets from
    /// 65 000 cross 65535 -> 0 once and keep verifying (the receiver's ROC estimate follows).
    @Test(
        "70000 packets across 65535 -> 0 keep decrypting",
        arguments: [SRTPSuite.aesCM128HmacSHA1_80, .aeadAES128GCM]
    )
    func wrapKeepsDecrypting(suite: SRTPSuite) throws {
        let keys = SRTPKeyMaterial.random(for: suite)
        let sender = try SRTPSession(keys: keys, direction: .outbound)
        let receiver = try SRTPSession(keys: keys, direction: .inbound)
        let trailer = suite.rtpTrailerLength
        // One reused buffer, as on the media path.
        var buffer = [UInt8](repeating: 0, count: 12 + 24 + trailer)
        var sequence: UInt16 = 65_000
        var verified = 0
        for count in 0..<70_000 {
            let packet = Packets.rtp(sequence: sequence, timestamp: UInt32(count) &* 3000)
            buffer.replaceSubrange(0..<packet.count, with: packet)
            let length = try buffer.withUnsafeMutableBytes { try sender.protect(buffer: $0, length: packet.count) }
            let plain = try buffer.withUnsafeMutableBytes { try receiver.unprotect(buffer: $0, length: length) }
            if plain == packet.count && buffer[..<plain].elementsEqual(packet) { verified += 1 }
            sequence &+= 1
        }
        #expect(verified == 70_000)
        #expect(sequence == UInt16(truncatingIfNeeded: 65_000 + 70_000))
    }

    /// A receiver that misses the packets around the wrap still follows (RFC 3711 Appendix A:
    /// the ROC estimate picks the index closest to the highest one seen).
    @Test("a gap across the wrap is tolerated")
    func gapAcrossWrap() throws {
        let keys = SRTPKeyMaterial.random()
        let sender = try SRTPSession(keys: keys, direction: .outbound)
        let receiver = try SRTPSession(keys: keys, direction: .inbound)
        var sequence: UInt16 = 65_400
        for index in 0..<400 {
            let packet = Packets.rtp(sequence: sequence)
            let protected = try sender.protect(packet)
            let lost = (60..<260).contains(index)  // 65460 ... 123 never arrive
            if !lost {
                #expect(try receiver.unprotect(protected) == packet, "sequence \(sequence)")
            }
            sequence &+= 1
        }
    }
}
