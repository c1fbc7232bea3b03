import RTP
import SRTP

/// The receive side of one destination: the SRTCP session its feedback is verified with, the
/// retransmission limiter, and the counters (the rate estimates are its congestion control's).
final class DestinationFeedback {
    let inbound: SRTPSession
    var limiter: RetransmissionLimiter
    var statistics = FeedbackStatistics()
    /// A stable number for this destination, so FIR requesters of different destinations
    /// never share a key in the key-frame limiter.
    let number: UInt32
    /// The next RTX sequence number for this destination (RFC 4588 §4: its own series, random
    /// start as RFC 3550 §5.1 asks).
    private var rtxSequenceNumber: UInt16

    init(
        keys: SRTPKeyMaterial,
        historyCapacity: Int,
        number: UInt32
    )
        throws
    {
        inbound = try SRTPSession(keys: keys, direction: .inbound)
        limiter = try RetransmissionLimiter(capacity: historyCapacity)
        self.number = number
        var generator = SystemRandomNumberGenerator()
        rtxSequenceNumber = UInt16.random(in: 0..<RTPStreamState.initialSequenceNumberLimit, using: &generator)
    }

    func takeRTXSequenceNumber() -> UInt16 {
        defer { rtxSequenceNumber &+= 1 }
        return rtxSequenceNumber
    }

    /// The interval within which a sequence number is not resent again: the measured video RTT,
    /// or `fallback` before one is known, never below `minimum`.
    func retransmissionInterval(fallback: UInt64, minimum: UInt64) -> UInt64 {
        let measured = statistics.video?.roundTripMilliseconds.map { UInt64(max($0, 0) * 1_000_000) }
        return max(measured ?? fallback, minimum)
    }
}
