/// Full intra request, PSFB FMT 4 (RFC 5104 §4.3.1): a request for a decoder refresh point
/// (an IDR) from each listed media sender. The media source SSRC of the common part is
/// unused and set to 0 (§4.3.1.2); the targets are in the FCI entries.
public struct RTCPFullIntraRequest: Sendable, Hashable {
    static let format: UInt8 = 4

    public struct Entry: Sendable, Hashable {
        /// The media sender asked for the refresh.
        public var ssrc: UInt32
        /// Command sequence number: a repeated request keeps it, a new one increments it.
        public var sequenceNumber: UInt8

        public init(ssrc: UInt32, sequenceNumber: UInt8) {
            self.ssrc = ssrc
            self.sequenceNumber = sequenceNumber
        }
    }

    public var senderSSRC: UInt32
    public var mediaSSRC: UInt32
    public var entries: [Entry]

    public init(senderSSRC: UInt32, mediaSSRC: UInt32 = 0, entries: [Entry]) {
        self.senderSSRC = senderSSRC
        self.mediaSSRC = mediaSSRC
        self.entries = entries
    }

    static func read(from reader: inout ByteReader) throws(RTPError) -> RTCPFullIntraRequest {
        var request = RTCPFullIntraRequest(
            senderSSRC: try reader.readUInt32("sender SSRC"),
            mediaSSRC: try reader.readUInt32("media source SSRC"),
            entries: []
        )
        guard reader.remaining % 8 == 0 else {
            throw RTPError(
                .invalidLength,
                "\(reader.context): \(reader.remaining) bytes of FIR entries, not a multiple of 8"
            )
        }
        request.entries.reserveCapacity(reader.remaining / 8)
        while reader.remaining > 0 {
            let ssrc = try reader.readUInt32("FIR entry SSRC")
            let sequenceNumber = try reader.readUInt8("FIR sequence number")
            try reader.advance(3, "FIR reserved bytes")
            request.entries.append(Entry(ssrc: ssrc, sequenceNumber: sequenceNumber))
        }
        return request
    }
}

extension RTCPFullIntraRequest: RTCPPacketBody {
    var packetType: RTCPPacketType { .payloadFeedback }
    var countField: UInt8 { Self.format }
    var bodyLength: Int { 8 + 8 * entries.count }

    func validate() throws(RTPError) {}

    func writeBody(to writer: inout ByteWriter) {
        writer.write(senderSSRC)
        writer.write(mediaSSRC)
        for entry in entries {
            writer.write(entry.ssrc)
            writer.write(entry.sequenceNumber)
            writer.writeZeros(3)
        }
    }
}
