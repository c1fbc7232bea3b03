import Media
import RTP

/// The second media thread: takes encoded pictures and Opus packets from `MediaControl.outbox`
/// in order, packetizes, protects and sends them to every destination through the sender, and
/// answers receivers' feedback (NACKs resent here; picture-loss and bitrate changes handed back
/// to the media thread, which owns the encoder).
///
/// It owns the "frame in → last packet out" timing: a picture's last packet leaves here.
final class SenderThread: @unchecked Sendable {
    private let control: MediaControl
    private(set) var latency = LatencyHistogram()

    init(control: MediaControl) {
        self.control = control
    }

    /// Longest wait between two looks at the receivers' feedback, so a NACK waits at most
    /// ~10 ms for its answer.
    static let feedbackSlice: UInt64 = 10_000_000

    /// Runs until the queue is closed and drained; throws what the sender refused (a bug: the
    /// encoder's output is checked before it gets here).
    func run() throws {
        let queue = control.outbox
        var nextPoll: UInt64 = 0
        while true {
            let now = MonotonicClock.now()
            if now >= nextPoll {
                serviceFeedback(now: now)
                nextPoll = now + Self.feedbackSlice
            }
            switch queue.next(waitingUntil: nextPoll) {
            case .finished: return
            case .timedOut: continue
            case .ready: break
            }
            try queue.withFront { slot in
                if let unit = slot.video {
                    // Feedback first, so a NACK or PLI that came in is answered before this
                    // frame's packets.
                    serviceFeedback(now: MonotonicClock.now())
                    try control.sender.withLock { try $0.send(video: unit) }
                    latency.record(nanoseconds: MonotonicClock.now() &- slot.receivedAt)
                } else {
                    try control.sender.withLock { try $0.send(audio: slot.audio) }
                }
            }
            queue.removeFront()
        }
    }

    /// Reads what receivers sent back (RR, NACK, PLI/FIR, REMB; `MediaSender.pollFeedback`):
    /// the sender resends what was NACKed; a picture loss and a new bitrate go to the media
    /// thread, which applies them before its next encode.
    private func serviceFeedback(now: UInt64) {
        let actions = control.sender.withLock { $0.pollFeedback(now: now) }
        if actions.keyFrameRequested { control.requestKeyFrame() }
        if let target = actions.targetBitrate { control.requestBitrate(kbps: target / 1000) }
    }
}
