/// Turns picture loss indications (RFC 4585 §6.3.1), full intra requests (RFC 5104 §4.3.1) and
/// key-frame requests that came through signaling (a room member's `{"request": "keyframe"}`, a
/// new viewer) from any number of receivers into at most one key frame per `minimumInterval`.
/// Signaling is one more way for anyone in the room to ask, and was once the way around the
/// limit: 198 signals made 198 key frames in 10 s.
///
/// An IDR costs several times a normal frame; a receiver that lost one sends PLI every few
/// hundred milliseconds until it sees the next, and a room of receivers multiplies that. So:
///
/// - a request when no key frame went out within `minimumInterval` is granted at once;
/// - a request inside the interval is not dropped but coalesced: it is granted once the
///   interval has passed (`due(at:)`), unless a key frame has gone out after it meanwhile
///   (`recordKeyFrame(at:)`), which answers it. A storm of requests thus yields one key frame
///   per interval, and a receiver whose request came just after an IDR (which it may have
///   lost) still gets the next one;
/// - RFC 5104 §4.3.1.2: a FIR repeated with the same command sequence number is a
///   retransmission of the same request, not a new one; only a new number counts. The last
///   number is remembered per requester (at most `maximumRequesters`, oldest replaced).
///
/// Times are monotonic nanoseconds. No allocation after init.
public struct KeyFrameRequestLimiter: Sendable {
    public static let defaultInterval: UInt64 = 500_000_000
    public static let maximumRequesters = 64

    public struct Statistics: Sendable, Hashable, Codable {
        /// PLIs, FIRs (counted once per entry addressed to us) and signaled requests received.
        public var requests = 0
        /// Of `requests`, those that came through signaling rather than RTCP.
        public var signaled = 0
        /// FIRs that repeated the requester's previous sequence number.
        public var duplicateFIRs = 0
        /// Requests that arrived inside the interval and were merged into a later key frame.
        public var coalesced = 0
        /// Key frames asked of the encoder.
        public var granted = 0

        public init(requests: Int = 0, signaled: Int = 0, duplicateFIRs: Int = 0, coalesced: Int = 0, granted: Int = 0)
        {
            self.requests = requests
            self.signaled = signaled
            self.duplicateFIRs = duplicateFIRs
            self.coalesced = coalesced
            self.granted = granted
        }
    }

    public let minimumInterval: UInt64
    public private(set) var statistics = Statistics()
    /// A coalesced request waits for the interval to pass.
    public private(set) var isPending = false
    private var lastKeyFrame: UInt64?
    private var requesters: [UInt64] = []
    private var firSequenceNumbers: [UInt8] = []
    private var nextReplaced = 0

    public init(minimumInterval: UInt64 = defaultInterval) {
        self.minimumInterval = minimumInterval
        requesters.reserveCapacity(Self.maximumRequesters)
        firSequenceNumbers.reserveCapacity(Self.maximumRequesters)
    }

    /// A PLI arrived at `now`; true when a key frame should be produced now.
    public mutating func pictureLoss(at now: UInt64) -> Bool {
        statistics.requests += 1
        return request(at: now)
    }

    /// A key-frame request that came through signaling arrived at `now`: handled as a PLI (a
    /// signal carries no sequence number to tell a repeat from a new request). True when a key
    /// frame should be produced now; false when it was coalesced (counted) into a later one.
    public mutating func signaledRequest(at now: UInt64) -> Bool {
        statistics.requests += 1
        statistics.signaled += 1
        return request(at: now)
    }

    /// A FIR entry for our stream with command sequence number `sequenceNumber` arrived from
    /// `requester` (any stable key: e.g. a destination number and the FIR's sender SSRC).
    /// True when a key frame should be produced now.
    public mutating func fullIntraRequest(requester: UInt64, sequenceNumber: UInt8, at now: UInt64) -> Bool {
        statistics.requests += 1
        if let index = requesters.firstIndex(of: requester) {
            guard firSequenceNumbers[index] != sequenceNumber else {
                statistics.duplicateFIRs += 1
                return false
            }
            firSequenceNumbers[index] = sequenceNumber
        } else if requesters.count < Self.maximumRequesters {
            requesters.append(requester)
            firSequenceNumbers.append(sequenceNumber)
        } else {
            requesters[nextReplaced] = requester
            firSequenceNumbers[nextReplaced] = sequenceNumber
            nextReplaced = (nextReplaced + 1) % Self.maximumRequesters
        }
        return request(at: now)
    }

    /// When the coalesced request falls due (`due(at:)` turns true), or nil with none waiting:
    /// a caller that sleeps between feedback can wake for it instead of polling.
    public var pendingDueTime: UInt64? {
        guard isPending, let last = lastKeyFrame else { return nil }
        return last &+ minimumInterval
    }

    /// True when a coalesced request has become due at `now` (call it by `pendingDueTime`).
    public mutating func due(at now: UInt64) -> Bool {
        guard isPending, isOutsideInterval(now) else { return false }
        isPending = false
        grant(at: now)
        return true
    }

    /// A key frame went out at `now` (requested or periodic): it answers every request
    /// before it and starts a new interval.
    public mutating func recordKeyFrame(at now: UInt64) {
        lastKeyFrame = now
        isPending = false
    }

    private mutating func request(at now: UInt64) -> Bool {
        guard isOutsideInterval(now) else {
            statistics.coalesced += 1
            isPending = true
            return false
        }
        isPending = false
        grant(at: now)
        return true
    }

    private mutating func grant(at now: UInt64) {
        statistics.granted += 1
        lastKeyFrame = now
    }

    private func isOutsideInterval(_ now: UInt64) -> Bool {
        guard let last = lastKeyFrame, now >= last else { return true }
        return now - last >= minimumInterval
    }
}
