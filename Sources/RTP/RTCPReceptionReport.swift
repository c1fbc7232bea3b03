/// One reception report block (RFC 3550 §6.4.1), as carried in SR and RR: what a receiver
/// observed of one source.
public struct RTCPReceptionReport: Sendable, Hashable {
    static let length = 24
    /// The cumulative loss is a signed 24-bit field (RFC 3550 §6.4.1; negative when duplicates
    /// outnumber losses).
    public static let cumulativeLostRange: ClosedRange<Int32> = -0x80_0000...0x7F_FFFF

    public var ssrc: UInt32
    /// Fraction of packets lost since the last report, in 1/256.
    public var fractionLost: UInt8
    /// Packets lost since the start; serialized clamped to the 24-bit range (RFC 3550 A.3).
    public var cumulativeLost: Int32
    /// Highest sequence number received, extended with the count of wraps in the high 16 bits.
    public var extendedHighestSequenceNumber: UInt32
    /// Interarrival jitter in RTP timestamp units.
    public var jitter: UInt32
    /// LSR: the middle 32 bits of the NTP timestamp of the last SR received, or 0.
    public var lastSenderReport: UInt32
    /// DLSR: time since that SR was received, in 1/65536 seconds.
    public var delaySinceLastSenderReport: UInt32

    public init(
        ssrc: UInt32,
        fractionLost: UInt8 = 0,
        cumulativeLost: Int32 = 0,
        extendedHighestSequenceNumber: UInt32 = 0,
        jitter: UInt32 = 0,
        lastSenderReport: UInt32 = 0,
        delaySinceLastSenderReport: UInt32 = 0
    ) {
        self.ssrc = ssrc
        self.fractionLost = fractionLost
        self.cumulativeLost = cumulativeLost
        self.extendedHighestSequenceNumber = extendedHighestSequenceNumber
        self.jitter = jitter
        self.lastSenderReport = lastSenderReport
        self.delaySinceLastSenderReport = delaySinceLastSenderReport
    }

    /// RFC 3550 §6.4.1: round-trip time = A − LSR − DLSR, where A is the arrival time of this
    /// report (its middle 32 bits) and all three count 1/65536 s. Returns nanoseconds, or nil
    /// when no SR was received yet (LSR 0) or the result is negative (clocks or fields wrong).
    public func roundTripTime(arrival: NTPTimestamp) -> UInt64? {
        guard lastSenderReport != 0 else { return nil }
        let units = Int64(Int32(bitPattern: arrival.middle32 &- lastSenderReport &- delaySinceLastSenderReport))
        guard units >= 0 else { return nil }
        return (UInt64(units) * 1_000_000_000) >> 16
    }

    func write(to writer: inout ByteWriter) {
        let lost = min(max(cumulativeLost, Self.cumulativeLostRange.lowerBound), Self.cumulativeLostRange.upperBound)
        writer.write(ssrc)
        writer.write(fractionLost)
        writer.writeUInt24(UInt32(bitPattern: lost) & 0xFF_FFFF)
        writer.write(extendedHighestSequenceNumber)
        writer.write(jitter)
        writer.write(lastSenderReport)
        writer.write(delaySinceLastSenderReport)
    }

    static func read(from reader: inout ByteReader, index: Int) throws(RTPError) -> RTCPReceptionReport {
        let ssrc = try reader.readUInt32("SSRC of report block \(index)")
        let fractionLost = try reader.readUInt8("fraction lost of report block \(index)")
        let lost = try reader.readUInt24("cumulative lost of report block \(index)")
        // Sign-extend the 24-bit two's-complement value.
        let cumulativeLost = Int32(bitPattern: lost << 8) >> 8
        return RTCPReceptionReport(
            ssrc: ssrc,
            fractionLost: fractionLost,
            cumulativeLost: cumulativeLost,
            extendedHighestSequenceNumber: try reader.readUInt32("highest sequence number of report block \(index)"),
            jitter: try reader.readUInt32("jitter of report block \(index)"),
            lastSenderReport: try reader.readUInt32("LSR of report block \(index)"),
            delaySinceLastSenderReport: try reader.readUInt32("DLSR of report block \(index)")
        )
    }
}
