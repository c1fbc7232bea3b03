import Foundation
import Testing

@testable import SRTP

/// AES-CM and HMAC-SHA1 run on Nettle (`NettleTransforms`), registered with libsrtp2 in place of
/// its Debian build's NSS code. libsrtp accepted them only after its self-test; these check that
/// they are the ones in use, and that every length counter mode and the MAC can meet (empty,
/// partial blocks, block edges, a full 1200-byte MTU packet, a large one) gives the bytes an
/// independent implementation gives.
@Suite("SRTP on Nettle")
struct SRTPNettleTests {
    @Test("AES-CM and HMAC-SHA1 are Nettle's, and the report names it")
    func installed() {
        #expect(SRTPSession.usesNettle)
        #expect(SRTPSession.cryptoImplementation.hasPrefix("libsrtp2 with AES-CM, HMAC-SHA1 and AES-GCM on Nettle 3."))
    }

    @Test(
        "payload lengths around block edges agree with the reference",
        arguments: [0, 1, 15, 16, 17, 31, 33, 1_178, 1_188, 8_000]
    )
    func lengths(payloadLength: Int) throws {
        for suite in [SRTPSuite.aesCM128HmacSHA1_80, .aesCM128HmacSHA1_32] {
            let keys = SRTPKeyMaterial.random(for: suite)
            let sender = try SRTPSession(keys: keys, direction: .outbound)
            var generator = SystemRandomNumberGenerator()
            let payload: [UInt8] = (0..<payloadLength).map { _ in .random(in: 0...255, using: &generator) }
            let rtp = Packets.rtp(sequence: .random(in: 0..<32_768, using: &generator), payload: payload)
            let expected = try PythonReference.run([
                "rtp", suite.sdpName, Hex.string(keys.keyAndSalt), Hex.string(rtp), "0",
            ])
            let protected = try sender.protect(rtp)
            #expect(Hex.string(protected) == expected, "\(suite.sdpName), \(payloadLength) payload bytes")

            let receiver = try SRTPSession(keys: keys, direction: .inbound)
            #expect(try receiver.unprotect(protected) == rtp)
        }
    }

    @Test("thousands of packets across the sequence wrap protect and verify in order")
    func longRun() throws {
        let keys = SRTPKeyMaterial.random(for: .aesCM128HmacSHA1_80)
        let sender = try SRTPSession(keys: keys, direction: .outbound)
        let receiver = try SRTPSession(keys: keys, direction: .inbound)
        // Across the 16-bit wrap, so the rollover counter enters the MAC through `compute`.
        var sequence: UInt16 = 65_000
        for index in 0..<3_000 {
            let payload = [UInt8](repeating: UInt8(truncatingIfNeeded: index), count: 1_188)
            let rtp = Packets.rtp(sequence: sequence, payload: payload)
            #expect(try receiver.unprotect(try sender.protect(rtp)) == rtp)
            sequence &+= 1
        }
    }
}

/// Debian's libsrtp2 runs its start-up self-tests through NSS; `SRTPLibrary` holds one NSS
/// context across them so NSS's softoken loads once instead of once per test (`NSSContextHold`).
///
/// What is checked is NSS's own answer, `NSS_IsInitialized`, while the hold is open. Looking for
/// the softoken in /proc/self/maps instead failed once in CI: other tests in this process open and
/// close NSS contexts (AES-GCM sessions) at the same time, and the softoken was briefly unmapped.
@Suite("NSS held open during srtp_init")
struct NSSContextHoldTests {
    @Test("the hold finds libsrtp2's NSS, and NSS reports itself initialized while it is held")
    func holdsNSS() throws {
        let hold = NSSContextHold()
        let isHeld = hold.isHeld
        #expect(isHeld)
        let library = try #require(dlopen("libnss3.so", RTLD_NOW | RTLD_NOLOAD))
        defer { dlclose(library) }
        let symbol = try #require(dlsym(library, "NSS_IsInitialized"))
        let isInitialized = unsafeBitCast(symbol, to: (@convention(c) () -> Int32).self)
        #expect(isInitialized() != 0)
        hold.release()
    }
}
