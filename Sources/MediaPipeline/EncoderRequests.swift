import Media
import ProcessSupport
import SendEngine

/// What receivers and the room ask of one encoder, from other threads, for the media thread to
/// take before its next frame: a key frame (directly, or through the sender's limiter) and a new
/// bitrate. The H.264 encoder's are `MediaControl`'s; each codec group has its own.
public final class EncoderRequests: Sendable {
    private let sender: Locked<MediaSender>
    private let keyFrameRequested = Locked(false)
    private let bitrateRequest = Locked<Int?>(nil)

    init(sender: Locked<MediaSender>) { self.sender = sender }

    /// The next frame is a key frame (a new viewer, a player that just bound its ports).
    public func requestKeyFrame() { keyFrameRequested.withLock { $0 = true } }

    /// A key-frame request from the room (a member's signal, a new viewer), through the
    /// sender's limiter (`MediaSender.requestKeyFrameFromRoom`). True when the next frame will be
    /// a key frame; false when the request was merged into a later one (counted as coalesced;
    /// the sender thread grants it when the interval has passed).
    @discardableResult
    public func requestKeyFrameThroughLimiter() -> Bool {
        let granted = sender.withLock { $0.requestKeyFrameFromRoom(at: MonotonicClock.now()) }
        if granted { requestKeyFrame() }
        return granted
    }

    /// Reads and clears the key-frame request.
    func takeKeyFrameRequest() -> Bool {
        keyFrameRequested.withLock { requested in
            defer { requested = false }
            return requested
        }
    }

    /// Receivers' feedback (or a newcomer's start, `MediaSender.retarget`) moved the target:
    /// the encoder takes it before its next frame.
    public func requestBitrate(kbps: Int) { bitrateRequest.withLock { $0 = kbps } }

    /// Reads and clears the newest bitrate request.
    func takeBitrateRequest() -> Int? {
        bitrateRequest.withLock { request in
            defer { request = nil }
            return request
        }
    }
}
