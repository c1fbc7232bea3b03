import Testing

@testable import SRTP

@Suite("SRTP key material")
struct SRTPKeyMaterialTests {
    @Test("suite parameters", arguments: SRTPSuite.allCases)
    func suiteParameters(suite: SRTPSuite) {
        #expect(SRTPSuite(sdpName: suite.sdpName) == suite)
        #expect(suite.masterKeyLength == 16)
        #expect(suite.keyMaterialLength == (suite == .aeadAES128GCM ? 28 : 30))
        #expect(SRTPSuite.default == .aesCM128HmacSHA1_80)
        #expect(SRTPSuite(sdpName: "AES_256_CM_HMAC_SHA1_80") == nil)
    }

    @Test("two random keys differ", arguments: SRTPSuite.allCases)
    func randomKeysDiffer(suite: SRTPSuite) {
        let first = SRTPKeyMaterial.random(for: suite)
        let second = SRTPKeyMaterial.random(for: suite)
        #expect(first.keyAndSalt.count == suite.keyMaterialLength)
        #expect(first.masterKey.count == 16)
        #expect(first.masterSalt.count == suite.masterSaltLength)
        #expect(first.masterKey + first.masterSalt == first.keyAndSalt)
        #expect(first != second)
        #expect(first.keyAndSalt != [UInt8](repeating: 0, count: suite.keyMaterialLength))
    }

    @Test("inline base64 round trip: 40 characters for every suite", arguments: SRTPSuite.allCases)
    func inlineRoundTrip(suite: SRTPSuite) throws {
        let keys = SRTPKeyMaterial.random(for: suite)
        let inline = keys.inlineBase64()
        #expect(inline.utf8.count == 40)
        #expect(suite == .aeadAES128GCM ? inline.hasSuffix("=") : !inline.contains("="))
        #expect(try SRTPKeyMaterial(suite: suite, inline: inline) == keys)
        #expect(try SRTPKeyMaterial(suite: suite, inline: "inline:" + inline) == keys)
    }

    /// A fixed 30-byte key in its exact RFC 4568 inline and GStreamer hex forms.
    @Test("a fixed key has its exact inline and hex forms")
    func fixedKeyForms() throws {
        let fixed = try Packets.fixedKeys(.aesCM128HmacSHA1_80)
        #expect(fixed.inlineBase64() == "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwd")
        #expect(fixed.hexKeyAndSalt() == "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d")
    }

    @Test(
        "malformed inline keys are refused",
        arguments: [
            ("AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxw", "must be 40 base64 characters, got 39"),
            ("AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxw!", "not valid base64"),
            ("AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwd|2^20", "lifetime or MKI"),
            ("AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGx==", "not valid base64"),
        ]
    )
    func malformedInline(text: String, expected: String) {
        let error = #expect(throws: SRTPError.self) { try SRTPKeyMaterial(suite: .aesCM128HmacSHA1_80, inline: text) }
        #expect(error?.code == .invalidInlineKey)
        #expect(error?.message.contains(expected) == true, "\(error?.message ?? "")")
    }

    @Test("wrong key lengths are refused")
    func wrongLengths() {
        let error = #expect(throws: SRTPError.self) {
            try SRTPKeyMaterial(suite: .aeadAES128GCM, keyAndSalt: Array(repeating: 1, count: 30))
        }
        #expect(error?.code == .invalidKeyMaterial)
        #expect(error?.message == "AEAD_AES_128_GCM needs 28 bytes of key and salt, got 30")
        #expect(throws: SRTPError.self) {
            try SRTPKeyMaterial(suite: .aesCM128HmacSHA1_80, masterKey: [1], masterSalt: [2])
        }
    }

    /// The key must never reach a log by accident: no printing path shows its bytes in any form.
    @Test("printing never reveals the key")
    func redaction() throws {
        let keys = try Packets.fixedKeys(.aesCM128HmacSHA1_80)
        var dumped = ""
        dump(keys, to: &dumped)
        let printed = [
            "\(keys)", String(describing: keys), String(reflecting: keys), "\([keys])", "\(Optional(keys) as Any)",
            dumped,
        ]
        for text in printed {
            #expect(!text.contains(keys.inlineBase64()), "\(text)")
            #expect(!text.contains(keys.hexKeyAndSalt()), "\(text)")
            #expect(!text.contains("\(keys.keyAndSalt)"), "\(text)")
            #expect(!text.contains("29"), "no byte value from the 0...29 key appears: \(text)")
            #expect(text.contains("redacted"), "\(text)")
        }
        #expect("\(keys)" == "SRTPKeyMaterial(AES_CM_128_HMAC_SHA1_80, 30 bytes, <redacted>)")
    }
}
