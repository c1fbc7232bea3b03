/// What a datagram on the ICE 5-tuple carries, by its first byte (RFC 7983 §7). libnice consumes
/// STUN (0–3) itself, so what reaches us is DTLS or SRTP/SRTCP; anything else (ZRTP, TURN
/// channels, noise) is dropped and counted.
public enum ICEDatagramClass: Hashable, Sendable, CustomStringConvertible {
    /// First byte 20–63: a DTLS record (the handshake, alerts).
    case dtls
    /// First byte 128–191, second byte outside 192–223: SRTP.
    case srtp
    /// First byte 128–191, second byte 192–223 (RTCP packet types 192–223, RFC 5761 §4): SRTCP.
    case srtcp

    /// The class of a datagram, or nil when RFC 7983 gives it to nobody here.
    public static func classify(_ datagram: UnsafeRawBufferPointer) -> ICEDatagramClass? {
        guard let first = datagram.first else { return nil }
        switch first {
        case 20...63:
            return .dtls
        case 128...191:
            guard datagram.count >= 2 else { return nil }
            return (192...223).contains(datagram[1]) ? .srtcp : .srtp
        default:
            return nil
        }
    }

    public var description: String {
        switch self {
        case .dtls: return "dtls"
        case .srtp: return "srtp"
        case .srtcp: return "srtcp"
        }
    }
}
