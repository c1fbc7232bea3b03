/// Sends Opus packets as RTP, RFC 7587: one Opus packet per RTP packet (§4.2: no
/// fragmentation, no aggregation), 48 kHz RTP clock whatever the codec's internal rate
/// (§4.1), and the timestamp advancing by exactly the samples each packet holds (960 for
/// 20 ms).
///
/// Discontinuous transmission (§3.1.3, RFC 3551 §4.1): with DTX on, libopus marks frames that
/// need not be sent by returning a packet of one or two bytes (its TOC byte only, the same test
/// libwebrtc uses). Those are skipped unless `sendsDTXPackets` is set, their samples still
/// advance the timestamp, and the first packet sent after a skipped stretch carries the marker
/// bit, as RFC 3551 asks for the first packet of a talkspurt. A caller that stops feeding
/// packets altogether (a muted source) restarts the timeline with `restart(at:)`, which marks
/// the next packet too.
///
/// Copies: each Opus byte is copied once, from the encoder's output into the packet buffer.
public struct OpusPayloader: Sendable {
    /// RFC 7587 §4.1: the RTP clock of Opus is always 48 kHz.
    public static let clockRate: UInt32 = 48_000
    /// Longest Opus packet: 120 ms (RFC 6716 §3.2.5) = 5760 samples at 48 kHz.
    public static let maximumSamplesPerPacket = 5760

    /// What became of one Opus packet.
    public enum Outcome: Sendable, Hashable {
        /// Sent as an RTP packet; `marker` is its marker bit.
        case sent(marker: Bool)
        /// A DTX frame: not sent, its samples only advance the timestamp.
        case skippedDTX
    }

    public let budget: RTPPayloadBudget
    /// Send the 1–2 byte DTX packets instead of skipping them.
    public let sendsDTXPackets: Bool
    /// The timestamp the next packet gets; nil until the first packet or `restart(at:)`, in
    /// which case the stream's timestamp base is used.
    public private(set) var nextTimestamp: UInt32?
    private var marksNextPacket = true

    public init(budget: RTPPayloadBudget = .standard, sendsDTXPackets: Bool = false) {
        self.budget = budget
        self.sendsDTXPackets = sendsDTXPackets
    }

    /// Starts (or restarts, after the source paused) the timeline at `timestamp`, normally
    /// `RTPClock.timestamp(at: captureTime)` of the packet about to come. The next packet sent
    /// carries the marker bit.
    public mutating func restart(at timestamp: UInt32) {
        nextTimestamp = timestamp
        marksNextPacket = true
    }

    /// True for the 1–2 byte packets libopus emits for frames DTX decided not to transmit.
    public static func isDTXPacket<Bytes: Collection<UInt8>>(_ packet: Bytes) -> Bool {
        packet.count <= 2
    }

    /// Hot path: writes the RTP packet for `opusPacket` (holding `sampleCount` samples at
    /// 48 kHz) into `buffer` and calls `emit` with it, unless it is a DTX packet to skip.
    /// Throws `RTPError` for a sample count outside 1–5760, a packet larger than the budget
    /// (configure the encoder's maximum packet size below it), or a buffer smaller than the
    /// budget; rethrows what `emit` throws.
    @discardableResult
    public mutating func packetize(
        _ opusPacket: ArraySlice<UInt8>,
        sampleCount: Int,
        stream: inout RTPStreamState,
        into buffer: RTPPacketBuffer,
        emit: (RTPPacketBuffer) throws -> Void
    ) throws -> Outcome {
        try check(opusPacket.count, sampleCount: sampleCount, stream: stream)
        try ByteWriter.ensure(budget.maximumPacketLength, fits: buffer.capacity, what: "an RTP packet for \(budget)")
        let timestamp = nextTimestamp ?? stream.timestampBase
        nextTimestamp = timestamp &+ UInt32(sampleCount)
        if Self.isDTXPacket(opusPacket), !sendsDTXPackets {
            marksNextPacket = true
            return .skippedDTX
        }
        let marker = marksNextPacket
        marksNextPacket = false
        buffer.withUnsafeMutableStorage { storage, count in
            var writer = ByteWriter(storage)
            stream.writeHeader(to: &writer, timestamp: timestamp, marker: marker)
            writer.write(opusPacket)
            count = writer.offset
        }
        try emit(buffer)
        return .sent(marker: marker)
    }

    private func check(_ length: Int, sampleCount: Int, stream: RTPStreamState) throws(RTPError) {
        guard (1...Self.maximumSamplesPerPacket).contains(sampleCount) else {
            throw RTPError(
                .invalidConfiguration,
                "Opus packet of \(sampleCount) samples; 1–\(Self.maximumSamplesPerPacket) at 48 kHz allowed"
            )
        }
        guard length > 0 else {
            throw RTPError(.invalidConfiguration, "Opus packet is empty; even DTX packets carry a TOC byte")
        }
        guard stream.clockRate == Self.clockRate else {
            throw RTPError(
                .invalidConfiguration,
                "Opus stream has a \(stream.clockRate) Hz clock; RFC 7587 §4.1 requires 48000"
            )
        }
        try stream.validateHeaderFields()
        let limit = budget.maximumPayloadLength(headerLength: stream.headerLength)
        guard length <= limit else {
            throw RTPError(
                .payloadTooLarge,
                "Opus packet of \(length) bytes exceeds the \(limit)-byte payload limit of \(budget); "
                    + "RFC 7587 does not fragment, so limit the encoder's packet size"
            )
        }
    }
}
