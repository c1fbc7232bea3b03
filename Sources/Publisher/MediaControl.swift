import Media

/// What the async side (room presence, status line, signal handlers) and the media thread share:
/// the sender (destinations come and go while media flows), the counters, a key-frame request
/// and the stop flag. Everything else on the media path belongs to the media thread alone.
final class MediaControl: Sendable {
    let sender: Locked<MediaSender>
    let statistics = Locked(PublishStatistics())
    private let keyFrameRequested = Locked(false)
    private let stopRequested = Locked(false)

    init(sender: MediaSender) {
        self.sender = Locked(sender)
    }

    /// The next frame is encoded as an IDR (a new viewer, a player that just bound its ports).
    func requestKeyFrame() { keyFrameRequested.withLock { $0 = true } }

    /// Reads and clears the key-frame request.
    func takeKeyFrameRequest() -> Bool {
        keyFrameRequested.withLock { requested in
            defer { requested = false }
            return requested
        }
    }

    func stop() { stopRequested.withLock { $0 = true } }
    var isStopped: Bool { stopRequested.withLock { $0 } }

    /// The counters with what the sender knows filled in (packets, destinations).
    func snapshot() -> PublishStatistics {
        let (packets, destinations, feedback) = sender.withLock { sender in
            (
                sender.packetsSent, sender.destinations.count,
                Dictionary(sender.destinations.map { ($0.id, $0.feedbackStatistics) }, uniquingKeysWith: { a, _ in a })
            )
        }
        return statistics.withLock {
            $0.packetsSent = packets
            $0.destinations = destinations
            $0.feedback = feedback
            return $0
        }
    }
}
