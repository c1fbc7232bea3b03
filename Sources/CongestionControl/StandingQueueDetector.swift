/// The queue a path holds at rest, which the delay gradient cannot see (this project's addition
/// to draft-ietf-rmcat-gcc-02 §5; libwebrtc bounds the same thing with its congestion window).
///
/// The over-use detector reacts to a *growing* queue. After a capacity drop it fires once the
/// bottleneck queue is already deep, the decrease goes to β = 0.85 of the acknowledged rate,
/// and a full queue then drains at 15 % of the capacity: 750 ms of queue takes 5 s, and with
/// audio and retransmissions on top it may not drain at all. A constant queue has no gradient,
/// so nothing else notices.
///
/// This tracks the one-way delay offset (arrival − send, two unrelated clocks, so only its
/// changes mean anything) and its minimum over the last `windowUs`: the offset above that
/// minimum is the queueing delay. While it exceeds `limitUs`, `drainRate` asks for the link's
/// rate × (1 − delay / `drainSpanUs`), at least half of it: a queue of d seconds drains in
/// about half a second, without compounding (the link's rate stays the same while the queue
/// keeps it busy, so repeated decisions ask the same). Half a second, not one: the delay a
/// feedback message shows is already a round trip old, and the queue still grows behind it.
/// Decision D8 (Docs/congestion.md): a standing queue over 100 ms is drained within 0.5 s.
///
/// Well before that limit, a queue over `backoffLimitUs` (25 ms) calls for one gentle decrease
/// (`takeBackoff`): the early back-off that keeps GCC's sawtooth near capacity short.
/// Decision D12 (Docs/congestion.md): the early back-off at 25 ms.
struct StandingQueueDetector: Sendable, Hashable {
    var limitUs: Int64
    var windowUs: Int64
    /// The delay at which the drain rate reaches its floor of half the link's rate, µs.
    var drainSpanUs: Int64
    /// Per-bucket minima of the offset; the window is `buckets.count` buckets.
    private var buckets: [Int64]
    private var bucketStartUs: Int64?
    private var current = 0
    /// The latest queueing delay seen, µs.
    private(set) var delayUs: Int64 = 0
    /// A queue above this, µs, calls for one decrease (`takeBackoff`); 0 never does.
    var backoffLimitUs: Int64
    /// Whether the next crossing of `backoffLimitUs` calls for a decrease: once per queue, armed
    /// again when the queue is under half the limit.
    private var backoffArmed = true
    /// Feedback messages in a row whose delay was over `backoffLimitUs`; a back-off needs
    /// `backoffMessages` of them.
    private var messagesOverBackoffLimit = 0
    /// A large picture's own queue empties within a message or so; a standing one does not.
    /// Decision D12 (Docs/congestion.md): two messages in a row, so a large picture is no queue.
    static let backoffMessages = 2

    init(
        limitUs: Int64 = 100_000,
        windowUs: Int64 = 30_000_000,
        buckets: Int = 10,
        drainSpanUs: Int64 = 500_000,
        backoffLimitUs: Int64 = 25_000
    ) {
        self.limitUs = limitUs
        self.backoffLimitUs = max(0, backoffLimitUs)
        self.windowUs = windowUs
        self.drainSpanUs = max(1, drainSpanUs)
        self.buckets = Array(repeating: .max, count: max(1, buckets))
    }

    /// Takes the least offset of one feedback message's received packets, at `nowUs`.
    mutating func update(minimumOffsetUs offset: Int64, at nowUs: Int64) {
        let bucketUs = max(1, windowUs / Int64(buckets.count))
        if var start = bucketStartUs, nowUs - start <= windowUs + bucketUs {
            while nowUs - start >= bucketUs {
                current = (current + 1) % buckets.count
                buckets[current] = .max
                start += bucketUs
            }
            bucketStartUs = start
        } else {
            // The first message, or after a silence longer than the window: every bucket is stale.
            for index in buckets.indices { buckets[index] = .max }
            bucketStartUs = nowUs
        }
        buckets[current] = min(buckets[current], offset)
        let base = buckets.min() ?? offset
        delayUs = max(0, offset - base)
        if delayUs * 2 < backoffLimitUs { backoffArmed = true }
        messagesOverBackoffLimit = delayUs > backoffLimitUs ? messagesOverBackoffLimit + 1 : 0
    }

    /// Whether the queue has just crossed `backoffLimitUs`: true once per queue. GCC's detector
    /// sees a queue once its growth has lifted the modified trend (slope × up to 60 deltas × 4)
    /// over an adaptive threshold of 6 ms or more: near capacity, where the estimate grows
    /// additively, that is well past the link and a deep queue. The least delay of two feedback
    /// messages in a row over 25 ms says the queue never emptied between the pictures they
    /// cover: the rate is over the link now. Once per queue: the delay stays up while the queue
    /// drains, and a decrease per message would compound.
    /// Decision D12 (Docs/congestion.md): one early back-off per standing queue.
    mutating func takeBackoff() -> Bool {
        guard backoffLimitUs > 0, backoffArmed, messagesOverBackoffLimit >= Self.backoffMessages else { return false }
        backoffArmed = false
        return true
    }

    /// β of the early back-off for the queue standing now: `gentlest` (0.95) for a queue just
    /// over the limit, lower for a deeper one, so the back-off also drains what stood by the
    /// time it was seen within about `drainSpanUs` (1 − delay / span), down to GCC's β of 0.85
    /// (a 75 ms queue).
    /// Decision D12 (Docs/congestion.md): β follows the queue's depth, 0.95 down to 0.85.
    func backoffFactor(gentlest: Double) -> Double {
        min(gentlest, max(Self.deepestBackoffFactor, 1 - Double(delayUs) / Double(drainSpanUs)))
    }

    /// The lowest β the early back-off takes: draft-ietf-rmcat-gcc-02 §5.5's recommended 0.85.
    static let deepestBackoffFactor = 0.85

    /// Whether the queueing delay is above `backoffLimitUs`: the link is full and a queue stands.
    var isOverBackoffLimit: Bool { backoffLimitUs > 0 && delayUs > backoffLimitUs }

    /// Whether the queueing delay is above `limitUs`: a queue to drain.
    var isOverLimit: Bool { delayUs > limitUs }

    /// The rate that drains the queue within about half a second, when it is above the limit;
    /// `linkRate` is what the link carries (the lower of R_hat and the latest arrival rate).
    func drainRate(linkRate: Int) -> Int? {
        guard isOverLimit else { return nil }
        let factor = max(0.5, 1 - Double(delayUs) / Double(drainSpanUs))
        return Int(Double(linkRate) * factor)
    }

    mutating func reset() {
        for index in buckets.indices { buckets[index] = .max }
        bucketStartUs = nil
        delayUs = 0
        backoffArmed = true
        messagesOverBackoffLimit = 0
    }
}
