import Testing

@testable import SRTP

/// What libsrtp does when a sender protects a sequence number a second time, which same-SSRC
/// retransmission (answering a NACK with the original packet) needs.
@Suite("SRTP protect of a repeated index (retransmission)")
struct SRTPRepeatedTransmissionTests {
    @Test(
        "refused by default as a replay; allowed, identical and accepted by the receiver when asked for",
        arguments: SRTPSuite.allCases
    )
    func repeatedIndex(suite: SRTPSuite) throws {
        let keys = SRTPKeyMaterial.random(for: suite)
        let strict = try SRTPSession(keys: keys, direction: .outbound)
        _ = try strict.protect(Packets.rtp(sequence: 100))
        let refusal = #expect(throws: SRTPError.self) { try strict.protect(Packets.rtp(sequence: 100)) }
        #expect(refusal?.code == .replayed)

        let sender = try SRTPSession(
            keys: keys,
            direction: .outbound,
            configuration: .init(allowsRepeatedTransmission: true)
        )
        let receiver = try SRTPSession(keys: keys, direction: .inbound)
        var sent: [UInt16: [UInt8]] = [:]
        for sequence in UInt16(100)..<110 { sent[sequence] = try sender.protect(Packets.rtp(sequence: sequence)) }
        // 103 was lost on the way; the others arrive.
        for sequence in UInt16(100)..<110 where sequence != 103 {
            _ = try receiver.unprotect(try #require(sent[sequence]))
        }
        // The resend of 103 is byte-identical to the first protect: same index, same bytes.
        let resent = try sender.protect(Packets.rtp(sequence: 103))
        #expect(resent == sent[103])
        #expect(try receiver.unprotect(resent) == Packets.rtp(sequence: 103))
        // A packet that did arrive, resent, is a replay to the receiver and is dropped there.
        let again = try sender.protect(Packets.rtp(sequence: 104))
        #expect(throws: SRTPError.self) { try receiver.unprotect(again) }
    }

    @Test("an index older than the sender's window is refused even with repeats allowed")
    func olderThanWindow() throws {
        let keys = SRTPKeyMaterial.random(for: .default)
        let sender = try SRTPSession(
            keys: keys,
            direction: .outbound,
            configuration: .init(replayWindowSize: 64, allowsRepeatedTransmission: true)
        )
        for sequence in UInt16(0)..<100 { _ = try sender.protect(Packets.rtp(sequence: sequence)) }
        let error = #expect(throws: SRTPError.self) { try sender.protect(Packets.rtp(sequence: 10)) }
        #expect(error?.code == .replayTooOld)
        _ = try sender.protect(Packets.rtp(sequence: 50))
    }
}
