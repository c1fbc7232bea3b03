import DTLS
import SRTP
import Testing

/// RFC 5764 §4.2: exporter output = client key | server key | client salt | server salt.
@Suite("DTLS-SRTP key split")
struct DTLSKeySplitTests {
    @Test("AES_CM_128_HMAC_SHA1_80: 60 bytes, 16-byte keys, 14-byte salts")
    func aesCM() throws {
        let exported = (0..<60).map { UInt8($0) }
        let client = try DTLSSRTPKeys(exportedKeyingMaterial: exported, profile: .aesCM128HmacSHA1_80, role: .client)
        let server = try DTLSSRTPKeys(exportedKeyingMaterial: exported, profile: .aesCM128HmacSHA1_80, role: .server)
        #expect(client.local.masterKey == Array(0..<16))
        #expect(client.local.masterSalt == Array(32..<46))
        #expect(client.remote.masterKey == Array(16..<32))
        #expect(client.remote.masterSalt == Array(46..<60))
        #expect(client.local.suite == .aesCM128HmacSHA1_80)
        #expect(server.local == client.remote)
        #expect(server.remote == client.local)
    }

    @Test("AEAD_AES_128_GCM: 56 bytes, 16-byte keys, 12-byte salts (RFC 7714 §12)")
    func gcm() throws {
        let exported = (0..<56).map { UInt8(0xA0 &+ $0) }
        let client = try DTLSSRTPKeys(exportedKeyingMaterial: exported, profile: .aeadAES128GCM, role: .client)
        #expect(client.local.keyAndSalt == Array(exported[0..<16] + exported[32..<44]))
        #expect(client.remote.keyAndSalt == Array(exported[16..<32] + exported[44..<56]))
        #expect(client.local.suite == .aeadAES128GCM)
        let server = try DTLSSRTPKeys(exportedKeyingMaterial: exported, profile: .aeadAES128GCM, role: .server)
        #expect(server.local == client.remote)
    }

    @Test("profile facts", arguments: DTLSSRTPProfile.allCases)
    func profiles(profile: DTLSSRTPProfile) {
        switch profile {
        case .aeadAES128GCM:
            #expect(profile.rawValue == 0x0007)
            #expect(profile.exportedLength == 56)
            #expect(profile.openSSLName == "SRTP_AEAD_AES_128_GCM")
        case .aesCM128HmacSHA1_80:
            #expect(profile.rawValue == 0x0001)
            #expect(profile.exportedLength == 60)
            #expect(profile.openSSLName == "SRTP_AES128_CM_SHA1_80")
        }
        #expect(DTLSSRTPProfile.defaultOffer == [.aeadAES128GCM, .aesCM128HmacSHA1_80])
    }

    @Test("the wrong length is refused", arguments: [0, 56, 59, 61])
    func wrongLength(length: Int) {
        let error = #expect(throws: DTLSError.self) {
            try DTLSSRTPKeys(
                exportedKeyingMaterial: [UInt8](repeating: 1, count: length),
                profile: .aesCM128HmacSHA1_80,
                role: .client
            )
        }
        #expect(error?.code == .keyExportFailed)
    }

    @Test("printing never reveals a key")
    func redaction() throws {
        let exported = [UInt8](repeating: 0xAB, count: 60)
        let keys = try DTLSSRTPKeys(exportedKeyingMaterial: exported, profile: .aesCM128HmacSHA1_80, role: .client)
        var dumped = ""
        dump(keys, to: &dumped)
        for text in ["\(keys)", String(reflecting: keys), dumped] {
            #expect(!text.contains("171"), "\(text)")
            #expect(!text.lowercased().contains("abab"), "\(text)")
            #expect(text.contains("redacted"), "\(text)")
        }
    }
}
