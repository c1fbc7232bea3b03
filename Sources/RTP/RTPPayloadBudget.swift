/// How many payload bytes one RTP packet may carry, derived from one number: the MTU, meaning
/// the whole UDP payload (RTP header, header extension, payload and the SRTP trailer).
///
/// WebRTC practice is 1200 bytes (Pion's limit; it survives tunnels and odd paths without IP
/// fragmentation). The SRTP trailer is reserved here because SRTP appends it after the
/// payloader has finished: a packet that filled the MTU would otherwise grow past it.
public struct RTPPayloadBudget: Sendable, Hashable, CustomStringConvertible {
    /// SRTP trailer sizes (RFC 3711 §4.2 and RFC 7714 §7): the authentication tag SRTP appends.
    /// No MKI is used, so nothing else is added.
    public enum SRTPTrailer {
        /// Plain RTP.
        public static let none = 0
        /// `AES_CM_128_HMAC_SHA1_80`: 80-bit tag.
        public static let aesCM128HMACSHA1_80 = 10
        /// `AES_CM_128_HMAC_SHA1_32`: 32-bit tag.
        public static let aesCM128HMACSHA1_32 = 4
        /// `AEAD_AES_128_GCM`: 128-bit tag.
        public static let aeadAES128GCM = 16
    }

    public static let defaultMTU = 1200
    /// Smallest MTU accepted: an IPv4 path must carry 576-byte datagrams, and anything much
    /// smaller leaves FU-A fragments so small that headers dominate.
    public static let minimumMTU = 128
    /// A UDP payload over IPv4 cannot exceed 65,507 bytes.
    public static let maximumMTU = 65_507
    /// libsrtp2's SRTP_MAX_TRAILER_LEN (16-byte tag + 128-byte MKI): the most any suite appends.
    public static let maximumTrailerRoom = 144

    /// 1200-byte MTU with room for an `AES_CM_128_HMAC_SHA1_80` tag: the project's default.
    public static let standard = RTPPayloadBudget(
        checkedMTU: defaultMTU,
        srtpTrailerRoom: SRTPTrailer.aesCM128HMACSHA1_80
    )

    /// The whole UDP payload, in bytes.
    public let mtu: Int
    /// Bytes kept free at the end of each packet for SRTP's trailer.
    public let srtpTrailerRoom: Int

    public init(mtu: Int = defaultMTU, srtpTrailerRoom: Int = SRTPTrailer.aesCM128HMACSHA1_80) throws(RTPError) {
        guard (Self.minimumMTU...Self.maximumMTU).contains(mtu) else {
            throw RTPError(
                .invalidConfiguration,
                "MTU \(mtu) is outside \(Self.minimumMTU)–\(Self.maximumMTU) bytes"
            )
        }
        guard (0...Self.maximumTrailerRoom).contains(srtpTrailerRoom) else {
            throw RTPError(
                .invalidConfiguration,
                "SRTP trailer room \(srtpTrailerRoom) is outside 0–\(Self.maximumTrailerRoom) bytes"
            )
        }
        self.init(checkedMTU: mtu, srtpTrailerRoom: srtpTrailerRoom)
    }

    private init(checkedMTU: Int, srtpTrailerRoom: Int) {
        self.mtu = checkedMTU
        self.srtpTrailerRoom = srtpTrailerRoom
    }

    /// The longest RTP packet (header + payload) a payloader may produce before SRTP.
    public var maximumPacketLength: Int { mtu - srtpTrailerRoom }

    /// Payload bytes left after a header of `headerLength` bytes (12 plus CSRCs and extension).
    /// Can be zero or negative for absurd headers; payloaders check it.
    public func maximumPayloadLength(headerLength: Int = RTPHeader.fixedLength) -> Int {
        maximumPacketLength - headerLength
    }

    public var description: String { "MTU \(mtu) (SRTP trailer room \(srtpTrailerRoom))" }
}
