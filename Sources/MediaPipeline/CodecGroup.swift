import Media
import ProcessSupport
import SDP
import SendEngine

/// The viewers that take another codec than H.264 (VP8 or VP9: a browser without H.264), with
/// the stream they share: a sender of their own (its SSRCs, sequence numbers, NACK history, RTX,
/// key-frame limiter and bitrate policy), fed by a second encoder on the media thread from the
/// same converted picture as H.264 (`VideoPath`). The media thread opens that encoder when the
/// group has a destination and closes it when the last one leaves, so a group nobody watches
/// costs nothing. Its feedback is answered by the sender thread, as the main sender's is.
public final class CodecGroup: Sendable {
    public let codec: VideoCodec
    public let sender: Locked<MediaSender>
    private let keyFrameRequested = Locked(false)
    private let bitrateRequest = Locked<Int?>(nil)

    init(codec: VideoCodec, sender: MediaSender) {
        self.codec = codec
        self.sender = Locked(sender)
    }

    /// The group's next picture is a key frame (a viewer joined, or asked with PLI/FIR).
    public func requestKeyFrame() { keyFrameRequested.withLock { $0 = true } }

    /// A room's request, through this group's limiter (as `MediaControl.requestKeyFrameThroughLimiter`).
    @discardableResult
    public func requestKeyFrameThroughLimiter() -> Bool {
        let granted = sender.withLock { $0.requestKeyFrameFromRoom(at: MonotonicClock.now()) }
        if granted { requestKeyFrame() }
        return granted
    }

    func takeKeyFrameRequest() -> Bool {
        keyFrameRequested.withLock { requested in
            defer { requested = false }
            return requested
        }
    }

    /// The group's viewers' feedback moved its target: its encoder takes it before its next frame.
    func requestBitrate(kbps: Int) { bitrateRequest.withLock { $0 = kbps } }

    func takeBitrateRequest() -> Int? {
        bitrateRequest.withLock { request in
            defer { request = nil }
            return request
        }
    }
}
