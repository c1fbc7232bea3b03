/// When a captured picture is encoded: the publisher's answer to a still screen (Docs/cadence.md).
///
/// A screen share is mostly still. A picture that changed is encoded at once, at the rate
/// control's quality. When the next picture is the same, the same picture is encoded again
/// ("refreshed") at the capture rate: each refresh codes what the last left out, so the text
/// sharpens, until x264 reports a frame QP at or under `convergedQP` or `convergenceLimit` has
/// passed since the last change. Then the screen is *still*: nothing is converted or encoded,
/// and once every `idleRepeatInterval` the same picture goes out at QP 51, where every
/// macroblock is skipped (about a dozen bytes), so receivers' freeze and key-frame-request timers
/// stay quiet and RTCP keeps its sender reports. A change or a key-frame request ends it at the
/// next picture, with no added delay.
///
/// A struct with a state enum: events in (`picture`, `encoded`, `requestKeyFrame`), an
/// `Action` out; the media thread does the work. Times are monotonic nanoseconds.
public struct FrameCadence: Sendable {
    public struct Configuration: Sendable, Equatable {
        /// A frame QP at or under this ends convergence: the picture is as good as it gets
        /// at an affordable rate (x264's QP scale, 0–51).
        public var convergedQP: Int
        /// The longest refreshing after the last change, in nanoseconds; also the bound on how
        /// long a still screen costs more than the idle rate.
        public var convergenceLimit: UInt64
        /// How often a still picture is repeated, in nanoseconds.
        public var idleRepeatInterval: UInt64

        public init(
            convergedQP: Int = 12,
            convergenceLimit: UInt64 = 2_000_000_000,
            idleRepeatInterval: UInt64 = 1_000_000_000
        ) {
            self.convergedQP = convergedQP
            self.convergenceLimit = convergenceLimit
            self.idleRepeatInterval = idleRepeatInterval
        }

        /// What each `--content-hint` converges at (Docs/cadence.md, "How sharp"): `text` and
        /// `motion` at QP 12, where text is near-lossless; `detail`, the default for a captured
        /// screen, at QP 24, about 44 dB on text for two thirds of the bytes.
        public static func forHint(_ hint: FrameRateGovernor.Hint) -> Configuration {
            switch hint {
            case .motion, .text: Configuration()
            case .detail: Configuration(convergedQP: 24)
            }
        }
    }

    public enum State: Sendable, Equatable {
        /// The last picture differed from the one before: pictures are encoded as they come.
        case changing
        /// Still since `since`; the picture is being refreshed (`refreshes` so far).
        case converging(since: UInt64, refreshes: Int)
        /// Converged; the last thing sent for it left at `lastSent`.
        case still(lastSent: UInt64)

        /// For the status line and `--stats-json`.
        public var name: String {
            switch self {
            case .changing: "changing"
            case .converging: "converging"
            case .still: "still"
            }
        }
    }

    /// What the media thread does with the picture it just captured.
    public enum Action: Sendable, Equatable {
        /// A changed picture: convert and encode it at the rate control's QP.
        case encode
        /// The same picture again, at the rate control's QP: it codes what the last left out.
        case refresh
        /// An IDR of the current picture (a receiver asked), changed or not.
        case keyFrame
        /// The same picture at `FrameCadence.idleRepeatQP`: every macroblock skipped.
        case idleRepeat
        /// Nothing: no conversion, no encode.
        case skip

        /// Whether the encoder runs.
        public var encodes: Bool { self != .skip }
    }

    /// The QP of an idle repeat: the largest H.264 allows. A residual against a converged
    /// reference quantizes to nothing, so x264 skips every macroblock and the picture is unchanged.
    public static let idleRepeatQP = 51

    public let configuration: Configuration
    public private(set) var state: State = .changing
    /// A receiver asked for a key frame; the next picture is one.
    public private(set) var keyFrameWanted = false
    /// The QP of the last picture encoded by `.encode`, `.refresh` or `.keyFrame`.
    private var lastQP: Int?
    /// When the last `.encode`, `.refresh` or `.keyFrame` was decided.
    private var lastEncoded: UInt64 = 0
    /// The last picture was decided during an encoder's refresh wave.
    private var inWave = false

    public init(_ configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// A picture was captured at `now`; `changed` says whether it differs from the one before.
    /// `refreshing`: the encoder is sweeping an intra-refresh wave across the picture for
    /// receivers that cannot ask for key frames. The wave advances only with encoded pictures and
    /// must not be coded at the idle repeat's QP, so an unchanged picture is refreshed until it
    /// ends, and convergence starts over after it.
    public mutating func picture(changed: Bool, at now: UInt64, refreshing: Bool = false) -> Action {
        let action = decide(changed: changed, at: now, refreshing: refreshing)
        if action == .encode || action == .refresh || action == .keyFrame { lastEncoded = now }
        return action
    }

    private mutating func decide(changed: Bool, at now: UInt64, refreshing: Bool) -> Action {
        inWave = refreshing
        if changed {
            state = .changing
            lastQP = nil
            return takeKeyFrame() ? .keyFrame : .encode
        }
        if takeKeyFrame() {
            state = .converging(since: now, refreshes: 0)
            lastQP = nil
            return .keyFrame
        }
        if refreshing {
            if case .converging(_, let refreshes) = state {
                state = .converging(since: now, refreshes: refreshes + 1)
            } else {
                state = .converging(since: now, refreshes: 1)
            }
            lastQP = nil
            return .refresh
        }
        switch state {
        case .changing:
            // The picture just sent may already be good enough (a small change on a converged
            // screen, coded at a low QP).
            if let lastQP, lastQP <= configuration.convergedQP {
                state = .still(lastSent: lastEncoded)
                return .skip
            }
            state = .converging(since: now, refreshes: 1)
            return .refresh
        case .converging(let since, let refreshes):
            if now &- since >= configuration.convergenceLimit {
                state = .still(lastSent: lastEncoded)
                return repeatIfDue(now: now)
            }
            state = .converging(since: since, refreshes: refreshes + 1)
            return .refresh
        case .still:
            return repeatIfDue(now: now)
        }
    }

    /// What the encoder made of the last `.encode`, `.refresh` or `.keyFrame`: its frame QP.
    /// A refresh at or under `convergedQP` ends convergence.
    public mutating func encoded(qp: Int, at now: UInt64) {
        // A wave's pictures are not the end of convergence: its columns came at their own QPs.
        lastQP = inWave ? nil : qp
        // A key frame of a still picture is followed by one refresh however good it is:
        // Chromium shows a lone picture only when the next one arrives, which would otherwise be
        // the idle repeat a second later.
        if case .converging(_, let refreshes) = state, refreshes > 0, qp <= configuration.convergedQP, !inWave {
            state = .still(lastSent: now)
        }
    }

    /// A receiver asked for a key frame (PLI, FIR) or a viewer joined: the next picture is an IDR.
    public mutating func requestKeyFrame() { keyFrameWanted = true }

    private mutating func takeKeyFrame() -> Bool {
        defer { keyFrameWanted = false }
        return keyFrameWanted
    }

    private mutating func repeatIfDue(now: UInt64) -> Action {
        guard case .still(let lastSent) = state, now &- lastSent >= configuration.idleRepeatInterval else {
            return .skip
        }
        state = .still(lastSent: now)
        return .idleRepeat
    }
}
