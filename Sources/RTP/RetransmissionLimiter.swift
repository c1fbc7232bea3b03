/// Decides, for one receiver, whether a sequence number it NACKed (RFC 4585 §6.2.1) is resent:
/// never the same number more than once per round trip. A receiver repeats its NACK until the
/// packet arrives; a repeat that comes sooner than one RTT after our resend crossed it on the
/// way and must not cost the link a second copy (RFC 4588 leaves to the sender which
/// requests it honours; resending into a congested path only adds to the congestion).
///
/// And, given the receiver's allowed rate, the bytes resent in any half second stay under it
/// (libwebrtc's retransmission `RateLimiter`: window kRetransmitWindowSizeMs = 500 ms, rate the
/// target rate): after a queue overflowed, the receiver NACKs every packet it lost, and
/// resending all of them into the same full queue would double the overload. A receiver that
/// has not reported yet has no allowed rate; the publisher then passes a share of the media it
/// sends that receiver (`SentBytesWindow`), never nil, so a NACK storm cannot multiply it.
///
/// One slot per sequence number modulo `capacity` (a power of two, like the packet history it
/// sits beside) holds when that number was last resent. Counts what was asked, sent, not found
/// in the history, suppressed, and over the rate. Times are monotonic nanoseconds; no
/// allocation after init.
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
        /// Not resent: the last half second's retransmissions already reached the allowed rate.
        public var overRate = 0

        public init(asked: Int = 0, sent: Int = 0, notFound: Int = 0, suppressed: Int = 0, overRate: Int = 0) {
            self.asked = asked
            self.sent = sent
            self.notFound = notFound
            self.suppressed = suppressed
            self.overRate = overRate
        }
    }

    public enum Decision: Sendable, Hashable {
        case resend
        case notFound
        case suppressed
        case overRate
    }

    /// The window the resent bytes are measured over, ns (libwebrtc kRetransmitWindowSizeMs).
    public static let rateWindow: UInt64 = 500_000_000

    public let capacity: Int
    public private(set) var statistics = Statistics()
    private var sequenceNumbers: [UInt16]
    /// 0: never resent (monotonic time is never 0 once a machine is up).
    private var resentAt: [UInt64]
    /// What may still be resent, bits × 10⁹ (a bucket refilled at the allowed rate and holding
    /// at most one window of it: bit·ns per second, so refills by elapsed ns are exact).
    private var credit: Int64 = 0
    private var creditUpdated: UInt64?

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
    /// it, `roundTrip` (ns) is the receiver's current RTT estimate. With `maximumRate` (bits per
    /// second, the receiver's allowed rate) a resend of `bytes` must also fit in what the last
    /// `rateWindow` left of it. Counts the outcome.
    public mutating func decide(
        _ sequenceNumber: UInt16,
        available: Bool,
        at now: UInt64,
        roundTrip: UInt64,
        bytes: Int = 0,
        maximumRate: Int? = nil
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
        if let maximumRate, !spend(bits: Int64(max(0, bytes)) * 8, rate: Int64(max(0, maximumRate)), at: now) {
            statistics.overRate += 1
            return .overRate
        }
        sequenceNumbers[slot] = sequenceNumber
        resentAt[slot] = now
        statistics.sent += 1
        return .resend
    }

    /// Refills the bucket at `rate` since the last call (a full window on the first), then
    /// takes `bits` if it holds them.
    private mutating func spend(bits: Int64, rate: Int64, at now: UInt64) -> Bool {
        let cap = rate * Int64(Self.rateWindow)
        if let updated = creditUpdated {
            let elapsed = now > updated ? Int64(min(now - updated, Self.rateWindow)) : 0
            credit = min(credit + rate * elapsed, cap)
        } else {
            credit = cap
        }
        creditUpdated = max(now, creditUpdated ?? now)
        let cost = bits * 1_000_000_000
        guard credit >= cost else { return false }
        credit -= cost
        return true
    }
}
