/// Goodbye, RTCP type 203 (RFC 3550 §6.6): the listed sources are leaving. A live receiver
/// (ffmpeg among them) holds back its last frames until it sees this.
public struct RTCPGoodbye: Sendable, Hashable {
    /// Up to 31 SSRC/CSRC identifiers.
    public var sources: [UInt32]
    /// Optional reason for leaving: UTF-8 text of at most 255 bytes, kept as bytes so that
    /// what was received round-trips exactly.
    public var reason: [UInt8]?

    public init(sources: [UInt32], reason: [UInt8]?) {
        self.sources = sources
        self.reason = reason
    }

    public init(sources: [UInt32], reason: String? = nil) {
        self.init(sources: sources, reason: reason.map { Array($0.utf8) })
    }

    /// The reason decoded as UTF-8 (invalid bytes replaced).
    public var reasonText: String? { reason.map { String(decoding: $0, as: UTF8.self) } }

    static func read(from reader: inout ByteReader, count: Int) throws(RTPError) -> RTCPGoodbye {
        try reader.need(4 * count, for: "\(count) SSRC/CSRC identifiers")
        var sources: [UInt32] = []
        sources.reserveCapacity(count)
        for index in 0..<count {
            sources.append(try reader.readUInt32("SSRC/CSRC \(index)"))
        }
        var reason: [UInt8]?
        if reader.remaining > 0 {
            let length = Int(try reader.readUInt8("reason length"))
            reason = try reader.readBytes(length, "\(length)-byte reason")
        }
        return RTCPGoodbye(sources: sources, reason: reason)
    }
}

extension RTCPGoodbye: RTCPPacketBody {
    var packetType: RTCPPacketType { .goodbye }
    var countField: UInt8 { UInt8(truncatingIfNeeded: sources.count) }
    var bodyLength: Int { 4 * sources.count + (reason.map { (1 + $0.count + 3) & ~3 } ?? 0) }

    func validate() throws(RTPError) {
        try Self.checkCount(sources.count, of: "sources", in: packetType)
        if let reason, reason.count > 255 {
            throw RTPError(.invalidField, "BYE reason has \(reason.count) bytes; the length field allows 255")
        }
    }

    func writeBody(to writer: inout ByteWriter) {
        for source in sources {
            writer.write(source)
        }
        if let reason {
            writer.write(UInt8(truncatingIfNeeded: reason.count))
            writer.write(reason)
            writer.writeZeros((4 - (1 + reason.count) % 4) % 4)
        }
    }
}
