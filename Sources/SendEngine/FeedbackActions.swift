/// What one `MediaSender.pollFeedback(now:)` asks of the media loop.
public struct FeedbackActions: Sendable, Equatable {
    /// A receiver lost the picture (PLI/FIR, through the key-frame limiter): make the next
    /// frame an IDR (`H264Encoder.requestKeyFrame()`).
    public var keyFrameRequested = false
    /// The video bitrate the receivers' reports now allow, bits per second, when it moved
    /// enough to act on (`H264Encoder.setBitrate(kbps: target / 1000)`); nil: keep the rate.
    public var targetBitrate: Int?

    public init(keyFrameRequested: Bool = false, targetBitrate: Int? = nil) {
        self.keyFrameRequested = keyFrameRequested
        self.targetBitrate = targetBitrate
    }
}
