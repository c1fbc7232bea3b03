/// What the bottleneck carried while a standing queue kept it busy (one drain of
/// `StandingQueueDetector`): with a queue behind them, packets leave the bottleneck back to back,
/// so the bytes that arrived over a span of arrival times are the link's capacity over it.
///
/// One feedback message is a poor gauge of that: it covers 5–25 packets, and a receiver short of
/// CPU stamps a batch it reads at once with one time, so one message may read the link several
/// times too fast. Over the whole drain such batches cost a few per cent. Until the span is long
/// enough, the least per-message reading stands in for the drain's cap (the higher readings are
/// the ones a batch spoilt), the highest for a resume (a drain that short only ever lowers the
/// estimate, and not on one low reading).
/// Decision D9 (Docs/congestion.md): a drain's link rate is measured over the whole drain.
struct BusyLinkMeter: Sendable, Hashable {
    /// The least per-message link rate seen in this drain, bits per second.
    private(set) var lowestReading: Int?
    /// The greatest, bits per second.
    private(set) var highestReading: Int?
    /// The last arrival of the message the drain began with: that message's own packets may have
    /// crossed before the queue stood (a token bucket's burst at a capacity step), so they only
    /// mark the start.
    private var startUs: Int64?
    private var lastUs: Int64 = 0
    private var bytes = 0

    /// Arrival spans shorter than this give no `rate`, µs: five or so messages.
    static let minimumSpanUs: Int64 = 250_000
    /// Nor any reading for the cap below this, µs: two messages. A batch's error over 100 ms is
    /// some 20 %, and the cap only ever takes the lower reading (draining a little sooner).
    static let minimumCapSpanUs: Int64 = 100_000

    init() {}

    /// Adds one feedback message's received packets (`received`, in arrival order) and its own
    /// reading of the link's rate (`reading`, nil when it had none).
    mutating func add(_ received: some Collection<PacketResult>, reading: Int?) {
        if let reading {
            lowestReading = min(lowestReading ?? reading, reading)
            highestReading = max(highestReading ?? reading, reading)
        }
        guard let start = startUs else {
            startUs = received.reduce(nil) { last, packet in max(last ?? .min, packet.arrivalTimeUs ?? .min) }
            lastUs = startUs ?? 0
            return
        }
        for packet in received {
            guard let arrival = packet.arrivalTimeUs, arrival > start else { continue }
            bytes += packet.size
            lastUs = max(lastUs, arrival)
        }
    }

    /// The bytes that arrived after the drain's first message over their span, bits per second;
    /// nil until the span reaches `minimumSpanUs`.
    var rate: Int? { measured(spanningAtLeast: Self.minimumSpanUs) }

    private func measured(spanningAtLeast spanUs: Int64) -> Int? {
        guard let start = startUs, lastUs - start >= spanUs else { return nil }
        return Int(Int64(bytes) * 8_000_000 / (lastUs - start))
    }

    /// The link rate a drain's cap counts on: the lower of the rate measured so far (over at least
    /// `minimumCapSpanUs`) and the lowest single reading (both are the link's; the higher is the
    /// one a batch spoilt, and asking too little only drains sooner).
    var linkRate: Int? {
        switch (measured(spanningAtLeast: Self.minimumCapSpanUs), lowestReading) {
        case (let measured?, let lowest?): min(measured, lowest)
        case (let measured?, nil): measured
        case (nil, let lowest): lowest
        }
    }

    /// The link rate to resume at once drained: the measured rate, or the highest single reading
    /// when the drain was too short to measure one.
    var resumeRate: Int? { rate ?? highestReading }
}
