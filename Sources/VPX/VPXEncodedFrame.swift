/// One coded picture from `VPXEncoder`: the VP8 frame or VP9 frame as libvpx wrote it, ready for
/// `VP8Payloader` or `VP9Payloader` (which take `data` and, for VP9, `isKeyFrame`, `width` and
/// `height` for the scalability structure of key frames).
///
/// `data` shares its storage with the encoder's output buffer: a caller that lets go of the frame
/// before the next `encode` (the inline send path) costs no allocation; one that keeps it (the
/// send queue) keeps its bytes, and the encoder's next frame goes into fresh storage.
public struct VPXEncodedFrame: Sendable, Equatable {
    public var codec: VPXEncoder.Codec
    public var data: [UInt8]
    /// A key frame (VP8 key frame, VP9 KEY_FRAME): decodable with nothing before it.
    public var isKeyFrame: Bool
    /// libvpx says no later frame references this one (`VPX_FRAME_IS_DROPPABLE`).
    public var isDroppable: Bool
    /// The presentation time the frame was encoded with, in 90 kHz units.
    public var pts90k: Int64
    /// Capture time of the picture, nanoseconds on the monotonic clock.
    public var captureTime: UInt64
    public var width: Int
    public var height: Int
    /// The frame's quantizer on libvpx's 0...63 scale (`VP8E_GET_LAST_QUANTIZER_64`), the scale
    /// of `rc_min_quantizer`/`rc_max_quantizer`; nil if libvpx did not report one.
    public var quantizer: Int?
    /// Spatial and temporal layer of the frame. One layer of each is all `VPXEncoder` makes, so
    /// both are 0; they are here so a payloader that writes layer indices has them at hand.
    public var spatialLayer: Int
    public var temporalLayer: Int

    public init(
        codec: VPXEncoder.Codec,
        data: [UInt8],
        isKeyFrame: Bool,
        isDroppable: Bool = false,
        pts90k: Int64,
        captureTime: UInt64,
        width: Int,
        height: Int,
        quantizer: Int? = nil,
        spatialLayer: Int = 0,
        temporalLayer: Int = 0
    ) {
        self.codec = codec
        self.data = data
        self.isKeyFrame = isKeyFrame
        self.isDroppable = isDroppable
        self.pts90k = pts90k
        self.captureTime = captureTime
        self.width = width
        self.height = height
        self.quantizer = quantizer
        self.spatialLayer = spatialLayer
        self.temporalLayer = temporalLayer
    }
}
