import SRTP

/// An SRTP protection profile negotiated by DTLS's `use_srtp` extension (RFC 5764 §4.1.2), and
/// the `SRTPSuite` that protects media under it.
///
/// The profile decides the exporter's length: 2 × (key + salt), RFC 5764 §4.2.
public enum DTLSSRTPProfile: UInt16, CaseIterable, Sendable, CustomStringConvertible {
    /// RFC 7714 §14.2: SRTP_AEAD_AES_128_GCM {0x00, 0x07}; 16-byte key, 12-byte salt (§12).
    case aeadAES128GCM = 0x0007
    /// RFC 5764 §4.1.2: SRTP_AES128_CM_HMAC_SHA1_80 {0x00, 0x01}; 16-byte key, 14-byte salt.
    case aesCM128HmacSHA1_80 = 0x0001

    /// What we offer, best first: GCM (one AES pass, a 16-byte tag, no HMAC), then the AES-CM
    /// profile every WebRTC stack implements. The DTLS server picks (OpenSSL: the first of its
    /// own list the client offered).
    public static let defaultOffer: [DTLSSRTPProfile] = [.aeadAES128GCM, .aesCM128HmacSHA1_80]

    /// The name OpenSSL's `SSL_CTX_set_tlsext_use_srtp` and the openssl CLI's `-use_srtp` take.
    public var openSSLName: String {
        switch self {
        case .aeadAES128GCM: return "SRTP_AEAD_AES_128_GCM"
        case .aesCM128HmacSHA1_80: return "SRTP_AES128_CM_SHA1_80"
        }
    }

    /// The suite SRTPSession runs for this profile. Both suites exist there (libsrtp2's
    /// `srtp_crypto_policy_set_aes_gcm_128_16_auth` for GCM).
    public var suite: SRTPSuite {
        switch self {
        case .aeadAES128GCM: return .aeadAES128GCM
        case .aesCM128HmacSHA1_80: return .aesCM128HmacSHA1_80
        }
    }

    /// Bytes the exporter yields for this profile: client and server key, client and server salt.
    public var exportedLength: Int { 2 * suite.keyMaterialLength }

    public var description: String { openSSLName }
}
