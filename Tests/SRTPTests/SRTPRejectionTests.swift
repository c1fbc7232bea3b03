import Testing

@testable import SRTP

@Suite("SRTP rejects altered, replayed and mis-keyed packets")
struct SRTPRejectionTests {
    /// Every single-bit change of an SRTP packet must fail. Bits of the first byte change the header
    /// layout (version, padding, extension, CSRC count), which libsrtp may reject while parsing
    /// (`bad_param`/`parse_err`) before it checks the tag; everywhere else it is the tag check.
    @Test("a flipped bit anywhere in SRTP fails", arguments: SRTPSuite.allCases)
    func flippedBitFailsRTP(suite: SRTPSuite) throws {
        let keys = SRTPKeyMaterial.random(for: suite)
        let sender = try SRTPSession(keys: keys, direction: .outbound)
        let receiver = try SRTPSession(keys: keys, direction: .inbound)
        let protected = try sender.protect(Packets.rtp(sequence: 42))
        for bit in 0..<(protected.count * 8) {
            var altered = protected
            altered[bit / 8] ^= UInt8(0x80) >> UInt8(bit % 8)
            let error = #expect(throws: SRTPError.self, "bit \(bit)") { try receiver.unprotect(altered) }
            if bit >= 8 {
                #expect(error?.code == .authenticationFailed, "bit \(bit)")
                #expect(error?.code.name == "srtp_err_status_auth_fail")
            }
        }
        // The unaltered packet still verifies: failed attempts did not poison the replay window.
        #expect(try receiver.unprotect(protected) == Packets.rtp(sequence: 42))
    }

    /// For the AES-CM suites, clearing the E flag (RFC 3711 §3.4, first bit after the payload)
    /// claims the packet is unencrypted; libsrtp refuses that downgrade against its policy with
    /// `srtp_err_status_cant_check` before checking the tag. Every other bit fails the tag.
    @Test("a flipped bit anywhere in SRTCP fails", arguments: SRTPSuite.allCases)
    func flippedBitFailsRTCP(suite: SRTPSuite) throws {
        let keys = SRTPKeyMaterial.random(for: suite)
        let sender = try SRTPSession(keys: keys, direction: .outbound)
        let receiver = try SRTPSession(keys: keys, direction: .inbound)
        let report = Packets.receiverReport()
        let protected = try sender.protectRTCP(report)
        let encryptionFlagBit = report.count * 8
        for bit in 0..<(protected.count * 8) {
            var altered = protected
            altered[bit / 8] ^= UInt8(0x80) >> UInt8(bit % 8)
            let error = #expect(throws: SRTPError.self, "bit \(bit)") { try receiver.unprotectRTCP(altered) }
            if suite != .aeadAES128GCM && bit == encryptionFlagBit {
                #expect(error?.code.name == "srtp_err_status_cant_check", "E flag")
            } else {
                #expect(error?.code == .authenticationFailed, "bit \(bit)")
            }
        }
        #expect(try receiver.unprotectRTCP(protected) == report)
    }

    @Test("the error carries libsrtp's status name in its text")
    func errorText() throws {
        let keys = SRTPKeyMaterial.random()
        let sender = try SRTPSession(keys: keys, direction: .outbound)
        let receiver = try SRTPSession(keys: keys, direction: .inbound)
        var protected = try sender.protect(Packets.rtp(sequence: 1))
        protected[protected.count - 1] ^= 1
        let error = #expect(throws: SRTPError.self) { try receiver.unprotect(protected) }
        #expect(error?.libsrtpStatus == 7)
        #expect(
            error?.description
                == "SRTPError(srtp_err_status_auth_fail): SRTP unprotect failed: srtp_err_status_auth_fail "
                + "(authentication failed: the packet was altered or the key is wrong)"
        )
    }

    @Test("a different key fails authentication", arguments: SRTPSuite.allCases)
    func wrongKey(suite: SRTPSuite) throws {
        let sender = try SRTPSession(keys: .random(for: suite), direction: .outbound)
        let receiver = try SRTPSession(keys: .random(for: suite), direction: .inbound)
        let error = #expect(throws: SRTPError.self) { try receiver.unprotect(sender.protect(Packets.rtp(sequence: 9))) }
        #expect(error?.code == .authenticationFailed)
    }

    @Test("a replayed packet is rejected with the replay error", arguments: SRTPSuite.allCases)
    func replay(suite: SRTPSuite) throws {
        let keys = SRTPKeyMaterial.random(for: suite)
        let sender = try SRTPSession(keys: keys, direction: .outbound)
        let receiver = try SRTPSession(keys: keys, direction: .inbound)
        let first = try sender.protect(Packets.rtp(sequence: 100))
        let second = try sender.protect(Packets.rtp(sequence: 101))
        _ = try receiver.unprotect(first)
        _ = try receiver.unprotect(second)
        let error = #expect(throws: SRTPError.self) { try receiver.unprotect(first) }
        #expect(error?.code == .replayed)
        #expect(error?.code.name == "srtp_err_status_replay_fail")

        let rtcp = try sender.protectRTCP(Packets.receiverReport())
        _ = try receiver.unprotectRTCP(rtcp)
        let rtcpError = #expect(throws: SRTPError.self) { try receiver.unprotectRTCP(rtcp) }
        #expect(rtcpError?.code == .replayed)
    }

    /// RFC 3711 §3.3.2: a packet older than the window is refused even though it was never seen;
    /// one just inside the window is still accepted (out-of-order delivery).
    @Test("the replay window is the configured size")
    func replayWindowSize() throws {
        let keys = SRTPKeyMaterial.random()
        let sender = try SRTPSession(keys: keys, direction: .outbound)
        let receiver = try SRTPSession(keys: keys, direction: .inbound, configuration: .init(replayWindowSize: 128))
        var held: [UInt16: [UInt8]] = [:]
        for sequence: UInt16 in 1...200 {
            let protected = try sender.protect(Packets.rtp(sequence: sequence))
            if sequence == 10 || sequence == 100 {
                held[sequence] = protected
            } else {
                _ = try receiver.unprotect(protected)
            }
        }
        // 200 - 100 = 100 < 128: inside the window.
        #expect(try receiver.unprotect(held[100] ?? []) == Packets.rtp(sequence: 100))
        // 200 - 10 = 190 >= 128: too old.
        let error = #expect(throws: SRTPError.self) { try receiver.unprotect(held[10] ?? []) }
        #expect(error?.code == .replayTooOld)
        #expect(error?.code.name == "srtp_err_status_replay_old")
    }

    @Test("libsrtp status names cover the whole enumeration")
    func statusNames() {
        #expect(SRTPError.statusName(0) == "srtp_err_status_ok")
        #expect(SRTPError.statusName(7) == "srtp_err_status_auth_fail")
        #expect(SRTPError.statusName(9) == "srtp_err_status_replay_fail")
        #expect(SRTPError.statusName(10) == "srtp_err_status_replay_old")
        #expect(SRTPError.statusName(27) == "srtp_err_status_pkt_idx_adv")
        #expect(SRTPError.statusName(28) == "srtp_err_status_unknown_28")
        #expect(SRTPError.statusName(-1) == "srtp_err_status_unknown_-1")
    }
}
