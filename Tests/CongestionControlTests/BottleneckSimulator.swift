@testable import CongestionControl

/// SplitMix64: a tiny seeded generator so that "random" runs replay exactly.
struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    init(seed: UInt64) { self.state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A sender driven by the estimator, one bottleneck queue, a receiver that sends transport-wide
/// feedback: all in simulated time (µs), so every run is exact and repeatable.
///
/// - The sender paces 1200-byte packets at the estimator's rate: every 5 ms it sends, all at
///   that instant, as many packets as the rate has earned since (a pacer's 5 ms bursts).
///   `utilisation` (a function of time) scales that: an encoder that makes less than its target.
/// - The bottleneck is a FIFO of capacity C bit/s (a function of time) behind 20 ms of
///   propagation: a packet enters at send + 20 ms and leaves at max(entry, previous departure)
///   + size / C. Its queueing delay is what it waited before service. Nothing is dropped.
/// - Arrival is the departure plus, optionally, uniform random jitter of ±`jitterUs` (after the
///   queue: it reorders arrivals but does not change the queue).
/// - Every 50 ms the receiver's feedback reaches the sender, 20 ms after it left: it reports
///   every packet that had arrived by then and was not reported yet, in sequence order.
struct BottleneckSimulator {
    struct Sample {
        var timeUs: Int64
        var update: DelayBasedEstimator.Update
        /// Queueing delay of the last packet this feedback reported, µs.
        var queueDelayUs: Int64
        /// Bytes reported received so far.
        var deliveredBytes: Int
    }

    static let packetSize = 1200
    static let propagationUs: Int64 = 20_000
    static let feedbackDelayUs: Int64 = 20_000
    static let burstIntervalUs: Int64 = 5_000
    static let feedbackIntervalUs: Int64 = 50_000

    var estimator: DelayBasedEstimator
    var capacity: (Int64) -> Double
    var jitterUs: Int64
    var generator: SeededGenerator
    /// The fraction of the estimator's rate the sender uses at a time (1: all of it).
    var utilisation: (Int64) -> Double = { _ in 1 }
    private(set) var nowUs: Int64 = 0
    private(set) var samples: [Sample] = []
    private var rate: Double
    private var budgetBits = 0.0
    private var sequence: UInt64 = 0
    private var lastDepartureUs: Int64 = 0
    private var pending: [(result: PacketResult, queueDelayUs: Int64)] = []
    private var deliveredBytes = 0

    init(estimator: DelayBasedEstimator, jitterUs: Int64 = 0, seed: UInt64 = 1, capacity: @escaping (Int64) -> Double) {
        self.estimator = estimator
        self.capacity = capacity
        self.jitterUs = jitterUs
        self.generator = SeededGenerator(seed: seed)
        self.rate = Double(estimator.bitrate)
        self.estimator.setRoundTripTime(Self.propagationUs + Self.feedbackDelayUs)
    }

    /// Runs until `endUs` of simulated time.
    mutating func run(untilUs endUs: Int64) {
        while nowUs < endUs {
            nowUs += Self.burstIntervalUs
            if nowUs % Self.feedbackIntervalUs == 0 { deliverFeedback() }
            sendBurst()
        }
    }

    private mutating func sendBurst() {
        budgetBits += rate * utilisation(nowUs) * Double(Self.burstIntervalUs) / 1e6
        let bits = Double(Self.packetSize * 8)
        while budgetBits >= bits {
            budgetBits -= bits
            let entry = nowUs + Self.propagationUs
            let serviceUs = Int64((bits / capacity(entry) * 1e6).rounded())
            let start = max(entry, lastDepartureUs)
            let departure = start + serviceUs
            lastDepartureUs = departure
            let jitter = jitterUs > 0 ? Int64.random(in: -jitterUs...jitterUs, using: &generator) : 0
            sequence += 1
            let result = PacketResult(
                sequenceNumber: sequence,
                sendTimeUs: nowUs,
                arrivalTimeUs: departure + jitter,
                size: Self.packetSize
            )
            pending.append((result, start - entry))
        }
    }

    private mutating func deliverFeedback() {
        let cutoff = nowUs - Self.feedbackDelayUs
        var report: [PacketResult] = []
        var queueDelayUs: Int64 = samples.last?.queueDelayUs ?? 0
        var kept: [(result: PacketResult, queueDelayUs: Int64)] = []
        for entry in pending {
            if let arrival = entry.result.arrivalTimeUs, arrival <= cutoff {
                report.append(entry.result)
                deliveredBytes += entry.result.size
                queueDelayUs = entry.queueDelayUs
            } else {
                kept.append(entry)
            }
        }
        pending = kept
        let update = estimator.update(with: report, at: nowUs)
        rate = Double(update.bitrate)
        samples.append(
            Sample(timeUs: nowUs, update: update, queueDelayUs: queueDelayUs, deliveredBytes: deliveredBytes)
        )
    }
}

extension [BottleneckSimulator.Sample] {
    /// The samples from `startUs` (inclusive) to `endUs` (exclusive).
    func between(_ startUs: Int64, _ endUs: Int64) -> [BottleneckSimulator.Sample] {
        filter { $0.timeUs >= startUs && $0.timeUs < endUs }
    }

    /// The first sample at or after `startUs` that satisfies `condition`.
    func first(
        after startUs: Int64,
        where condition: (BottleneckSimulator.Sample) -> Bool
    ) -> BottleneckSimulator.Sample? {
        first { $0.timeUs >= startUs && condition($0) }
    }

    /// Bits per second delivered between the first and the last sample.
    var deliveredRate: Double {
        guard let first = self.first, let last = self.last, last.timeUs > first.timeUs else { return 0 }
        return Double((last.deliveredBytes - first.deliveredBytes) * 8) * 1e6 / Double(last.timeUs - first.timeUs)
    }

    var meanBitrate: Double {
        isEmpty ? 0 : Double(reduce(0) { $0 + $1.update.bitrate }) / Double(count)
    }

    var overusingFraction: Double {
        isEmpty ? 0 : Double(count { $0.update.state == .overusing }) / Double(count)
    }

    /// The longest run of consecutive over-using samples, in samples.
    var longestOveruseRun: Int {
        var longest = 0
        var run = 0
        for sample in self {
            run = sample.update.state == .overusing ? run + 1 : 0
            longest = Swift.max(longest, run)
        }
        return longest
    }
}
