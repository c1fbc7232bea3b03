/// The decision half of a packet pacer, modelled on libwebrtc's `PacingController` and Pion's
/// pacer interceptor: which queued packet goes now, and when the next one may. No I/O; the
/// caller owns the packets and the pacer sees only their handles and sizes.
///
/// - Rate: packets leave at the pacing rate = `pacingFactor` × target (libwebrtc
///   kDefaultPaceMultiplier = 2.5), so a key frame far above the average frame size spreads over
///   tens of milliseconds instead of hitting the bottleneck queue at once, while the encoder's
///   average rate still leaves plenty of room.
/// - Budget: a bucket in bits refilled by elapsed time at the pacing rate. A packet may leave
///   while the budget is not negative; its size is then charged, so the budget may go down by
///   one packet past zero (libwebrtc's media debt). While packets wait, at most
///   `burstIntervalUs` worth is banked (libwebrtc kDefaultMinPacketLimit, "time limit between
///   packet bursts", 5 ms), so a sender thread that wakes late sends a small burst, never more.
///   With nothing paced queued nothing is banked at all (libwebrtc's debt floors at zero): a key frame after
///   an idle second starts from an empty budget instead of leaving in one lump.
/// - Burst allowance: packets may also leave while the debt is below `burstAllowanceUs` of the
///   pacing rate (libwebrtc's `send_burst_interval`, 40 ms in Chromium's pacer), capped at
///   `maximumBurstBytes` (libwebrtc kMaxBurstSize, 63 KB, so a high rate cannot flood the socket
///   buffer). An ordinary picture then leaves at once and only what is larger than the allowance
///   is spread: a receiver's jitter buffer sees pictures arrive whole, as from an unpaced sender,
///   while a key frame still spreads. `burstAllowed = false` holds it off (a probe must leave at
///   its own rate). 0 is the older rule: nothing leaves until the debt is paid.
/// - Priorities: audio, then retransmissions, then video, then padding (libwebrtc's
///   `PacketQueue` priorities; padding only exists when the caller queued it). Audio is never
///   held by the budget (libwebrtc sends audio immediately) but is charged, so video yields the
///   room it took. FIFO within a kind.
/// - Queue age: if the oldest queued retransmission or video packet would otherwise wait more
///   than `maximumQueueTimeUs` (libwebrtc kMaxExpectedQueueLength = 2 s), the pacing rate rises
///   to what drains the paced bytes in the time that packet has left (at least 1 ms left, as
///   libwebrtc): a backlog costs a burst above 2.5 × target rather than unbounded latency.
///   The wait `nextSendTime` reports uses the rate at that instant; if the boost rises in
///   between, `next` may still say nil then and the sender simply asks again.
///
/// The budget is kept in bit·µs per second (bits × 10⁶) so refills by elapsed µs are exact
/// integer products, with no rounding drift over a long session.
///
/// No allocation per packet, by construction: each kind has a fixed ring of `capacity` slots
/// allocated at init; `enqueue` writes into a slot and `next` advances a head, and a full ring
/// refuses the packet rather than growing.
struct Pacer: Sendable {
    typealias Kind = SendSideBandwidthEstimator.PacketKind
    typealias Configuration = CongestionConfiguration.Pacing

    /// One kind's FIFO: parallel arrays of `capacity` slots, written once at init.
    private struct Ring: Sendable {
        var handles: [Int]
        var sizes: [Int]
        var enqueuedUs: [Int64]
        var head = 0
        var count = 0
        var bytes = 0

        init(capacity: Int) {
            handles = Array(repeating: 0, count: capacity)
            sizes = Array(repeating: 0, count: capacity)
            enqueuedUs = Array(repeating: 0, count: capacity)
        }

        var isFull: Bool { count == handles.count }

        mutating func push(handle: Int, size: Int, at nowUs: Int64) {
            var slot = head + count
            if slot >= handles.count { slot -= handles.count }
            handles[slot] = handle
            sizes[slot] = size
            enqueuedUs[slot] = nowUs
            count += 1
            bytes += size
        }

        mutating func pop() -> (handle: Int, size: Int) {
            let packet = (handle: handles[head], size: sizes[head])
            head += 1
            if head == handles.count { head = 0 }
            count -= 1
            bytes -= packet.size
            return packet
        }

        var oldestUs: Int64? { count > 0 ? enqueuedUs[head] : nil }
    }

    /// Scale of the budget: bits × this = bit·µs per second.
    private static let microsecondsPerSecond: Int64 = 1_000_000
    /// The least time left to drain the backlog in, µs (libwebrtc: 1 ms).
    private static let minimumDrainTimeUs: Int64 = 1_000
    /// Elapsed time credited per refill at most, µs; the bank is capped at far less, this only
    /// keeps `rate × elapsed` from overflowing after a very long pause.
    private static let maximumElapsedUs: Int64 = 60_000_000

    let configuration: Configuration
    private var rings: [Ring]
    /// Target rate, bits per second.
    private(set) var targetRate = 0
    /// The current pacing rate, bits per second, including the queue-age drain boost (as of the
    /// last call that took a time).
    private(set) var pacingRate: Int
    /// Bits × 10⁶; may be negative (debt), at most `pacingRate × burstIntervalUs`.
    private var budget: Int64 = 0
    private var lastUpdateUs: Int64?
    /// Whether the burst allowance applies now; off while a probe must leave at its own rate.
    var burstAllowed = true

    init(configuration: Configuration = Configuration()) throws(CongestionControlError) {
        guard configuration.pacingFactor.isFinite, configuration.pacingFactor >= 1 else {
            throw CongestionControlError.invalid(
                "pacing factor must be finite and ≥ 1; got \(configuration.pacingFactor)"
            )
        }
        guard configuration.burstIntervalUs > 0, configuration.maximumQueueTimeUs > 0 else {
            throw CongestionControlError.invalid(
                "pacer needs a burst interval and a maximum queue time > 0; got \(configuration.burstIntervalUs) µs, "
                    + "\(configuration.maximumQueueTimeUs) µs"
            )
        }
        guard configuration.burstAllowanceUs >= 0, configuration.maximumBurstBytes >= 0 else {
            throw CongestionControlError.invalid(
                "pacer burst allowance must not be negative; got \(configuration.burstAllowanceUs) µs, "
                    + "\(configuration.maximumBurstBytes) bytes"
            )
        }
        guard configuration.capacity > 0, configuration.minimumRate > 0 else {
            throw CongestionControlError.invalid(
                "pacer needs a capacity and a minimum rate > 0; got \(configuration.capacity), "
                    + "\(configuration.minimumRate) bit/s"
            )
        }
        self.configuration = configuration
        rings = Kind.allCases.map { _ in Ring(capacity: configuration.capacity) }
        pacingRate = configuration.minimumRate
    }

    /// Sets the target rate (bits per second; negative counts as 0). Takes effect from the next
    /// call that takes a time; budget already earned is kept.
    mutating func setTargetRate(_ bitsPerSecond: Int) {
        targetRate = max(0, bitsPerSecond)
        if let last = lastUpdateUs {
            pacingRate = rate(at: last)
        } else {
            pacingRate = baseRate
        }
    }

    /// Paces at `bitsPerSecond` itself rather than at the factor × a target: a probe's rate, or
    /// a path whose queue is being drained at its allowed rate.
    mutating func setPacingRate(_ bitsPerSecond: Int) {
        setTargetRate(Int(Double(bitsPerSecond) / configuration.pacingFactor))
    }

    /// Queues one packet; returns false when its ring is full (the caller drops and counts it).
    mutating func enqueue(handle: Int, size: Int, kind: Kind, at nowUs: Int64) -> Bool {
        advance(to: nowUs)
        guard !rings[kind.rawValue].isFull else { return false }
        rings[kind.rawValue].push(handle: handle, size: max(0, size), at: nowUs)
        pacingRate = rate(at: nowUs)
        return true
    }

    /// The next packet to send now, or nil (budget exhausted or nothing queued): FIFO within a
    /// kind, kinds by priority; audio is never held back by the budget (libwebrtc sends audio
    /// immediately) but its size is charged.
    mutating func next(at nowUs: Int64) -> (handle: Int, kind: Kind)? {
        advance(to: nowUs)
        let kind: Kind
        if rings[Kind.audio.rawValue].count > 0 {
            kind = .audio
        } else if budget >= -allowance, let paced = firstPacedKind {
            kind = paced
        } else {
            return nil
        }
        let packet = rings[kind.rawValue].pop()
        budget -= Int64(packet.size) * 8 * Self.microsecondsPerSecond
        pacingRate = rate(at: nowUs)
        return (packet.handle, kind)
    }

    /// When `next` will have something again (for the sender thread's sleep), nil when empty;
    /// `nowUs` when something may go now.
    func nextSendTime(at nowUs: Int64) -> Int64? {
        if rings[Kind.audio.rawValue].count > 0 { return nowUs }
        guard firstPacedKind != nil else { return nil }
        let current = refilled(to: nowUs)
        let allowance = self.allowance
        if current >= -allowance { return nowUs }
        let rate = Int64(self.rate(at: nowUs))
        return nowUs + (-current - allowance + rate - 1) / rate
    }

    var queuedPackets: Int { rings.reduce(0) { $0 + $1.count } }
    var queuedBytes: Int { rings.reduce(0) { $0 + $1.bytes } }

    /// How long the oldest queued packet of any kind has waited at `nowUs`, nil when empty.
    func oldestQueueTimeUs(at nowUs: Int64) -> Int64? {
        let oldest = rings.reduce(nil) { Self.earlier($0, $1.oldestUs) }
        return oldest.map { nowUs - $0 }
    }

    // MARK: - Internals

    private var firstPacedKind: Kind? {
        if rings[Kind.retransmission.rawValue].count > 0 { return .retransmission }
        if rings[Kind.video.rawValue].count > 0 { return .video }
        if rings[Kind.padding.rawValue].count > 0 { return .padding }
        return nil
    }

    private static func earlier(_ a: Int64?, _ b: Int64?) -> Int64? {
        guard let a else { return b }
        guard let b else { return a }
        return min(a, b)
    }

    private var hasPaced: Bool { firstPacedKind != nil }

    /// The debt packets may still leave under, bit·µs per second: the burst allowance at the
    /// current pacing rate, at most `maximumBurstBytes`.
    private var allowance: Int64 {
        guard burstAllowed else { return 0 }
        let byTime = Int64(pacingRate) * configuration.burstAllowanceUs
        return min(byTime, Int64(configuration.maximumBurstBytes) * 8 * Self.microsecondsPerSecond)
    }

    /// factor × target, at least the minimum.
    private var baseRate: Int {
        max(configuration.minimumRate, Int(configuration.pacingFactor * Double(targetRate)))
    }

    /// The base rate, raised when the queued retransmissions and video would not drain before
    /// the oldest of them has waited `maximumQueueTimeUs`.
    private func rate(at nowUs: Int64) -> Int {
        let base = baseRate
        let retransmission = rings[Kind.retransmission.rawValue]
        let video = rings[Kind.video.rawValue]
        guard let oldest = Self.earlier(retransmission.oldestUs, video.oldestUs) else { return base }
        let left = max(Self.minimumDrainTimeUs, configuration.maximumQueueTimeUs - (nowUs - oldest))
        let bits = Int64(retransmission.bytes + video.bytes) * 8
        let needed = Int((bits * Self.microsecondsPerSecond + left - 1) / left)
        return max(base, needed)
    }

    /// The budget at `nowUs`, refilled at the current pacing rate since the last update: capped
    /// at one burst interval while paced packets wait, at zero while none do.
    private func refilled(to nowUs: Int64) -> Int64 {
        guard let last = lastUpdateUs else { return min(budget, 0) }
        let elapsed = min(max(0, nowUs - last), Self.maximumElapsedUs)
        let cap = hasPaced ? Int64(pacingRate) * configuration.burstIntervalUs : 0
        return min(budget + Int64(pacingRate) * elapsed, cap)
    }

    private mutating func advance(to nowUs: Int64) {
        budget = refilled(to: nowUs)
        if let last = lastUpdateUs, nowUs < last { return }
        lastUpdateUs = nowUs
    }
}

extension Pacer {
    /// Charges a packet sent outside the queue (audio, sent at once) against the budget, so
    /// paced video yields the room it took.
    mutating func charge(size: Int, at nowUs: Int64) {
        advance(to: nowUs)
        budget -= Int64(max(0, size)) * 8 * Self.microsecondsPerSecond
    }

    /// Packets of `kind` waiting now.
    func queued(_ kind: Kind) -> Int { rings[kind.rawValue].count }

    /// Forgets every packet of `kind` waiting; how many there were.
    mutating func removeAll(_ kind: Kind) -> Int {
        let count = rings[kind.rawValue].count
        rings[kind.rawValue].head = 0
        rings[kind.rawValue].count = 0
        rings[kind.rawValue].bytes = 0
        return count
    }

    /// Bytes of `kind` waiting now.
    func queuedBytes(_ kind: Kind) -> Int { rings[kind.rawValue].bytes }
}

extension CongestionConfiguration {
    /// The pacer's rate, budget, bursts and queues (`Pacer`, after libwebrtc's `PacingController`).
    public struct Pacing: Sendable, Hashable {
        /// Pacing rate over target rate (libwebrtc kDefaultPaceMultiplier = 2.5).
        public var pacingFactor: Double
        /// The most budget banked while packets wait, µs of the pacing rate (libwebrtc
        /// kDefaultMinPacketLimit = 5 ms, the time between packet bursts).
        public var burstIntervalUs: Int64
        /// How much debt packets may still leave under, µs of the pacing rate (libwebrtc
        /// `send_burst_interval`: 40 ms in Chromium); 0 holds every packet until the debt is paid.
        public var burstAllowanceUs: Int64
        /// The burst allowance at most, bytes (libwebrtc kMaxBurstSize = 63 KB).
        public var maximumBurstBytes: Int
        /// The longest a queued retransmission or video packet should wait before the rate rises
        /// to drain it, µs (libwebrtc kMaxExpectedQueueLength = 2 s).
        public var maximumQueueTimeUs: Int64
        /// Queued packets per kind; each ring is allocated once at init.
        public var capacity: Int
        /// The least pacing rate, bits per second, so a zero or tiny target still drains (this
        /// project's choice: well below 2.5 × the 150 kbit/s AIMD minimum).
        public var minimumRate: Int

        public init(
            pacingFactor: Double = 2.5,
            burstIntervalUs: Int64 = 5_000,
            burstAllowanceUs: Int64 = 0,
            maximumBurstBytes: Int = 63_000,
            maximumQueueTimeUs: Int64 = 2_000_000,
            capacity: Int = 4096,
            minimumRate: Int = 50_000
        ) {
            self.pacingFactor = pacingFactor
            self.burstIntervalUs = burstIntervalUs
            self.burstAllowanceUs = burstAllowanceUs
            self.maximumBurstBytes = maximumBurstBytes
            self.maximumQueueTimeUs = maximumQueueTimeUs
            self.capacity = capacity
            self.minimumRate = minimumRate
        }
    }
}
