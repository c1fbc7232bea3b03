/// The per-stream values every RTP packet of one source carries (RFC 3550 §5.1): SSRC, payload
/// type, clock rate, the next sequence number and the timestamp base, plus any CSRCs and a
/// fixed header extension.
///
/// RFC 3550 §5.1 asks for random initial sequence numbers and timestamps (§9.1: they make
/// known-plaintext attacks on encryption harder) and §8.1 for a random SSRC. The initial
/// sequence number is kept below 32768: libsrtp guesses the rollover counter from the first
/// sequence numbers it sees, and a start near 65535 with early losses makes it guess wrong.
public struct RTPStreamState: Sendable, Hashable {
    /// Initial sequence numbers are drawn from 0..<32768.
    public static let initialSequenceNumberLimit: UInt16 = 32_768
    /// Highest clock rate accepted; keeps `RTPClock` arithmetic exact.
    public static let maximumClockRate: UInt32 = 1_000_000_000

    public let ssrc: UInt32
    public let payloadType: UInt8
    /// Timestamp units per second: 90,000 for video, 48,000 for Opus (RFC 7587 §4.1).
    public let clockRate: UInt32
    /// The RTP timestamp that corresponds to the session's time origin.
    public let timestampBase: UInt32
    /// The sequence number the next packet gets.
    public private(set) var nextSequenceNumber: UInt16
    /// Contributing sources written into every packet (a mixer's business; empty for us).
    public var csrcs: [UInt32]
    /// A header extension written unchanged into every packet, or nil.
    public var headerExtension: RTPHeaderExtension?

    /// A stream with SSRC, initial sequence number and timestamp base drawn from the system's
    /// cryptographic random source.
    public init(payloadType: UInt8, clockRate: UInt32) throws(RTPError) {
        var generator = SystemRandomNumberGenerator()
        try self.init(payloadType: payloadType, clockRate: clockRate, using: &generator)
    }

    /// A stream with its random values drawn from `generator` (tests pass a seeded one).
    public init<Generator: RandomNumberGenerator>(
        payloadType: UInt8,
        clockRate: UInt32,
        using generator: inout Generator
    ) throws(RTPError) {
        try self.init(
            ssrc: UInt32.random(in: .min ... .max, using: &generator),
            payloadType: payloadType,
            clockRate: clockRate,
            initialSequenceNumber: UInt16.random(in: 0..<Self.initialSequenceNumberLimit, using: &generator),
            timestampBase: UInt32.random(in: .min ... .max, using: &generator)
        )
    }

    /// A stream with every value given (tests, or restoring a stream).
    public init(
        ssrc: UInt32,
        payloadType: UInt8,
        clockRate: UInt32,
        initialSequenceNumber: UInt16,
        timestampBase: UInt32,
        csrcs: [UInt32] = [],
        headerExtension: RTPHeaderExtension? = nil
    ) throws(RTPError) {
        guard payloadType <= 127 else {
            throw RTPError(.invalidConfiguration, "payload type \(payloadType) does not fit in 7 bits (0–127)")
        }
        guard (1...Self.maximumClockRate).contains(clockRate) else {
            throw RTPError(
                .invalidConfiguration,
                "clock rate \(clockRate) Hz is outside 1–\(Self.maximumClockRate) Hz"
            )
        }
        self.ssrc = ssrc
        self.payloadType = payloadType
        self.clockRate = clockRate
        self.timestampBase = timestampBase
        self.nextSequenceNumber = initialSequenceNumber
        self.csrcs = csrcs
        self.headerExtension = headerExtension
    }

    /// Returns the sequence number for the packet about to be sent and advances, wrapping from
    /// 65535 to 0 (RFC 3550 §5.1: "increments by one for each RTP data packet sent").
    public mutating func takeSequenceNumber() -> UInt16 {
        defer { nextSequenceNumber &+= 1 }
        return nextSequenceNumber
    }

    /// RTP header bytes of this stream's packets: 12 plus CSRCs plus the extension.
    public var headerLength: Int {
        RTPHeader.fixedLength + 4 * csrcs.count + (headerExtension?.serializedLength ?? 0)
    }

    /// The clock that turns capture times into this stream's timestamps; every stream of a
    /// session passes the same `origin` so they share one timeline.
    public func clock(origin: UInt64) -> RTPClock {
        RTPClock(checkedClockRate: clockRate, origin: origin, timestampBase: timestampBase)
    }

    /// Checks the per-packet header fields before a payloader writes them.
    func validateHeaderFields() throws(RTPError) {
        guard csrcs.count <= RTPHeader.maximumCSRCCount else {
            throw RTPError(
                .invalidConfiguration,
                "stream has \(csrcs.count) CSRCs; the 4-bit CC field allows \(RTPHeader.maximumCSRCCount)"
            )
        }
        try headerExtension?.validate()
    }

    /// Writes this stream's header for one packet, taking the next sequence number.
    mutating func writeHeader(to writer: inout ByteWriter, timestamp: UInt32, marker: Bool) {
        let header = RTPHeader(
            marker: marker,
            payloadType: payloadType,
            sequenceNumber: takeSequenceNumber(),
            timestamp: timestamp,
            ssrc: ssrc,
            csrcs: csrcs,
            headerExtension: headerExtension
        )
        header.write(to: &writer, padding: false)
    }
}
