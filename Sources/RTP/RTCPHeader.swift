/// RTCP packet types (RFC 3550 §12.1, RFC 4585 §6.1, RFC 3611).
public struct RTCPPacketType: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let senderReport = RTCPPacketType(rawValue: 200)
    public static let receiverReport = RTCPPacketType(rawValue: 201)
    public static let sourceDescription = RTCPPacketType(rawValue: 202)
    public static let goodbye = RTCPPacketType(rawValue: 203)
    public static let applicationDefined = RTCPPacketType(rawValue: 204)
    /// RFC 4585 §6.1: transport-layer feedback (generic NACK is FMT 1).
    public static let transportFeedback = RTCPPacketType(rawValue: 205)
    /// RFC 4585 §6.1: payload-specific feedback (PLI FMT 1, FIR FMT 4, AFB/REMB FMT 15).
    public static let payloadFeedback = RTCPPacketType(rawValue: 206)
    public static let extendedReport = RTCPPacketType(rawValue: 207)

    /// RFC 5761 §4: RTCP packet types occupy 192–223, which is how RTP and RTCP sharing a port
    /// (rtcp-mux) are told apart.
    public static let range: ClosedRange<UInt8> = 192...223

    public var description: String {
        switch self {
        case .senderReport: "SR (200)"
        case .receiverReport: "RR (201)"
        case .sourceDescription: "SDES (202)"
        case .goodbye: "BYE (203)"
        case .applicationDefined: "APP (204)"
        case .transportFeedback: "RTPFB (205)"
        case .payloadFeedback: "PSFB (206)"
        case .extendedReport: "XR (207)"
        default: "RTCP type \(rawValue)"
        }
    }
}

/// The 4-byte header every RTCP packet starts with (RFC 3550 §6.4.1):
///
/// ```
/// |V=2|P|  count  |      PT       |             length            |
/// ```
///
/// `count` is the report/source count, or the feedback message type (FMT) for RTPFB/PSFB;
/// `length` is the packet's length in 32-bit words minus one, header included.
struct RTCPHeader {
    static let length = 4
    /// 16-bit length field in words, minus one: at most 65,536 words.
    static let maximumPacketLength = (Int(UInt16.max) + 1) * 4

    var count: UInt8
    var packetType: RTCPPacketType
    /// Whole packet length in bytes, a multiple of 4.
    var packetLength: Int

    /// The caller has checked `count < 32`, `packetLength` a multiple of 4 within the maximum.
    func write(to writer: inout ByteWriter) {
        writer.write(RTPHeader.supportedVersion << 6 | count & 0x1F)
        writer.write(packetType.rawValue)
        writer.write(UInt16(truncatingIfNeeded: packetLength / 4 - 1))
    }
}

/// What each typed RTCP packet provides to the compound serializer.
protocol RTCPPacketBody {
    var packetType: RTCPPacketType { get }
    /// The 5-bit count or FMT field.
    var countField: UInt8 { get }
    /// Bytes after the 4-byte header; always a multiple of 4.
    var bodyLength: Int { get }
    /// Range checks for fields narrower than their Swift types.
    func validate() throws(RTPError)
    func writeBody(to writer: inout ByteWriter)
}

extension RTCPPacketBody {
    var packetLength: Int { RTCPHeader.length + bodyLength }

    func write(to writer: inout ByteWriter) {
        RTCPHeader(count: countField, packetType: packetType, packetLength: packetLength).write(to: &writer)
        writeBody(to: &writer)
    }

    /// The type's own range checks, then the 16-bit length field's limit.
    func validateForWriting() throws(RTPError) {
        try validate()
        guard packetLength <= RTCPHeader.maximumPacketLength else {
            throw RTPError(
                .tooLarge,
                "RTCP \(packetType) would be \(packetLength) bytes; the length field allows \(RTCPHeader.maximumPacketLength)"
            )
        }
    }

    static func checkCount(_ count: Int, of what: String, in type: RTCPPacketType) throws(RTPError) {
        guard count <= 31 else {
            throw RTPError(.invalidField, "RTCP \(type) with \(count) \(what); the 5-bit count field allows 31")
        }
    }
}

extension ByteReader {
    /// The context string RTCP parsers use in their errors.
    static func rtcpContext(_ type: RTCPPacketType, index: Int, offset: Int) -> String {
        "RTCP packet \(index) (\(type)) at offset \(offset)"
    }
}
