import DTLS
import Testing

@Suite("DTLS fingerprint text")
struct DTLSFingerprintTextTests {
    @Test("SDP form: sha-256 and 32 colon-separated upper-case hex pairs")
    func format() throws {
        let fingerprint = try DTLSCertificate.generate().fingerprint
        let value = fingerprint.sdpValue
        #expect(value.hasPrefix("sha-256 "))
        let pairs = value.dropFirst("sha-256 ".count).split(separator: ":", omittingEmptySubsequences: false)
        #expect(pairs.count == 32)
        for pair in pairs {
            #expect(pair.count == 2)
            #expect(pair.allSatisfy { "0123456789ABCDEF".contains($0) }, "\(pair)")
        }
        #expect(try DTLSFingerprint(sdp: value) == fingerprint)
        #expect(try DTLSFingerprint(sdp: "a=fingerprint:" + value) == fingerprint)
        #expect(try DTLSFingerprint(sdp: value.lowercased()) == fingerprint)
        #expect(try DTLSFingerprint(sdp: "SHA-256 " + fingerprint.hexPairs) == fingerprint)
    }

    @Test("a fixed digest has its exact text")
    func fixedText() throws {
        let fingerprint = try DTLSFingerprint(bytes: Array(0..<32).map { UInt8($0 * 8) })
        #expect(
            fingerprint.sdpValue
                == "sha-256 00:08:10:18:20:28:30:38:40:48:50:58:60:68:70:78:"
                + "80:88:90:98:A0:A8:B0:B8:C0:C8:D0:D8:E0:E8:F0:F8"
        )
        #expect("\(fingerprint)" == fingerprint.sdpValue)
    }

    static let pairs31 = Array(repeating: "AB", count: 31).joined(separator: ":")
    static let pairs32 = Array(repeating: "AB", count: 32).joined(separator: ":")

    @Test(
        "malformed fingerprints are refused with a reason",
        arguments: [
            ("", "'<hash-function> <hex pairs>'"),
            ("sha-256", "'<hash-function> <hex pairs>'"),
            ("sha-1 " + Array(repeating: "AB", count: 20).joined(separator: ":"), "'sha-1' is not supported"),
            ("sha-384 " + pairs32, "'sha-384' is not supported"),
            ("sha-256 " + pairs31, "32 hex pairs, got 31"),
            ("sha-256 " + pairs32 + ":AB", "32 hex pairs, got 33"),
            ("sha-256 " + pairs31 + ":G1", "'G1' is not two hex digits"),
            ("sha-256 " + pairs31 + ":+1", "'+1' is not two hex digits"),
            ("sha-256 " + pairs31 + ":ABC", "'ABC' is not two hex digits"),
            ("sha-256 " + pairs32 + ":", "'' is not two hex digits"),
            ("sha-256 " + pairs32 + " extra", "'<hash-function> <hex pairs>'"),
        ]
    )
    func malformed(text: String, expected: String) {
        let error = #expect(throws: DTLSError.self) { try DTLSFingerprint(sdp: text) }
        #expect(error?.code == .invalidFingerprint)
        #expect(error?.message.contains(expected) == true, "\(error?.message ?? "")")
    }

    @Test("a digest of the wrong length is refused")
    func wrongLength() {
        #expect(throws: DTLSError.self) { try DTLSFingerprint(bytes: [1, 2, 3]) }
    }
}
