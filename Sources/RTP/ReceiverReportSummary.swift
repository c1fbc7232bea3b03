/// What one reception report block says about one of our streams at one receiver (RFC 3550
/// §6.4.1), in units a status line and a rate controller use: loss as a fraction, jitter in
/// milliseconds of the stream's clock, round-trip time in milliseconds.
///
/// RFC 3550 §6.4.1 round-trip time: the receiver echoes the middle 32 bits of the NTP time of
/// our last SR (LSR) and how long it held it (DLSR, 1/65536 s); at arrival time A,
/// RTT = A − LSR − DLSR, all in 1/65536 s (`RTCPReceptionReport.roundTripTime`).
public struct ReceiverReportSummary: Sendable, Hashable, Codable {
    /// The reporting receiver's SSRC.
    public var reporterSSRC: UInt32
    /// The stream reported on (ours).
    public var mediaSSRC: UInt32
    /// Fraction of packets lost since the receiver's previous report, 0…1 (fixed point /256
    /// on the wire).
    public var fractionLost: Double
    /// Packets lost since the start (negative when duplicates outnumber losses).
    public var cumulativeLost: Int32
    /// Highest sequence number received, with the wrap count in the high 16 bits.
    public var extendedHighestSequenceNumber: UInt32
    /// Interarrival jitter converted from timestamp units to milliseconds.
    public var jitterMilliseconds: Double
    /// Round-trip time in milliseconds; nil until the receiver has echoed one of our SRs.
    public var roundTripMilliseconds: Double?

    public init(
        reporterSSRC: UInt32,
        mediaSSRC: UInt32,
        fractionLost: Double,
        cumulativeLost: Int32,
        extendedHighestSequenceNumber: UInt32,
        jitterMilliseconds: Double,
        roundTripMilliseconds: Double?
    ) {
        self.reporterSSRC = reporterSSRC
        self.mediaSSRC = mediaSSRC
        self.fractionLost = fractionLost
        self.cumulativeLost = cumulativeLost
        self.extendedHighestSequenceNumber = extendedHighestSequenceNumber
        self.jitterMilliseconds = jitterMilliseconds
        self.roundTripMilliseconds = roundTripMilliseconds
    }

    /// Summarizes `block`, received from `reporterSSRC` at NTP time `arrival`, for a stream whose
    /// RTP clock runs at `clockRate` Hz (90,000 for video, 48,000 for Opus).
    public init(_ block: RTCPReceptionReport, reporterSSRC: UInt32, clockRate: UInt32, arrival: NTPTimestamp) {
        self.init(
            reporterSSRC: reporterSSRC,
            mediaSSRC: block.ssrc,
            fractionLost: Double(block.fractionLost) / 256,
            cumulativeLost: block.cumulativeLost,
            extendedHighestSequenceNumber: block.extendedHighestSequenceNumber,
            jitterMilliseconds: Double(block.jitter) * 1000 / Double(max(clockRate, 1)),
            roundTripMilliseconds: block.roundTripTime(arrival: arrival).map { Double($0) / 1_000_000 }
        )
    }
}
