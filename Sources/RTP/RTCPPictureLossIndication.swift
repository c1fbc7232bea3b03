/// Picture loss indication, PSFB FMT 1 (RFC 4585 §6.3.1): the receiver lost an undefined
/// amount of picture data and asks for a key frame. No FCI.
public struct RTCPPictureLossIndication: Sendable, Hashable {
    static let format: UInt8 = 1

    public var senderSSRC: UInt32
    public var mediaSSRC: UInt32

    public init(senderSSRC: UInt32, mediaSSRC: UInt32) {
        self.senderSSRC = senderSSRC
        self.mediaSSRC = mediaSSRC
    }

    /// Anything after the two SSRCs is ignored: PLI defines no FCI.
    static func read(from reader: inout ByteReader) throws(RTPError) -> RTCPPictureLossIndication {
        RTCPPictureLossIndication(
            senderSSRC: try reader.readUInt32("sender SSRC"),
            mediaSSRC: try reader.readUInt32("media source SSRC")
        )
    }
}

extension RTCPPictureLossIndication: RTCPPacketBody {
    var packetType: RTCPPacketType { .payloadFeedback }
    var countField: UInt8 { Self.format }
    var bodyLength: Int { 8 }

    func validate() throws(RTPError) {}

    func writeBody(to writer: inout ByteWriter) {
        writer.write(senderSSRC)
        writer.write(mediaSSRC)
    }
}
