/// Decides, for one receiver, whether a sequence number it NACKed (RFC 4585 §6.2.1) is resent:
/// never the same number more than once per round trip. A receiver repeats its NACK until the
/// packet arrives; a repeat that comes sooner than one RTT after our resend crossed it on the
/// way and must not cost the link a second copy (RFC 4588 leaves to the sender which
/// requests it honours; resending into a congested path only adds to the congestion).
///
/// One slot per sequence number modulo `capacity` (a power of two, like the packet history it
/// sits beside) holds when that number was last resent. Counts what was asked, sent, not found
/// in the history, and suppressed. Times are monotonic nanoseconds; no allocation after init.
public struct RetransmissionLimiter: Sendable {
    public struct Statistics: Sendable, Hashable, Codable {
        /// Sequence numbers NACKed (each entry's PID and BLP bits, one each).
        public var asked = 0
        /// Resent.
        public var sent = 0
        /// No longer (or never) in the history.
        public var notFound = 0
        /// Resent less than one round trip ago.
        public var suppressed = 0

        public init(asked: Int = 0, sent: Int = 0, notFound: Int = 0, suppressed: Int = 0) {
            self.asked = asked
            self.sent = sent
            self.notFound = notFound
            self.suppressed = suppressed
        }
    }

    public enum Decision: Sendable, Hashable {
        case resend
        case notFound
        case suppressed
    }

    public let capacity: Int
    public private(set) var statistics = Statistics()
    private var sequenceNumbers: [UInt16]
    /// 0: never resent (monotonic time is never 0 once a machine is up).
    private var resentAt: [UInt64]

    /// `capacity` is a power of two in 1024…16384 (`RTPPacketHistory`'s range).
    public init(capacity: Int) throws(RTPError) {
        guard (RTPPacketHistory.minimumCapacity...RTPPacketHistory.maximumCapacity).contains(capacity),
            capacity & (capacity - 1) == 0
        else {
            throw RTPError(
                .invalidConfiguration,
                "retransmission limiter capacity \(capacity) is not a power of two in "
                    + "\(RTPPacketHistory.minimumCapacity)–\(RTPPacketHistory.maximumCapacity)"
            )
        }
        self.capacity = capacity
        sequenceNumbers = [UInt16](repeating: 0, count: capacity)
        resentAt = [UInt64](repeating: 0, count: capacity)
    }

    /// One NACKed `sequenceNumber` at `now`: `available` says whether the history still holds
    /// it, `roundTrip` (ns) is the receiver's current RTT estimate. Counts the outcome.
    public mutating func decide(
        _ sequenceNumber: UInt16,
        available: Bool,
        at now: UInt64,
        roundTrip: UInt64
    ) -> Decision {
        statistics.asked += 1
        guard available else {
            statistics.notFound += 1
            return .notFound
        }
        let slot = Int(sequenceNumber) & (capacity - 1)
        let last = resentAt[slot]
        if sequenceNumbers[slot] == sequenceNumber, last != 0, now >= last, now - last < roundTrip {
            statistics.suppressed += 1
            return .suppressed
        }
        sequenceNumbers[slot] = sequenceNumber
        resentAt[slot] = now
        statistics.sent += 1
        return .resend
    }
}
