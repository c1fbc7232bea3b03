/// Builds one stream's sender reports (RFC 3550 §6.4.1) and its goodbye.
///
/// The NTP and RTP timestamps of a report are derived from the same instant on the capture
/// clock (the monotonic clock the media timestamps come from) through `ntpClock` and
/// `rtpClock`: never from the send time of some packet, or receivers would line audio up
/// against video by however long that packet waited. Counts follow RFC 3550 §6.4.1: packets
/// and payload octets (no headers, no padding) since the start, wrapping at 2³².
public struct SenderReportBuilder: Sendable {
    public let ssrc: UInt32
    public let rtpClock: RTPClock
    public let ntpClock: NTPClock
    /// The SDES chunk with our CNAME, built once and sent in every compound packet.
    public let sourceDescription: RTCPSourceDescription
    public private(set) var packetCount: UInt32 = 0
    public private(set) var octetCount: UInt32 = 0

    /// `cname` must be 1–255 bytes of UTF-8 (RFC 3550 §6.5.1).
    public init(ssrc: UInt32, cname: String, rtpClock: RTPClock, ntpClock: NTPClock) throws(RTPError) {
        let length = cname.utf8.count
        guard (1...255).contains(length) else {
            throw RTPError(.invalidConfiguration, "CNAME of \(length) bytes; RFC 3550 §6.5.1 allows 1–255")
        }
        self.ssrc = ssrc
        self.rtpClock = rtpClock
        self.ntpClock = ntpClock
        self.sourceDescription = RTCPSourceDescription(ssrc: ssrc, cname: cname)
    }

    /// Counts one RTP packet sent with `payloadLength` payload bytes.
    public mutating func recordPacketSent(payloadLength: Int) {
        packetCount &+= 1
        octetCount &+= UInt32(truncatingIfNeeded: payloadLength)
    }

    /// The sender report for the monotonic instant `instant` (ns, same clock as capture).
    public func senderReport(at instant: UInt64, reports: [RTCPReceptionReport] = []) -> RTCPSenderReport {
        RTCPSenderReport(
            ssrc: ssrc,
            ntpTimestamp: ntpClock.timestamp(atMonotonic: instant),
            rtpTimestamp: rtpClock.timestamp(at: instant),
            packetCount: packetCount,
            octetCount: octetCount,
            reports: reports
        )
    }

    /// SR + SDES, the regular compound packet (allocates; see `writeCompound` for the hot path).
    public func compound(at instant: UInt64) -> [RTCPPacket] {
        [.senderReport(senderReport(at: instant)), .sourceDescription(sourceDescription)]
    }

    /// SR + SDES + BYE: the last compound packet of the stream (RFC 3550 §6.6).
    public func goodbyeCompound(at instant: UInt64, reason: String? = nil) -> [RTCPPacket] {
        compound(at: instant) + [.goodbye(RTCPGoodbye(sources: [ssrc], reason: reason))]
    }

    /// Writes SR + SDES into `buffer` without allocating.
    public func writeCompound(at instant: UInt64, into buffer: RTPPacketBuffer) throws(RTPError) {
        try write(senderReport(at: instant), goodbye: nil, into: buffer)
    }

    /// Writes SR + SDES + BYE into `buffer`. `reason` is at most 255 bytes of UTF-8.
    public func writeGoodbye(at instant: UInt64, reason: String? = nil, into buffer: RTPPacketBuffer) throws(RTPError) {
        try write(senderReport(at: instant), goodbye: RTCPGoodbye(sources: [ssrc], reason: reason), into: buffer)
    }

    private func write(_ report: RTCPSenderReport, goodbye: RTCPGoodbye?, into buffer: RTPPacketBuffer) throws(RTPError)
    {
        try report.validateForWriting()
        try goodbye?.validateForWriting()
        let length = report.packetLength + sourceDescription.packetLength + (goodbye?.packetLength ?? 0)
        try ByteWriter.ensure(length, fits: buffer.capacity, what: "compound RTCP packet")
        let written = buffer.withUnsafeMutableStorage { storage, count in
            var writer = ByteWriter(storage)
            report.write(to: &writer)
            sourceDescription.write(to: &writer)
            goodbye?.write(to: &writer)
            count = writer.offset
            return writer.offset
        }
        try buffer.setCount(written)
    }
}
