/// What one `MediaSender.pollFeedback(now:)` asks of the media loop.
public struct FeedbackActions: Sendable, Equatable {
    /// The layers whose next frame must be an IDR, bit i for layer i (PLI/FIR on that layer's
    /// SSRC, through its key-frame limiter; `H264Encoder.requestKeyFrame()`).
    public var keyFrameLayers: UInt32 = 0
    /// A receiver lost layer 0's picture (the only layer without simulcast).
    public var keyFrameRequested: Bool {
        get { keyFrameLayers & 1 != 0 }
        set { keyFrameLayers = newValue ? keyFrameLayers | 1 : keyFrameLayers & ~1 }
    }
    /// The video bitrate the receivers' reports now allow, bits per second, when it moved
    /// enough to act on (`H264Encoder.setBitrate(kbps: target / 1000)`); nil: keep the rate.
    public var targetBitrate: Int?

    public init(keyFrameRequested: Bool = false, targetBitrate: Int? = nil) {
        self.keyFrameRequested = keyFrameRequested
        self.targetBitrate = targetBitrate
    }
}
