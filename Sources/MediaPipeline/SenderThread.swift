import Media
import RTP
import SendEngine

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The second media thread: takes encoded pictures and Opus packets from `MediaControl.outbox`
/// in order, packetizes, protects and sends them to every destination through the sender, and
/// answers receivers' feedback (NACKs resent here; picture-loss and bitrate changes handed back
/// to the media thread, which owns the encoder). With a narrow fan-out the media thread sends
/// itself (`MediaControl.deliver`) and this thread only answers feedback.
///
/// It sleeps in one `poll(2)` on the queue's wake-up pipe and every destination's feedback
/// sockets, so a NACK is answered as soon as it arrives and a quiet receiver costs no system
/// call. It wakes on its own only when a held-back key-frame request falls due, and every
/// `housekeepingInterval` besides: each wake-up costs tens of microseconds of CPU on a VM.
///
/// It owns the "frame in → last packet out" timing of the pictures it sends.
public final class SenderThread: @unchecked Sendable {
    private let control: MediaControl
    public private(set) var latency = LatencyHistogram()
    /// The feedback sockets to watch, refreshed from the sender before each wait (subscribers
    /// come and go); capacity kept, so steady state allocates nothing.
    private var watched: [pollfd] = []
    /// The descriptors the last wait found readable.
    private var readable: [Int32] = []
    /// The codec groups (`MediaControl.group(for:)`), refreshed before each wait like
    /// `watched`: their feedback and pacers are served here too.
    private var groups: [CodecGroup] = []
    /// One group's poll set, appended to `watched`.
    private var groupWatched: [pollfd] = []

    /// Longest sleep without running the sender's timers (`defaultHousekeepingInterval`).
    let housekeepingInterval: UInt64

    public init(control: MediaControl, housekeepingInterval: UInt64 = defaultHousekeepingInterval) {
        self.control = control
        self.housekeepingInterval = housekeepingInterval
        watched.reserveCapacity(64)
        readable.reserveCapacity(64)
        groups.reserveCapacity(4)
        groupWatched.reserveCapacity(16)
    }

    /// Longest sleep without running the sender's timers: the bitrate policy is recomputed
    /// (after a destination left, its receiver's cap goes with it) at least this often; the
    /// policy otherwise moves with feedback, which wakes the thread itself.
    public static let defaultHousekeepingInterval: UInt64 = 500_000_000

    /// Runs until the queue is closed and drained; throws what the sender refused (a bug: the
    /// encoder's output is checked before it gets here).
    public func run() throws {
        let queue = control.outbox
        var nextHousekeeping: UInt64 = 0
        while true {
            var now = MonotonicClock.now()
            control.groups(into: &groups)
            // What the pacers allow now goes first; then their next instant bounds the sleep.
            var timer = control.sender.withLock { sender in
                sender.sendPaced(now: now)
                return sender.nextTimerDeadline
            }
            for group in groups {
                let due = group.sender.withLock { sender in
                    sender.sendPaced(now: now)
                    return sender.nextTimerDeadline
                }
                if let due { timer = min(timer ?? due, due) }
            }
            if now >= nextHousekeeping || timer.map({ now >= $0 }) == true {
                serviceFeedback(now: now, readable: [])
                nextHousekeeping = now + housekeepingInterval
                now = MonotonicClock.now()
            }
            var deadline = control.sender.withLock { sender in
                sender.feedbackPollSet(into: &watched)
                let paced = sender.nextPacedDeadline ?? .max
                return min(sender.nextTimerDeadline ?? .max, nextHousekeeping, paced)
            }
            for group in groups {
                deadline = group.sender.withLock { sender in
                    sender.feedbackPollSet(into: &groupWatched)
                    let paced = sender.nextPacedDeadline ?? .max
                    return min(sender.nextTimerDeadline ?? .max, deadline, paced)
                }
                watched.append(contentsOf: groupWatched)
            }
            // At least a millisecond ahead: a timer that did not clear cannot spin the loop.
            deadline = max(deadline, now + 1_000_000)
            switch queue.next(waitingUntil: deadline, watching: &watched) {
            case .finished: return
            case .timedOut, .woken: continue
            case .feedback:
                serviceReadableFeedback()
                continue
            case .ready: break
            }
            try queue.withFront { slot in
                if let unit = slot.video {
                    // Feedback first, so a NACK or PLI that came in while the queue was busy is
                    // answered before this frame's packets (one poll with no wait).
                    if pollWithoutWaiting() { serviceReadableFeedback() }
                    try control.sender.withLock { try $0.send(video: unit) }
                    latency.record(nanoseconds: MonotonicClock.now() &- slot.receivedAt)
                } else {
                    try control.sender.withLock { try $0.send(audio: slot.audio) }
                }
            }
            queue.removeFront()
        }
    }

    /// Whether any watched socket has a datagram now.
    private func pollWithoutWaiting() -> Bool {
        guard !watched.isEmpty else { return false }
        for index in watched.indices { watched[index].revents = 0 }
        return poll(&watched, nfds_t(watched.count), 0) > 0
    }

    /// Reads the sockets `watched` marks readable, and acts on what came.
    private func serviceReadableFeedback() {
        readable.removeAll(keepingCapacity: true)
        for entry in watched where entry.revents != 0 { readable.append(entry.fd) }
        serviceFeedback(now: MonotonicClock.now(), readable: readable)
    }

    /// Reads what receivers sent back (RR, NACK, PLI/FIR, REMB; `MediaSender.pollFeedback`) on
    /// the `readable` sockets: the sender resends what was NACKed; a picture loss and a new
    /// bitrate go to the media thread, which applies them before its next encode.
    /// Each codec group's feedback goes to that group's encoder requests.
    private func serviceFeedback(now: UInt64, readable: [Int32]) {
        let actions = control.sender.withLock { $0.pollFeedback(now: now, readable: readable) }
        if actions.keyFrameLayers != 0 { control.requestKeyFrames(layers: actions.keyFrameLayers) }
        if let target = actions.targetBitrate { control.requestBitrate(kbps: target / 1000) }
        for group in groups {
            let actions = group.sender.withLock { $0.pollFeedback(now: now, readable: readable) }
            if actions.keyFrameRequested { group.requests.requestKeyFrame() }
            if let target = actions.targetBitrate { group.requests.requestBitrate(kbps: target / 1000) }
        }
    }
}
