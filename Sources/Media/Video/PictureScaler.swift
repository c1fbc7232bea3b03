import CYUV

/// Scales converted pictures down for a lower simulcast layer (libyuv's box filter, its best
/// quality: text stays legible at half size) into planes it keeps, so a steady size allocates
/// nothing: the frame it returns shares those planes until the next call.
public final class PictureScaler {
    private var planes = PlaneSet()

    public init() {}

    /// `frame` at `width`×`height` (even, no larger than the frame).
    public func scale(_ frame: VideoFrame, width: Int, height: Int) throws(MediaError) -> VideoFrame {
        guard width <= frame.width, height <= frame.height, width % 2 == 0, height % 2 == 0, width > 0, height > 0
        else {
            throw MediaError(
                .invalidDimensions,
                "cannot scale a \(frame.width)x\(frame.height) picture down to \(width)x\(height)"
            )
        }
        planes.resize(width: width, height: height)
        var status: Int32 = 0
        frame.y.withUnsafeBufferPointer { py in
            frame.u.withUnsafeBufferPointer { pu in
                frame.v.withUnsafeBufferPointer { pv in
                    planes.withPointers(x: 0, y: 0) { dy, dsy, du, dsu, dv, dsv in
                        status = I420Scale(
                            py.baseAddress,
                            Int32(frame.strideY),
                            pu.baseAddress,
                            Int32(frame.strideU),
                            pv.baseAddress,
                            Int32(frame.strideV),
                            Int32(frame.width),
                            Int32(frame.height),
                            dy,
                            dsy,
                            du,
                            dsu,
                            dv,
                            dsv,
                            Int32(width),
                            Int32(height),
                            kFilterBox
                        )
                    }
                }
            }
        }
        guard status == 0 else {
            throw MediaError(.library, "libyuv I420Scale \(frame.width)x\(frame.height) → \(width)x\(height) failed")
        }
        return try planes.frame(captureTime: frame.captureTime)
    }
}
