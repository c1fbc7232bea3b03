/// Tells RTP from RTCP when both share one port (rtcp-mux, RFC 5761 §4): RTCP packet types
/// 192–223 sit where RTP's marker bit plus payload types 64–95 would be, which RFC 5761
/// keeps free of RTP payload types for exactly this reason.
public enum RTPPacketKind: Sendable, Hashable {
    case rtp
    case rtcp
    /// Not version 2, or shorter than any RTP/RTCP header: STUN, DTLS or garbage (RFC 7983
    /// demultiplexes those by the first byte).
    case other

    /// Classifies a datagram by its first two bytes.
    public init<Bytes: Collection<UInt8>>(classifying datagram: Bytes) {
        var iterator = datagram.makeIterator()
        guard datagram.count >= 4, let first = iterator.next(), let second = iterator.next(),
            first >> 6 == RTPHeader.supportedVersion
        else {
            self = .other
            return
        }
        self = RTCPPacketType.range.contains(second) ? .rtcp : .rtp
    }
}
