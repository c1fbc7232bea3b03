import CSRTP

/// An SRTP crypto suite: the cipher, the authentication and the key sizes of one SRTP session.
///
/// Names are the RFC 4568 §6.2 / RFC 7714 §14.1 SDP crypto-suite names.
public enum SRTPSuite: String, CaseIterable, Sendable {
    /// RFC 4568 §6.2.1: AES-128 counter mode, HMAC-SHA1 truncated to 80 bits. The default, and the
    /// suite every SDES receiver (ffmpeg included) plays.
    case aesCM128HmacSHA1_80 = "AES_CM_128_HMAC_SHA1_80"
    /// RFC 4568 §6.2.2: as `_80`, but SRTP packets carry a 32-bit tag. SRTCP keeps the 80-bit tag:
    /// RFC 3711 §7.5 warns that short tags are acceptable only for media, libsrtp's setter for this
    /// suite carries the same warning, and RFC 5764 §4.1.2 fixes SRTCP at 80 bits for this profile.
    /// ffmpeg 5.1 differs: under this SDES name it checks SRTCP with a 32-bit tag, so it drops our
    /// SRTCP (sender reports, BYE) while still playing the media. Prefer `_80` for ffmpeg, or set
    /// `SRTPSession.Configuration.usesShortSRTCPTagForSHA1_32`.
    case aesCM128HmacSHA1_32 = "AES_CM_128_HMAC_SHA1_32"
    /// RFC 7714: AES-128 in Galois/Counter Mode, 16-byte tag, 12-byte master salt. ffmpeg 5.1 cannot
    /// decrypt it; offer it to receivers that negotiate it (browsers via DTLS-SRTP, libsrtp peers).
    case aeadAES128GCM = "AEAD_AES_128_GCM"

    /// The default suite: the one ffmpeg and every SDES peer accept.
    public static let `default`: SRTPSuite = .aesCM128HmacSHA1_80

    /// The RFC 4568 crypto-suite name written in `a=crypto` lines.
    public var sdpName: String { rawValue }

    /// Finds the suite for an SDP crypto-suite name; nil for suites we do not implement.
    public init?(sdpName: some StringProtocol) {
        self.init(rawValue: String(sdpName))
    }

    /// Master key length in bytes (all three suites use AES-128).
    public var masterKeyLength: Int { 16 }

    /// Master salt length in bytes: 112 bits for AES-CM (RFC 3711 §8.2), 96 bits for GCM (RFC 7714 §11).
    public var masterSaltLength: Int {
        switch self {
        case .aesCM128HmacSHA1_80, .aesCM128HmacSHA1_32: return 14
        case .aeadAES128GCM: return 12
        }
    }

    /// Key followed by salt: the bytes an RFC 4568 `inline:` parameter carries (30 or 28).
    public var keyMaterialLength: Int { masterKeyLength + masterSaltLength }

    /// Authentication tag length appended to every SRTP packet.
    public var rtpAuthTagLength: Int {
        switch self {
        case .aesCM128HmacSHA1_80: return 10
        case .aesCM128HmacSHA1_32: return 4
        case .aeadAES128GCM: return 16
        }
    }

    /// Authentication tag length of SRTCP packets (80 bits for both AES-CM suites, see `_32`), unless
    /// a session is configured otherwise.
    public var rtcpAuthTagLength: Int {
        switch self {
        case .aesCM128HmacSHA1_80, .aesCM128HmacSHA1_32: return 10
        case .aeadAES128GCM: return 16
        }
    }

    /// Bytes `protect` appends to an RTP packet (no MKI is used). A packetizer must keep the RTP
    /// packet this much below the MTU, and the protect buffer must have this much spare room.
    public var rtpTrailerLength: Int { rtpAuthTagLength }

    /// Bytes `protectRTCP` appends: the 4-byte E flag + SRTCP index word (RFC 3711 §3.4) and the tag.
    public var rtcpTrailerLength: Int { 4 + rtcpAuthTagLength }

    /// Fills libsrtp's per-direction crypto policies for this suite.
    func apply(rtp: inout srtp_crypto_policy_t, rtcp: inout srtp_crypto_policy_t) {
        switch self {
        case .aesCM128HmacSHA1_80:
            rtc_srtp_policy_aes_cm_128_hmac_sha1_80(&rtp)
            rtc_srtp_policy_aes_cm_128_hmac_sha1_80(&rtcp)
        case .aesCM128HmacSHA1_32:
            rtc_srtp_policy_aes_cm_128_hmac_sha1_32(&rtp)
            rtc_srtp_policy_aes_cm_128_hmac_sha1_80(&rtcp)
        case .aeadAES128GCM:
            rtc_srtp_policy_aead_aes_128_gcm(&rtp)
            rtc_srtp_policy_aead_aes_128_gcm(&rtcp)
        }
    }
}
