import MediaPipeline
import ProcessSupport
import SDP
import SendEngine

/// What the sessions (room, WebRTC viewers, WHIP, the status line) share with the media
/// threads: the media side's `MediaControl` (sender, send queue, key-frame and stop requests)
/// and the sessions' own counters, which a snapshot joins to the media threads' for the
/// status line.
final class SessionControl: Sendable {
    let media: MediaControl
    /// The sessions' counters; `media` in it is the copy the last `snapshot()` took.
    let statistics = Locked(PublishStatistics())

    init(media: MediaControl) { self.media = media }

    var sender: Locked<MediaSender> { media.sender }
    var outbox: SendQueue { media.outbox }
    var isStopped: Bool { media.isStopped }

    func requestKeyFrame() { media.requestKeyFrame() }

    /// A key frame for a new viewer, through the sender's limiter; true when one was asked for.
    @discardableResult
    func requestKeyFrameThroughLimiter() -> Bool { media.requestKeyFrameThroughLimiter() }

    func stop() { media.stop() }

    /// The group that sends `codec` (VP8, VP9) to the viewers without H.264: made on the first
    /// such viewer, with a sender configured as the main one and on its clock origin, so every
    /// stream shares one timeline.
    func group(for codec: VideoCodec) throws -> CodecGroup {
        try media.group(for: codec) {
            var (configuration, origin) = sender.withLock { ($0.configuration, $0.videoClock.origin) }
            configuration.videoCodec = codec
            return try MediaSender(configuration: configuration, origin: origin)
        }
    }

    /// Removes the destination `id` from whichever sender holds it (the main one, a group's).
    @discardableResult
    func removeDestination(id: String, reason: String?) -> Bool {
        if sender.withLock({ $0.removeDestination(id: id, reason: reason) }) { return true }
        for group in media.groups where group.sender.withLock({ $0.removeDestination(id: id, reason: reason) }) {
            return true
        }
        return false
    }

    /// The media threads' counters now, with the sessions'.
    func snapshot() -> PublishStatistics {
        let media = media.snapshot()
        return statistics.withLock {
            $0.media = media
            return $0
        }
    }
}
