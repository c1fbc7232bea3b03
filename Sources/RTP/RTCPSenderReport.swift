/// Sender report, RTCP type 200 (RFC 3550 §6.4.1): what an active sender sent, and the NTP ↔
/// RTP time pair receivers use to synchronize its streams.
public struct RTCPSenderReport: Sendable, Hashable {
    public var ssrc: UInt32
    /// Wall-clock time of the instant this report describes.
    public var ntpTimestamp: NTPTimestamp
    /// The same instant in this stream's RTP timestamp units.
    public var rtpTimestamp: UInt32
    /// RTP data packets sent since the start (wraps).
    public var packetCount: UInt32
    /// RTP payload octets sent since the start, headers and padding excluded (wraps).
    public var octetCount: UInt32
    /// Up to 31 reception reports (a sender that also receives).
    public var reports: [RTCPReceptionReport]

    public init(
        ssrc: UInt32,
        ntpTimestamp: NTPTimestamp,
        rtpTimestamp: UInt32,
        packetCount: UInt32,
        octetCount: UInt32,
        reports: [RTCPReceptionReport] = []
    ) {
        self.ssrc = ssrc
        self.ntpTimestamp = ntpTimestamp
        self.rtpTimestamp = rtpTimestamp
        self.packetCount = packetCount
        self.octetCount = octetCount
        self.reports = reports
    }

    /// Reads the body after the common header; bytes after the report blocks are
    /// profile-specific extensions (RFC 3550 §6.4.1) and are skipped.
    static func read(from reader: inout ByteReader, count: Int) throws(RTPError) -> RTCPSenderReport {
        try reader.need(24 + RTCPReceptionReport.length * count, for: "sender info and \(count) report blocks")
        var report = RTCPSenderReport(
            ssrc: try reader.readUInt32("sender SSRC"),
            ntpTimestamp: NTPTimestamp(rawValue: try reader.readUInt64("NTP timestamp")),
            rtpTimestamp: try reader.readUInt32("RTP timestamp"),
            packetCount: try reader.readUInt32("sender's packet count"),
            octetCount: try reader.readUInt32("sender's octet count")
        )
        report.reports.reserveCapacity(count)
        for index in 0..<count {
            report.reports.append(try RTCPReceptionReport.read(from: &reader, index: index))
        }
        return report
    }
}

extension RTCPSenderReport: RTCPPacketBody {
    var packetType: RTCPPacketType { .senderReport }
    var countField: UInt8 { UInt8(truncatingIfNeeded: reports.count) }
    var bodyLength: Int { 24 + RTCPReceptionReport.length * reports.count }

    func validate() throws(RTPError) {
        try Self.checkCount(reports.count, of: "report blocks", in: packetType)
    }

    func writeBody(to writer: inout ByteWriter) {
        writer.write(ssrc)
        writer.write(ntpTimestamp.rawValue)
        writer.write(rtpTimestamp)
        writer.write(packetCount)
        writer.write(octetCount)
        for report in reports {
            report.write(to: &writer)
        }
    }
}
