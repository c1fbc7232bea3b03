/// Turns the capture timestamps a video source reports into capture times that RTP can trust:
/// on the monotonic clock, strictly increasing, and spaced like the frames really are.
///
/// Why it exists: seed 001 re-stamped frames as `CMTimeMake(frameTime += 1000, 1000)`, one
/// second per frame, and receivers played 0–1 fps although every picture arrived. A source's
/// timestamps are therefore evidence, not truth. They are used when they agree with the
/// frames' arrival times on our monotonic clock, and replaced by arrival time when they do not.
///
/// The rule (Docs/clock.md tells it at length):
/// - Input time is mapped onto the monotonic clock by an offset, fixed when the input is
///   trusted ("locked"): `capture = input + offset`.
/// - A new source starts *acquiring*: frames get their arrival time while the input proves
///   itself; once `probationFrames` frames in a row increase and stay within `tolerance` of
///   arrival (relative to the first of them), the sanitizer locks. After each loss of lock
///   the probation doubles (up to `maximumProbationFrames`), so an input that keeps failing
///   slowly is not trusted again and again.
/// - While locked, a frame whose input is missing, repeated, backwards, or more than
///   `tolerance` from its arrival gets an arrival-based time instead (arrival minus the
///   average lateness seen, so the timeline does not jump); `rejectionsBeforeUnlock` such
///   frames in a row drop the lock.
/// - Slow clock drift between the source and our clock is absorbed by moving the offset by
///   at most `maximumDriftSlewPerMillion` of each frame interval, and only once the average
///   disagreement leaves the `driftDeadband`; jitter inside the dead band moves nothing, so a
///   good source keeps its own spacing exactly.
/// - Whatever the source of a time, the output is at least one tick of the stream clock
///   after the previous output: it never goes backwards and never repeats.
public struct CaptureTimestampSanitizer: Sendable {
    public struct Configuration: Sendable, Hashable {
        /// Largest disagreement (ns) between input and arrival time that still counts as
        /// jitter. Default 100 ms: well above capture-to-arrival jitter, far below the
        /// 967 ms per frame of the seed bug.
        public var tolerance: UInt64
        /// Frames an input must agree for before it is trusted (first time).
        public var probationFrames: Int
        /// Cap on the probation, which doubles after each loss of lock.
        public var maximumProbationFrames: Int
        /// Consecutive rejected frames that drop the lock.
        public var rejectionsBeforeUnlock: Int
        /// The RTP clock rate of the stream; one tick of it is the smallest output step.
        public var clockRate: UInt32
        /// Average disagreement (ns) tolerated before the offset is slewed.
        public var driftDeadband: UInt64
        /// Fastest offset slew, in parts per million of the frame interval (1000 = 0.1 %,
        /// ten times the worst crystal drift).
        public var maximumDriftSlewPerMillion: UInt64

        public init(
            tolerance: UInt64 = 100_000_000,
            probationFrames: Int = 8,
            maximumProbationFrames: Int = 256,
            rejectionsBeforeUnlock: Int = 3,
            clockRate: UInt32 = 90_000,
            driftDeadband: UInt64 = 20_000_000,
            maximumDriftSlewPerMillion: UInt64 = 1000
        ) {
            self.tolerance = tolerance
            self.probationFrames = probationFrames
            self.maximumProbationFrames = maximumProbationFrames
            self.rejectionsBeforeUnlock = rejectionsBeforeUnlock
            self.clockRate = clockRate
            self.driftDeadband = driftDeadband
            self.maximumDriftSlewPerMillion = maximumDriftSlewPerMillion
        }
    }

    /// Why a frame got the time it got.
    public enum Reason: Sendable, Hashable, CaseIterable {
        /// The input timestamp, mapped onto the monotonic clock.
        case accepted
        /// Arrival time: the input looks sane but has not yet agreed for long enough.
        case acquiring
        /// Arrival time: no input timestamp, a timescale ≤ 0, or a value that overflows.
        case missing
        /// Arrival time: the same input value as the previous frame (duplicate or stuck clock).
        case repeated
        /// Arrival time: the input went backwards.
        case wentBackwards
        /// Arrival time: the input ran ahead of arrival by more than the tolerance (a jump
        /// ahead, or a timescale too coarse, like the seed's second per frame).
        case aheadOfArrival
        /// Arrival time: the input fell behind arrival by more than the tolerance (a stall,
        /// or a timescale too fine, like a frame counter read as milliseconds).
        case behindArrival
    }

    /// A change of trust, reported on the frame where it happened (log it).
    public enum LockEvent: Sendable, Hashable {
        /// From this frame on the input timestamps are used.
        case locked
        /// The input was rejected too often; arrival times are used until it proves itself again.
        case unlocked(Reason)
    }

    public struct Output: Sendable, Hashable {
        /// Capture time on the monotonic clock, in nanoseconds.
        public var captureTime: UInt64
        public var reason: Reason
        /// True when the time was pushed forward to keep the output strictly increasing.
        public var wasClamped: Bool
        public var event: LockEvent?

        public var usedInput: Bool { reason == .accepted }
    }

    /// Frames per reason since creation, plus lock changes: what to export as metrics.
    public struct Statistics: Sendable, Hashable {
        public var accepted = 0
        public var acquiring = 0
        public var missing = 0
        public var repeated = 0
        public var wentBackwards = 0
        public var aheadOfArrival = 0
        public var behindArrival = 0
        public var clamped = 0
        public var locks = 0
        public var unlocks = 0

        public func count(_ reason: Reason) -> Int {
            switch reason {
            case .accepted: accepted
            case .acquiring: acquiring
            case .missing: missing
            case .repeated: repeated
            case .wentBackwards: wentBackwards
            case .aheadOfArrival: aheadOfArrival
            case .behindArrival: behindArrival
            }
        }

        mutating func record(_ reason: Reason) {
            switch reason {
            case .accepted: accepted += 1
            case .acquiring: acquiring += 1
            case .missing: missing += 1
            case .repeated: repeated += 1
            case .wentBackwards: wentBackwards += 1
            case .aheadOfArrival: aheadOfArrival += 1
            case .behindArrival: behindArrival += 1
            }
        }
    }

    private enum Mode: Sendable {
        /// Probation: `agreeing` frames in a row have had `arrival − input` within the
        /// tolerance of `reference`.
        case acquiring(reference: Int64, agreeing: Int)
        /// Trusted: capture = input + offset.
        case locked(offset: Int64)
    }

    public let configuration: Configuration
    public private(set) var statistics = Statistics()

    private var mode: Mode = .acquiring(reference: 0, agreeing: 0)
    private var probationFrames: Int
    private var lastInput: Int64?
    private var lastOutput: Int64?
    private var consecutiveRejections = 0
    /// Running average of `arrival − (input + offset)` while locked (ns).
    private var averageLateness: Int64 = 0
    private let tolerance: Int64
    private let minimumStep: Int64

    /// A sanitizer with the default configuration (90 kHz video).
    public init() {
        self.init(checked: Configuration())
    }

    public init(configuration: Configuration) throws(RTPError) {
        guard configuration.tolerance > 0, configuration.tolerance <= 60_000_000_000 else {
            throw RTPError(.invalidConfiguration, "tolerance \(configuration.tolerance) ns is outside 1 ns–60 s")
        }
        guard configuration.probationFrames >= 2,
            configuration.maximumProbationFrames >= configuration.probationFrames,
            configuration.maximumProbationFrames <= 1 << 20
        else {
            throw RTPError(
                .invalidConfiguration,
                "probation of \(configuration.probationFrames)–\(configuration.maximumProbationFrames) frames "
                    + "must start at 2 or more and not shrink"
            )
        }
        guard configuration.rejectionsBeforeUnlock >= 1 else {
            throw RTPError(.invalidConfiguration, "rejections before unlock must be at least 1")
        }
        guard (1...RTPStreamState.maximumClockRate).contains(configuration.clockRate) else {
            throw RTPError(.invalidConfiguration, "clock rate \(configuration.clockRate) Hz is out of range")
        }
        guard configuration.driftDeadband < configuration.tolerance,
            configuration.maximumDriftSlewPerMillion <= 1_000_000
        else {
            throw RTPError(
                .invalidConfiguration,
                "drift dead band must be below the tolerance and the slew at most 1,000,000 per million"
            )
        }
        self.init(checked: configuration)
    }

    private init(checked configuration: Configuration) {
        self.configuration = configuration
        self.probationFrames = configuration.probationFrames
        self.tolerance = Int64(configuration.tolerance)
        let rate = Int64(configuration.clockRate)
        self.minimumStep = (1_000_000_000 + rate - 1) / rate
    }

    /// True while the input timestamps are trusted.
    public var isLocked: Bool {
        if case .locked = mode { return true }
        return false
    }

    /// A frame whose source reported `value / timescale` seconds (a CMTime's value and
    /// timescale as sent) and that arrived at `arrival` ns on the monotonic clock.
    public mutating func sanitize(value: Int64, timescale: Int32, arrival: UInt64) -> Output {
        sanitize(inputNanoseconds: Self.nanoseconds(value: value, timescale: timescale), arrival: arrival)
    }

    /// A different source takes over (a new capture connection, another clock): its timestamps
    /// start on probation again, with the first probation length, since trust in the previous
    /// source says nothing about this one. The output stays strictly increasing across the change.
    public mutating func restartSource() {
        mode = .acquiring(reference: 0, agreeing: 0)
        probationFrames = configuration.probationFrames
        lastInput = nil
        consecutiveRejections = 0
        averageLateness = 0
    }

    /// A frame that came without a usable timestamp: it gets its arrival time.
    public mutating func sanitize(arrival: UInt64) -> Output {
        sanitize(inputNanoseconds: nil, arrival: arrival)
    }

    /// `value × 10⁹ / timescale` without overflow, or nil when the timescale is not positive
    /// or the result does not fit.
    public static func nanoseconds(value: Int64, timescale: Int32) -> Int64? {
        guard timescale > 0 else { return nil }
        let scale = Int64(timescale)
        let (seconds, remainder) = value.quotientAndRemainder(dividingBy: scale)
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return nil }
        // |remainder| < 2³¹, so remainder × 10⁹ < 2⁶¹.
        let (sum, sumOverflow) = whole.addingReportingOverflow(remainder * 1_000_000_000 / scale)
        return sumOverflow ? nil : sum
    }

    private mutating func sanitize(inputNanoseconds input: Int64?, arrival unsignedArrival: UInt64) -> Output {
        let arrival = Int64(clamping: unsignedArrival)
        var event: LockEvent?
        var reason: Reason
        var candidate: Int64

        // Ordering against the previous frame's input, whatever became of that frame.
        var orderFailure: Reason?
        if let input {
            if let lastInput, input == lastInput {
                orderFailure = .repeated
            } else if let lastInput, input < lastInput {
                orderFailure = .wentBackwards
            }
        } else {
            orderFailure = .missing
        }
        let inputDelta = input.flatMap { current in lastInput.map { current &- $0 } } ?? 0

        switch mode {
        case .locked(var offset):
            reason = orderFailure ?? .accepted
            candidate = arrival &- averageLateness
            if orderFailure == nil, let input {
                let (predicted, overflow) = input.addingReportingOverflow(offset)
                let lateness = overflow ? Int64.min : arrival &- predicted
                if overflow || lateness < -tolerance {
                    reason = .aheadOfArrival
                } else if lateness > tolerance {
                    reason = .behindArrival
                } else {
                    candidate = predicted
                    offset = absorbDrift(lateness: lateness, inputDelta: inputDelta, offset: offset)
                    mode = .locked(offset: offset)
                }
            }
            if reason == .accepted {
                consecutiveRejections = 0
            } else {
                consecutiveRejections += 1
                if consecutiveRejections >= configuration.rejectionsBeforeUnlock {
                    mode = .acquiring(reference: 0, agreeing: 0)
                    probationFrames = min(probationFrames * 2, configuration.maximumProbationFrames)
                    consecutiveRejections = 0
                    averageLateness = 0
                    event = .unlocked(reason)
                    statistics.unlocks += 1
                }
            }

        case .acquiring(let reference, let agreeing):
            candidate = arrival
            if let orderFailure {
                reason = orderFailure
                mode = .acquiring(reference: 0, agreeing: 0)
            } else if let input {
                let (difference, overflow) = arrival.subtractingReportingOverflow(input)
                if overflow {
                    reason = .aheadOfArrival
                    mode = .acquiring(reference: 0, agreeing: 0)
                } else if agreeing > 0, difference < reference &- tolerance {
                    reason = .aheadOfArrival
                    mode = .acquiring(reference: difference, agreeing: 1)
                } else if agreeing > 0, difference > reference &+ tolerance {
                    reason = .behindArrival
                    mode = .acquiring(reference: difference, agreeing: 1)
                } else if agreeing + 1 >= probationFrames {
                    // Trusted from here: offset chosen so this frame's time is its arrival
                    // time, continuing the arrival-based timeline without a jump.
                    reason = .accepted
                    mode = .locked(offset: difference)
                    averageLateness = 0
                    consecutiveRejections = 0
                    event = .locked
                    statistics.locks += 1
                } else {
                    reason = .acquiring
                    mode = .acquiring(reference: agreeing > 0 ? reference : difference, agreeing: agreeing + 1)
                }
            } else {
                reason = .missing
            }
        }

        if let input { lastInput = input }

        var wasClamped = false
        if let lastOutput, candidate < lastOutput &+ minimumStep {
            candidate = lastOutput &+ minimumStep
            wasClamped = true
            statistics.clamped += 1
        }
        candidate = max(candidate, 0)
        lastOutput = candidate
        statistics.record(reason)
        return Output(captureTime: UInt64(candidate), reason: reason, wasClamped: wasClamped, event: event)
    }

    /// Follows slow drift: averages the lateness over about 16 frames and, only when that
    /// average leaves the dead band, moves the offset toward it by at most
    /// `maximumDriftSlewPerMillion` of this frame's interval. Returns the new offset.
    private mutating func absorbDrift(lateness: Int64, inputDelta: Int64, offset: Int64) -> Int64 {
        averageLateness += (lateness - averageLateness) / 16
        let deadband = Int64(configuration.driftDeadband)
        let maximumSlew =
            inputDelta / 1_000_000 * Int64(configuration.maximumDriftSlewPerMillion)
            + inputDelta % 1_000_000 * Int64(configuration.maximumDriftSlewPerMillion) / 1_000_000
        var slew: Int64 = 0
        if averageLateness > deadband {
            slew = min(averageLateness - deadband, maximumSlew)
        } else if averageLateness < -deadband {
            slew = -min(-deadband - averageLateness, maximumSlew)
        }
        averageLateness -= slew
        return offset &+ slew
    }
}
