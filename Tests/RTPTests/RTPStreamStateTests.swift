import Testing

@testable import RTP

@Suite("RTP stream state")
struct RTPStreamStateTests {
    @Test("random initial sequence numbers stay below 32768")
    func initialSequenceBelowHalf() throws {
        var generator = SeededGenerator(seed: 7)
        var ssrcs = Set<UInt32>()
        for _ in 0..<2000 {
            let stream = try RTPStreamState(payloadType: 96, clockRate: 90_000, using: &generator)
            #expect(stream.nextSequenceNumber < 32_768)
            ssrcs.insert(stream.ssrc)
        }
        #expect(ssrcs.count > 1990)
    }

    @Test("the injected generator decides every random value")
    func deterministic() throws {
        var first = SeededGenerator(seed: 42)
        var second = SeededGenerator(seed: 42)
        let a = try RTPStreamState(payloadType: 111, clockRate: 48_000, using: &first)
        let b = try RTPStreamState(payloadType: 111, clockRate: 48_000, using: &second)
        #expect(a == b)
        let system = try RTPStreamState(payloadType: 111, clockRate: 48_000)
        #expect(system.nextSequenceNumber < 32_768)
    }

    @Test("sequence numbers wrap from 65535 to 0")
    func wraps() throws {
        var stream = try makeStream(sequenceNumber: 65_534)
        #expect(stream.takeSequenceNumber() == 65_534)
        #expect(stream.takeSequenceNumber() == 65_535)
        #expect(stream.takeSequenceNumber() == 0)
        #expect(stream.takeSequenceNumber() == 1)
        #expect(stream.nextSequenceNumber == 2)
    }

    @Test("header length counts CSRCs and the extension")
    func headerLength() throws {
        var stream = try makeStream()
        #expect(stream.headerLength == 12)
        stream.csrcs = [1, 2]
        stream.headerExtension = RTPHeaderExtension(profile: 0xBEDE, data: [0x10, 1, 0, 0])
        #expect(stream.headerLength == 12 + 8 + 8)
    }

    @Test("rejects payload types and clock rates out of range")
    func rejects() {
        let type = #expect(throws: RTPError.self) { try RTPStreamState(payloadType: 128, clockRate: 90_000) }
        #expect(type?.code == .invalidConfiguration)
        let rate = #expect(throws: RTPError.self) { try RTPStreamState(payloadType: 96, clockRate: 0) }
        #expect(rate?.message == "clock rate 0 Hz is outside 1–1000000000 Hz")
    }

    @Test("payload budget: MTU minus header minus SRTP trailer")
    func budget() throws {
        #expect(RTPPayloadBudget.standard.maximumPayloadLength() == 1200 - 12 - 10)
        let gcm = try RTPPayloadBudget(mtu: 1200, srtpTrailerRoom: RTPPayloadBudget.SRTPTrailer.aeadAES128GCM)
        #expect(gcm.maximumPayloadLength(headerLength: 20) == 1200 - 20 - 16)
        #expect(throws: RTPError.self) { try RTPPayloadBudget(mtu: 100) }
        #expect(throws: RTPError.self) { try RTPPayloadBudget(mtu: 70_000) }
        #expect(throws: RTPError.self) { try RTPPayloadBudget(mtu: 1200, srtpTrailerRoom: -1) }
        #expect(RTPPacketBuffer(budget: .standard).capacity == 1200 + 144)
    }

    @Test("RTP and RTCP told apart on a shared port (RFC 5761 §4)")
    func classify() {
        #expect(RTPPacketKind(classifying: [0x80, 0x60, 0, 1]) == .rtp)
        #expect(RTPPacketKind(classifying: [0x80, 0xE0, 0, 1]) == .rtp)  // marker + PT 96
        #expect(RTPPacketKind(classifying: [0x80, 200, 0, 6]) == .rtcp)
        #expect(RTPPacketKind(classifying: [0x81, 206, 0, 2]) == .rtcp)
        #expect(RTPPacketKind(classifying: [0x00, 0x01, 0, 0]) == .other)  // STUN binding request
        #expect(RTPPacketKind(classifying: [0x16, 0xFE, 0xFD, 0]) == .other)  // DTLS
        #expect(RTPPacketKind(classifying: [0x80]) == .other)
    }
}
