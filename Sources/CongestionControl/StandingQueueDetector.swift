/// The queue a path holds at rest, which the delay gradient cannot see (this project's addition
/// to draft-ietf-rmcat-gcc-02 §5; libwebrtc bounds the same thing with its congestion window).
///
/// The over-use detector reacts to a *growing* queue. After a capacity drop it fires once the
/// bottleneck queue is already deep, the decrease goes to β = 0.85 of the acknowledged rate,
/// and a full queue then drains at 15 % of the capacity: 750 ms of queue takes 5 s, and with
/// audio and retransmissions on top it may not drain at all (measured: 9.5 s through a 1 Mbit/s
/// tbf). A constant queue has no gradient, so nothing else notices.
///
/// This tracks the one-way delay offset (arrival − send, two unrelated clocks, so only its
/// changes mean anything) and its minimum over the last `windowUs`: the offset above that
/// minimum is the queueing delay. While it exceeds `limitUs`, `drainRate` asks for the
/// acknowledged rate × (1 − delay / 1 s), at least half of it: a queue of d seconds drains in
/// about a second, without compounding (the acknowledged rate stays the link's while the queue
/// keeps it busy, so repeated decisions ask the same).
public struct StandingQueueDetector: Sendable, Hashable {
    public var limitUs: Int64
    public var windowUs: Int64
    /// Per-bucket minima of the offset; the window is `buckets.count` buckets.
    private var buckets: [Int64]
    private var bucketStartUs: Int64?
    private var current = 0
    /// The latest queueing delay seen, µs.
    public private(set) var delayUs: Int64 = 0

    public init(limitUs: Int64 = 100_000, windowUs: Int64 = 30_000_000, buckets: Int = 10) {
        self.limitUs = limitUs
        self.windowUs = windowUs
        self.buckets = Array(repeating: .max, count: max(1, buckets))
    }

    /// Takes the least offset of one feedback message's received packets, at `nowUs`.
    public mutating func update(minimumOffsetUs offset: Int64, at nowUs: Int64) {
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
    }

    /// The rate that drains the queue within about a second, when it is above the limit.
    public func drainRate(acknowledgedBitrate: Int) -> Int? {
        guard delayUs > limitUs else { return nil }
        let factor = max(0.5, 1 - Double(delayUs) / 1_000_000)
        return Int(Double(acknowledgedBitrate) * factor)
    }

    public mutating func reset() {
        for index in buckets.indices { buckets[index] = .max }
        bucketStartUs = nil
        delayUs = 0
    }
}
