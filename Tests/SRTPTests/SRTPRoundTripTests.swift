import CSRTP
import Testing

@testable import SRTP

@Suite("SRTP protect/unprotect round trips")
struct SRTPRoundTripTests {
    @Test("RTP round trip", arguments: SRTPSuite.allCases)
    func rtpRoundTrip(suite: SRTPSuite) throws {
        let keys = SRTPKeyMaterial.random(for: suite)
        let sender = try SRTPSession(keys: keys, direction: .outbound)
        let receiver = try SRTPSession(keys: keys, direction: .inbound)
        for sequence: UInt16 in 1000..<1010 {
            let packet = Packets.rtp(sequence: sequence)
            let protected = try sender.protect(packet)
            #expect(protected.count == packet.count + suite.rtpTrailerLength)
            #expect(Array(protected.prefix(12)) == Array(packet.prefix(12)), "RTP header stays in clear")
            #expect(Array(protected[12..<packet.count]) != Array(packet[12...]), "payload is encrypted")
            #expect(try receiver.unprotect(protected) == packet)
        }
    }

    @Test("RTCP round trip", arguments: SRTPSuite.allCases)
    func rtcpRoundTrip(suite: SRTPSuite) throws {
        let keys = SRTPKeyMaterial.random(for: suite)
        let sender = try SRTPSession(keys: keys, direction: .outbound)
        let receiver = try SRTPSession(keys: keys, direction: .inbound)
        for _ in 0..<3 {
            let packet = Packets.receiverReport()
            let protected = try sender.protectRTCP(packet)
            #expect(protected.count == packet.count + suite.rtcpTrailerLength)
            #expect(try receiver.unprotectRTCP(protected) == packet)
        }
    }

    /// Our trailer arithmetic must agree with what libsrtp itself reports for the session.
    @Test("trailer lengths match libsrtp", arguments: SRTPSuite.allCases)
    func trailerLengthsMatchLibsrtp(suite: SRTPSuite) throws {
        let keys = SRTPKeyMaterial.random(for: suite)
        let sender = try SRTPSession(keys: keys, direction: .outbound)
        let rtcp = try sender.protectRTCP(Packets.receiverReport())
        #expect(rtcp.count - Packets.receiverReport().count == suite.rtcpTrailerLength)
        let expected: (rtp: Int, rtcp: Int) =
            switch suite {
            case .aesCM128HmacSHA1_80: (10, 14)
            case .aesCM128HmacSHA1_32: (4, 14)
            case .aeadAES128GCM: (16, 20)
            }
        #expect(suite.rtpTrailerLength == expected.rtp)
        #expect(suite.rtcpTrailerLength == expected.rtcp)
        #expect(suite.rtpTrailerLength <= Int(rtc_srtp_max_trailer_len()))
    }

    @Test("in-place protect fits an exact buffer and never writes past the trailer", arguments: SRTPSuite.allCases)
    func inPlaceStaysInBounds(suite: SRTPSuite) throws {
        let keys = SRTPKeyMaterial.random(for: suite)
        let sender = try SRTPSession(keys: keys, direction: .outbound)
        let receiver = try SRTPSession(keys: keys, direction: .inbound)
        let packet = Packets.rtp(sequence: 7)
        let canary: UInt8 = 0xA5
        var buffer = packet + [UInt8](repeating: canary, count: suite.rtpTrailerLength + 256)
        let length = try buffer.withUnsafeMutableBytes { try sender.protect(buffer: $0, length: packet.count) }
        #expect(length == packet.count + suite.rtpTrailerLength)
        #expect(buffer[length...].allSatisfy { $0 == canary }, "bytes after the trailer are untouched")

        let plainLength = try buffer.withUnsafeMutableBytes { try receiver.unprotect(buffer: $0, length: length) }
        #expect(Array(buffer[..<plainLength]) == packet)

        let second = Packets.rtp(sequence: 8)
        var exact = second + [UInt8](repeating: 0, count: suite.rtpTrailerLength)
        let exactLength = try exact.withUnsafeMutableBytes { try sender.protect(buffer: $0, length: second.count) }
        #expect(exactLength == exact.count)
    }

    @Test("a buffer one byte short of the trailer is refused before libsrtp runs", arguments: SRTPSuite.allCases)
    func shortBufferThrows(suite: SRTPSuite) throws {
        let sender = try SRTPSession(keys: .random(for: suite), direction: .outbound)
        let packet = Packets.rtp(sequence: 1)
        var buffer = packet + [UInt8](repeating: 0, count: suite.rtpTrailerLength - 1)
        let before = buffer
        let error = #expect(throws: SRTPError.self) {
            try buffer.withUnsafeMutableBytes { try sender.protect(buffer: $0, length: packet.count) }
        }
        #expect(error?.code == .bufferTooSmall)
        #expect(error?.message.contains("\(suite.rtpTrailerLength)-byte trailer") == true)
        #expect(buffer == before, "nothing was encrypted in place")

        var rtcp = Packets.receiverReport() + [UInt8](repeating: 0, count: suite.rtcpTrailerLength - 1)
        let rtcpError = #expect(throws: SRTPError.self) {
            try rtcp.withUnsafeMutableBytes { try sender.protectRTCP(buffer: $0, length: 32) }
        }
        #expect(rtcpError?.code == .bufferTooSmall)
    }

    @Test("length beyond the buffer, short packets and wrong direction are refused")
    func argumentChecks() throws {
        let keys = SRTPKeyMaterial.random()
        let sender = try SRTPSession(keys: keys, direction: .outbound)
        let receiver = try SRTPSession(keys: keys, direction: .inbound)
        var buffer = [UInt8](repeating: 0, count: 20)
        let overLength = #expect(throws: SRTPError.self) {
            try buffer.withUnsafeMutableBytes { try receiver.unprotect(buffer: $0, length: 21) }
        }
        #expect(overLength?.code == .bufferTooSmall)
        let short = #expect(throws: SRTPError.self) { try sender.protect([0x80, 0x60, 0, 1]) }
        #expect(short?.code == .packetTooShort)
        let negative = #expect(throws: SRTPError.self) {
            try buffer.withUnsafeMutableBytes { try receiver.unprotect(buffer: $0, length: -1) }
        }
        #expect(negative?.code == .packetTooShort)
        let wrongWay = #expect(throws: SRTPError.self) { try receiver.protect(Packets.rtp(sequence: 1)) }
        #expect(wrongWay?.code == .wrongDirection)
        #expect(wrongWay?.message == "SRTP protect needs an outbound session, this one is inbound")
        let wrongWayBack = #expect(throws: SRTPError.self) { try sender.unprotectRTCP(Packets.receiverReport()) }
        #expect(wrongWayBack?.code == .wrongDirection)
        #expect(wrongWayBack?.message == "SRTCP unprotect needs an inbound session, this one is outbound")
    }

    @Test("one outbound session protects audio and video SSRCs under one key")
    func twoStreamsShareOneSession() throws {
        let keys = SRTPKeyMaterial.random()
        let sender = try SRTPSession(keys: keys, direction: .outbound)
        let receiver = try SRTPSession(keys: keys, direction: .inbound)
        let video = Packets.rtp(sequence: 10, ssrc: 0x1111_1111, payloadType: 96)
        let audio = Packets.rtp(sequence: 10, ssrc: 0x2222_2222, payloadType: 97)
        let protectedVideo = try sender.protect(video)
        let protectedAudio = try sender.protect(audio)
        #expect(Array(protectedVideo[12...]) != Array(protectedAudio[12...]), "distinct SSRCs, distinct keystreams")
        #expect(try receiver.unprotect(protectedAudio) == audio)
        #expect(try receiver.unprotect(protectedVideo) == video)
    }

    @Test("configuration: replay window bounds are checked")
    func configurationBounds() throws {
        let keys = SRTPKeyMaterial.random()
        let error = #expect(throws: SRTPError.self) {
            try SRTPSession(keys: keys, direction: .inbound, configuration: .init(replayWindowSize: 32))
        }
        #expect(error?.code == .invalidConfiguration)
        _ = try SRTPSession(keys: keys, direction: .inbound, configuration: .init(replayWindowSize: 64))
        _ = try SRTPSession(keys: keys, direction: .inbound, configuration: .init(replayWindowSize: 32_767))
    }

    @Test("repeated transmission of one sequence number only when allowed")
    func repeatedTransmission() throws {
        let keys = SRTPKeyMaterial.random()
        let strict = try SRTPSession(keys: keys, direction: .outbound)
        let packet = Packets.rtp(sequence: 50)
        _ = try strict.protect(packet)
        let error = #expect(throws: SRTPError.self) { try strict.protect(packet) }
        #expect(error?.code == .replayed)

        let lenient = try SRTPSession(
            keys: keys,
            direction: .outbound,
            configuration: .init(allowsRepeatedTransmission: true)
        )
        let first = try lenient.protect(packet)
        #expect(try lenient.protect(packet) == first, "same bytes, same index: identical SRTP")
    }
}
