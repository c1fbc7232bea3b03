/// A probe of the path of a viewer that reports only loss, before it moves up a simulcast layer
/// (Docs/simulcast.md, "Moving up without transport-cc").
///
/// Such a receiver's loss-based estimate grows whether or not the path could carry more, and
/// what it was sent shows only what it carries now. A move up onto a path too slow for the layer
/// floods the link with the layer's key frame and costs seconds of pictures, and a receiver like
/// aiortc can stall far longer on a hole it never gets back. So before a move up the pacer
/// sends padding (RTX copies of packets the viewer has) on top of its video, at the higher
/// layer's rate with margin, for `duration`; once the padding has left, one sender report goes
/// out behind it. A bottleneck queue the probe built delays that report, and the receiver's
/// next report gives the round trip of exactly that report (LSR and DLSR, RFC 3550 §6.4.1).
/// The probe passes when that round trip is at most `queueLimit` above the least round trip of
/// the receiver's recent reports and it lost under `lossLimit`; after a failure the next probe
/// waits `backoff`, doubled at each failure up to `maximumBackoff`.
///
/// Events in (`begin`, `sentReport`, `report`, `expire`), outcomes out; the sender does the I/O.
/// Times are monotonic nanoseconds.
struct LayerProbe {
    enum State: Equatable {
        case idle
        /// Padding queued at `rate` bits per second since `since`; the report goes once it left.
        case sending(rate: Int, since: UInt64)
        /// The report with compact NTP time `report` (its LSR) left at `sentAt`.
        case awaiting(rate: Int, report: UInt32, sentAt: UInt64)
    }

    enum Outcome: Equatable {
        /// The path carried `rate` bits per second of video without a queue.
        case passed(rate: Int)
        case failed
    }

    struct Statistics: Equatable {
        var passed = 0
        var failed = 0
        /// The last probe's queueing delay, milliseconds (its report's round trip above the least).
        var lastDelayMilliseconds: Int?
    }

    /// How long the padding is sent: at 1.6 times a link's rate, half a second builds 300 ms of
    /// queue (a clear signal) and about 15 kB, which a bottleneck queue of a few hundred
    /// milliseconds holds without loss.
    static let duration: UInt64 = 500_000_000
    /// The queueing delay a passed probe may show: one of 60 ms after half a second of padding at
    /// the probe's rate means the link carries at least about 0.9 of that rate.
    static let queueLimit: Int64 = 60_000
    static let lossLimit = 0.02
    /// A report naming the probe's report must come within this; else the probe failed (the
    /// report was lost in the queue, or the receiver stopped reporting).
    static let reportTimeout: UInt64 = 3_000_000_000
    /// Padding still queued after this (the pacer never let it go) ends the probe as failed.
    static let sendTimeout: UInt64 = 3_000_000_000
    static let firstBackoff: UInt64 = 10_000_000_000
    static let maximumBackoff: UInt64 = 80_000_000_000
    /// Reports whose round trips make the baseline before the first probe.
    static let baselineReports = 2
    /// The least round trip is the least of two buckets of this length (so over 15–30 s).
    static let baselineBucket: UInt64 = 15_000_000_000

    private(set) var state = State.idle
    private(set) var statistics = Statistics()
    /// The rate the last passed probe showed, and when.
    private var proven: (bitsPerSecond: Int, at: UInt64)?
    /// How long a passed probe's rate counts as shown.
    static let provenWindow: UInt64 = 10_000_000_000
    private(set) var backoff: UInt64 = 0
    private var blockedUntil: UInt64 = 0
    /// The least round trip, µs, of reports outside probes: this bucket's and the previous one's.
    private var baseline: (current: Int64, previous: Int64, since: UInt64) = (.max, .max, 0)
    private var baselineSamples = 0
    private var lastFractionLost = 1.0

    /// The least round trip of recent reports outside probes, µs.
    var baselineRoundTripUs: Int64? {
        let least = min(baseline.current, baseline.previous)
        return least == .max ? nil : least
    }

    /// The video rate a probe passed at within `provenWindow` of `now`, else 0.
    func provenRate(at now: UInt64) -> Int {
        guard let proven, now &- proven.at <= Self.provenWindow else { return 0 }
        return proven.bitsPerSecond
    }

    /// Whether a probe may start at `now`: none is under way, the receiver reported round trips
    /// to compare with and lost nothing lately, and no failure holds the next one back.
    func mayBegin(at now: UInt64) -> Bool {
        state == .idle && baselineSamples >= Self.baselineReports && lastFractionLost < Self.lossLimit
            && now >= blockedUntil
    }

    /// The padding for a probe at `rate` was queued at `now`.
    mutating func begin(rate: Int, at now: UInt64) {
        state = .sending(rate: rate, since: now)
    }

    /// The padding has left and the report with compact NTP time `report` went behind it.
    mutating func sentReport(_ report: UInt32, at now: UInt64) {
        guard case .sending(let rate, _) = state else { return }
        state = .awaiting(rate: rate, report: report, sentAt: now)
    }

    /// Whether the next regular sender report for this viewer waits: it would replace the
    /// probe's as the one the receiver's next report names.
    var holdsReports: Bool {
        if case .awaiting = state { return true }
        return false
    }

    /// A receiver report block about the video at `now`: `lastSenderReport` (its LSR), the round
    /// trip it gives, µs, and its fraction lost. The outcome when it names the probe's report.
    mutating func report(
        lastSenderReport: UInt32,
        roundTripUs: Int64?,
        fractionLost: Double,
        at now: UInt64
    )
        -> Outcome?
    {
        lastFractionLost = fractionLost
        if case .awaiting(let rate, let report, _) = state, lastSenderReport == report {
            guard let roundTripUs, let least = baselineRoundTripUs else { return conclude(passed: false, at: now) }
            let delay = max(0, roundTripUs - least)
            statistics.lastDelayMilliseconds = Int(delay / 1000)
            let passed = delay <= Self.queueLimit && fractionLost < Self.lossLimit
            return conclude(passed: passed, rate: rate, at: now)
        }
        // Round trips measured outside probes make the baseline.
        guard state == .idle, let roundTripUs else { return nil }
        if now &- baseline.since >= Self.baselineBucket {
            baseline = (.max, baseline.current, now)
        }
        baseline.current = min(baseline.current, max(0, roundTripUs))
        baselineSamples += 1
        return nil
    }

    /// Ends a probe whose padding or report is overdue at `now`, as failed.
    mutating func expire(at now: UInt64) -> Outcome? {
        switch state {
        case .sending(_, let since) where now &- since > Self.sendTimeout:
            return conclude(passed: false, at: now)
        case .awaiting(_, _, let sentAt) where now &- sentAt > Self.reportTimeout:
            return conclude(passed: false, at: now)
        default:
            return nil
        }
    }

    private mutating func conclude(passed: Bool, rate: Int = 0, at now: UInt64) -> Outcome {
        state = .idle
        if passed {
            statistics.passed += 1
            backoff = 0
            proven = (rate, now)
            return .passed(rate: rate)
        }
        statistics.failed += 1
        backoff = min(max(backoff * 2, Self.firstBackoff), Self.maximumBackoff)
        blockedUntil = now &+ backoff
        return .failed
    }
}
