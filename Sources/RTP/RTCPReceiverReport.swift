/// Receiver report, RTCP type 201 (RFC 3550 §6.4.2): reception statistics from a participant
/// that is not sending.
public struct RTCPReceiverReport: Sendable, Hashable {
    public var ssrc: UInt32
    /// Up to 31 reception reports.
    public var reports: [RTCPReceptionReport]

    public init(ssrc: UInt32, reports: [RTCPReceptionReport] = []) {
        self.ssrc = ssrc
        self.reports = reports
    }

    static func read(from reader: inout ByteReader, count: Int) throws(RTPError) -> RTCPReceiverReport {
        try reader.need(4 + RTCPReceptionReport.length * count, for: "reporter SSRC and \(count) report blocks")
        var report = RTCPReceiverReport(ssrc: try reader.readUInt32("reporter SSRC"))
        report.reports.reserveCapacity(count)
        for index in 0..<count {
            report.reports.append(try RTCPReceptionReport.read(from: &reader, index: index))
        }
        return report
    }
}

extension RTCPReceiverReport: RTCPPacketBody {
    var packetType: RTCPPacketType { .receiverReport }
    var countField: UInt8 { UInt8(truncatingIfNeeded: reports.count) }
    var bodyLength: Int { 4 + RTCPReceptionReport.length * reports.count }

    func validate() throws(RTPError) {
        try Self.checkCount(reports.count, of: "report blocks", in: packetType)
    }

    func writeBody(to writer: inout ByteWriter) {
        writer.write(ssrc)
        for report in reports {
            report.write(to: &writer)
        }
    }
}
