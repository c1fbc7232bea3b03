import Media
import ProcessSupport

/// Hands ingest events from the server's async stream to the media thread, which blocks on it.
///
/// Video is latest-wins: a frame that arrives while one is still waiting replaces it (counted),
/// so a capture side faster than the encoder costs dropped frames, never memory or latency.
/// Audio is bounded (oldest dropped, counted); every other event (connected, paused, ended) is
/// kept, since losing one would leave the host in the wrong state; there are few of them and the
/// server's own queue already makes their producer wait.
public final class IngestMailbox: @unchecked Sendable {
    private let condition = ConditionLock()
    private var video: IngestVideoEvent?
    /// Audio and control events in arrival order.
    private var others: [IngestEvent] = []
    private var audioQueued = 0
    private var closed = false
    private var videoDropped = 0
    private var audioDropped = 0
    public let audioLimit: Int

    public init(audioLimit: Int = 64) {
        self.audioLimit = audioLimit
        others.reserveCapacity(audioLimit + 16)
    }

    public func put(_ event: IngestEvent) {
        condition.lock()
        defer {
            condition.signal()
            condition.unlock()
        }
        switch event {
        case .video(let frame):
            if video != nil { videoDropped += 1 }
            video = frame
        case .audio:
            if audioQueued >= audioLimit,
                let oldest = others.firstIndex(where: { if case .audio = $0 { true } else { false } })
            {
                others.remove(at: oldest)
                audioQueued -= 1
                audioDropped += 1
            }
            others.append(event)
            audioQueued += 1
        default:
            // A control event goes after the waiting picture: that picture was sent before it
            // (a frame then `paused`), so it must come out first.
            if let frame = video {
                others.append(.video(frame))
                video = nil
            }
            others.append(event)
        }
    }

    /// Pictures replaced before the media thread took them, and audio chunks pushed out.
    public var dropped: (video: Int, audio: Int) {
        condition.lock()
        defer { condition.unlock() }
        return (videoDropped, audioDropped)
    }

    /// No more events will come; `take` returns nil once everything queued is taken.
    public func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }

    /// Outcome of a wait.
    public enum Taken {
        case event(IngestEvent)
        case timedOut
        case closed
    }

    /// The next event, waiting until `deadline` (monotonic ns). Audio and control events keep
    /// their order and come before the waiting picture, so the mixer is fed first; a control
    /// event that arrived after a picture was queued behind it in `put`.
    public func take(until deadline: UInt64) -> Taken {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if !others.isEmpty {
                let event = others.removeFirst()
                if case .audio = event { audioQueued -= 1 }
                return .event(event)
            }
            if let frame = video {
                video = nil
                return .event(.video(frame))
            }
            if closed { return .closed }
            let now = MonotonicClock.now()
            guard now < deadline else { return .timedOut }
            condition.wait(untilMonotonic: deadline)
        }
    }
}
