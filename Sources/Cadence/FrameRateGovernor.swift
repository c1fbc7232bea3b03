/// What a screen share gives up first when the bitrate is short (`--content-hint`, the W3C
/// `MediaStreamTrack.contentHint` names). Text and UI must stay readable: with `detail` or
/// `text`, when the pictures come out coarse (a high frame QP) the publisher encodes fewer of
/// the changed pictures, at the same resolution, and each gets the bits the skipped ones would
/// have had; when they come out fine again it encodes more. `motion` keeps every picture.
///
/// A struct fed the QPs of changed pictures; it answers whether a changed picture is encoded
/// now (`admits`) and by how much the encoder's bitrate must be scaled (`divisor`) so that its
/// per-picture budget, which x264 derives from the nominal frame rate, matches the rate sent.
/// Coarse pictures whose QP is still falling fast are not short of bits: x264's one-pass rate
/// control follows a new budget over seconds (it keeps the old rate's history), and fewer
/// pictures would only lose motion; such a window waits for the next.
public struct FrameRateGovernor: Sendable {
    public enum Hint: String, Sendable, CaseIterable, Codable {
        /// Camera-like content: every picture, the quality follows the bitrate (no governing).
        case motion
        /// Screen content: fewer pictures before coarser ones.
        case detail
        /// Text: a lower QP held, down to fewer pictures still.
        case text
    }

    public struct Configuration: Sendable, Equatable {
        /// A window whose mean QP is over this sends fewer pictures.
        public var highQP: Int
        /// A window whose mean QP is under this, twice running, sends more.
        public var lowQP: Int
        /// The largest divisor of the capture rate (30 fps / 6 = 5 fps).
        public var largestDivisor: Int

        public init(highQP: Int, lowQP: Int, largestDivisor: Int) {
            self.highQP = highQP
            self.lowQP = lowQP
            self.largestDivisor = largestDivisor
        }

        /// nil for `motion`. `detail` steps down over the H.264 QP libwebrtc's quality scaler
        /// acts on (37), down to 5 fps, and up under 28: its pictures never go under its converged
        /// QP 24 (`FrameCadence.Configuration.forHint`), which libwebrtc's 24 would need. `text`
        /// holds QP 30, where glyph edges stay clean, down to 3 fps.
        public static func forHint(_ hint: Hint) -> Configuration? {
            switch hint {
            case .motion: nil
            case .detail: Configuration(highQP: 37, lowQP: 28, largestDivisor: 6)
            case .text: Configuration(highQP: 30, lowQP: 20, largestDivisor: 10)
            }
        }
    }

    /// The divisors stepped through: 30 fps → 15 → 10 → 7.5 → 6 → 5 (→ 3 for text).
    static let divisors = [1, 2, 3, 4, 5, 6, 10]
    /// How long QPs are gathered before a step.
    public static let window: UInt64 = 1_000_000_000

    public let hint: Hint
    public let configuration: Configuration?
    /// The capture's picture period, in nanoseconds.
    public let period: UInt64
    /// Encoded pictures are at least `divisor` periods apart (less half a period of jitter).
    public private(set) var divisor = 1
    private var lastAdmitted: UInt64?
    private var windowStart: UInt64?
    private var qpSum = 0
    private var qpCount = 0
    /// The last window's mean QP, nil after a rise (its window starts over).
    private var lastMean: Double?
    private var lowWindows = 0
    /// The window after a step is left out: x264's rate control is still moving to the new
    /// per-picture budget.
    private var settling = false

    public init(hint: Hint, frameRate: Int) {
        self.hint = hint
        self.configuration = Configuration.forHint(hint)
        self.period = 1_000_000_000 / UInt64(max(1, frameRate))
    }

    /// Whether the changed picture captured at `now` is encoded. A key frame someone asked for
    /// is always encoded (`force`).
    public mutating func admits(changedPictureAt now: UInt64, force: Bool = false) -> Bool {
        guard divisor > 1, !force, let last = lastAdmitted else {
            lastAdmitted = now
            return true
        }
        guard now &- last >= UInt64(divisor) * period - period / 2 else { return false }
        lastAdmitted = now
        return true
    }

    /// The frame QP x264 gave a changed picture encoded at `now`. Returns true when the divisor
    /// changed (the caller rescales the encoder's bitrate).
    public mutating func encoded(qp: Int, at now: UInt64) -> Bool {
        guard let configuration else { return false }
        guard let start = windowStart else {
            windowStart = now
            qpSum = qp
            qpCount = 1
            return false
        }
        qpSum += qp
        qpCount += 1
        guard now &- start >= Self.window else { return false }
        let mean = qpSum / qpCount
        let previous = lastMean
        let exactMean = Double(qpSum) / Double(qpCount)
        lastMean = exactMean
        windowStart = now
        qpSum = 0
        qpCount = 0
        if settling {
            settling = false
            return false
        }
        let index = Self.divisors.firstIndex(of: divisor) ?? 0
        if mean > configuration.highQP, let previous, previous - exactMean > Self.catchingUpQP {
            lowWindows = 0
            return false
        }
        if mean > configuration.highQP, index + 1 < Self.divisors.count,
            Self.divisors[index + 1] <= configuration.largestDivisor
        {
            divisor = Self.divisors[index + 1]
            lowWindows = 0
            settling = true
            return true
        }
        if mean < configuration.lowQP, index > 0 {
            lowWindows += 1
            guard lowWindows >= 2 else { return false }
            divisor = Self.divisors[index - 1]
            lowWindows = 0
            settling = true
            return true
        }
        lowWindows = 0
        return false
    }

    /// The encoder's target rose from `old` to `new` (any unit, the same for both). By half
    /// again or more (a receiver's start, then its probes, D33; a capacity found again), the
    /// QPs gathered so far were coded for the old budget and say nothing about the new one: the
    /// window starts over and the next one settles. The divisor becomes the smallest that still
    /// gives each picture the budget the current one gave at `old`, at once, rather than a step
    /// per two windows of low QPs. Returns true when the divisor changed (the caller rescales
    /// the encoder's bitrate).
    public mutating func targetRose(from old: Int, to new: Int) -> Bool {
        guard configuration != nil, old > 0, Double(new) >= Self.riseFactor * Double(old) else { return false }
        windowStart = nil
        qpSum = 0
        qpCount = 0
        lastMean = nil
        lowWindows = 0
        settling = true
        let needed = Double(old * divisor) / Double(new)
        guard let smaller = Self.divisors.first(where: { Double($0) >= needed }), smaller < divisor else {
            return false
        }
        divisor = smaller
        return true
    }

    /// A coarse window whose mean QP fell by more than this from the window before is x264
    /// catching up with its budget, not short of it. Measured on the 1280x720 X11 test screen:
    /// after a viewer's 165 → 1041 kbit/s start, windows fell 13 and 10 QP while still over 37
    /// (x264 spent 56–68 % of its budget); starved behind 300 kbit/s they moved 0.4–1.4 a window.
    public static let catchingUpQP = 3.0

    /// A rise by this factor or more starts the QP window over (`targetRose`).
    public static let riseFactor = 1.5

    /// The frame rate changed pictures are sent at, for the status line.
    public func frameRate(nominal: Int) -> Double { Double(nominal) / Double(divisor) }
}
