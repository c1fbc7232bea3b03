import CYUV

/// Turns whatever the capture side delivers (NV12 in either range, I420, BGRA; rotated or not;
/// any size) into upright I420 at the encoder's size, through libyuv.
///
/// Aspect ratio is kept: the picture is scaled to fit inside the output size and, when the
/// shapes differ (a phone turned mid-broadcast, for instance), centred on black bars rather than
/// stretched. Each call allocates only the output frame; intermediate planes are reused.
public final class VideoConverter {
    /// The box a stream's size is chosen in: long side × short side, oriented like the source.
    public struct BoundingBox: Sendable, Equatable {
        public var longSide: Int
        public var shortSide: Int
        public init(longSide: Int, shortSide: Int) {
            self.longSide = longSide
            self.shortSide = shortSide
        }
        /// 1280x720 landscape / 720x1280 portrait: the seeds keep screen share at or under 720p.
        public static let hd720 = BoundingBox(longSide: 1280, shortSide: 720)
    }

    /// Scales `width`×`height` down (never up) to fit the box oriented like the picture, keeping the
    /// aspect ratio, with even dimensions as 4:2:0 encoding requires.
    public static func fit(width: Int, height: Int, into box: BoundingBox = .hd720) -> (width: Int, height: Int) {
        let (maxW, maxH) = width >= height ? (box.longSide, box.shortSide) : (box.shortSide, box.longSide)
        return fitInside(width: width, height: height, maxWidth: maxW, maxHeight: maxH, upscale: false)
    }

    /// The even size closest to the picture's aspect ratio that fits `maxWidth`×`maxHeight`
    /// (both even). Choosing a stream's size never upscales; filling a fixed output does.
    static func fitInside(
        width: Int,
        height: Int,
        maxWidth: Int,
        maxHeight: Int,
        upscale: Bool = true
    ) -> (width: Int, height: Int) {
        var scale = min(Double(maxWidth) / Double(width), Double(maxHeight) / Double(height))
        if !upscale { scale = min(scale, 1) }
        let even = { (v: Double, limit: Int) in min(limit & ~1, max(2, 2 * Int((v / 2).rounded()))) }
        let w = even(Double(width) * scale, upscale ? maxWidth : min(maxWidth, width))
        let h = even(Double(height) * scale, upscale ? maxHeight : min(maxHeight, height))
        return (w, h)
    }

    private var stage = PlaneSet()

    public init() {}

    /// Converts `frame` to upright I420 of exactly `width`×`height` (both even).
    public func convert(_ frame: RawVideoFrame, width: Int, height: Int) throws(MediaError) -> VideoFrame {
        try VideoFrame.validate(width: width, height: height)
        guard width % 2 == 0, height % 2 == 0 else {
            throw MediaError(.invalidDimensions, "output size \(width)x\(height) must be even")
        }
        let upright = frame.uprightSize
        let inner = Self.fitInside(width: upright.width, height: upright.height, maxWidth: width, maxHeight: height)
        var output = PlaneSet(width: width, height: height)
        if inner.width == width && inner.height == height {
            if upright.width == width && upright.height == height {
                try toUprightI420(frame, into: &output, x: 0, y: 0)  // One pass, no scaling.
            } else {
                try toUprightI420(frame, into: &stage)
                stage.scale(into: &output, x: 0, y: 0, width: width, height: height)
            }
        } else {
            output.fillBlack()
            let x = ((width - inner.width) / 2) & ~1
            let y = ((height - inner.height) / 2) & ~1
            if upright.width == inner.width && upright.height == inner.height {
                try toUprightI420(frame, into: &output, x: x, y: y)
            } else {
                try toUprightI420(frame, into: &stage)
                stage.scale(into: &output, x: x, y: y, width: inner.width, height: inner.height)
            }
        }
        return try output.frame(captureTime: frame.captureTime)
    }

    /// Converts and rotates `frame` into `dest` at (x, y); when `dest` is the reusable stage it is
    /// first resized to the upright picture.
    private func toUprightI420(_ frame: RawVideoFrame, into dest: inout PlaneSet) throws(MediaError) {
        let upright = frame.uprightSize
        dest.resize(width: upright.width, height: upright.height)
        try toUprightI420(frame, into: &dest, x: 0, y: 0)
    }

    private func toUprightI420(_ frame: RawVideoFrame, into dest: inout PlaneSet, x: Int, y: Int) throws(MediaError) {
        let w = Int32(frame.width)
        let h = Int32(frame.height)
        let s = frame.strides.map { Int32($0) }
        let mode = RotationMode(UInt32(frame.rotation.rawValue))
        var status: Int32 = 0
        switch frame.format {
        case .i420:
            dest.withPointers(x: x, y: y) { dy, sy, du, su, dv, sv in
                frame.planes[0].withUnsafeBufferPointer { py in
                    frame.planes[1].withUnsafeBufferPointer { pu in
                        frame.planes[2].withUnsafeBufferPointer { pv in
                            status = I420Rotate(
                                py.baseAddress,
                                s[0],
                                pu.baseAddress,
                                s[1],
                                pv.baseAddress,
                                s[2],
                                dy,
                                sy,
                                du,
                                su,
                                dv,
                                sv,
                                w,
                                h,
                                mode
                            )
                        }
                    }
                }
            }
        case .nv12VideoRange:
            dest.withPointers(x: x, y: y) { dy, sy, du, su, dv, sv in
                frame.planes[0].withUnsafeBufferPointer { py in
                    frame.planes[1].withUnsafeBufferPointer { puv in
                        status = NV12ToI420Rotate(
                            py.baseAddress,
                            s[0],
                            puv.baseAddress,
                            s[1],
                            dy,
                            sy,
                            du,
                            su,
                            dv,
                            sv,
                            w,
                            h,
                            mode
                        )
                    }
                }
            }
        case .nv12FullRange:
            try convertThenRotate(frame, into: &dest, x: x, y: y) { dy, sy, du, su, dv, sv in
                FullRangeNV12.convert(frame, dy, sy, du, su, dv, sv)
                return 0
            }
        case .bgra:
            try convertThenRotate(frame, into: &dest, x: x, y: y) { dy, sy, du, su, dv, sv in
                frame.planes[0].withUnsafeBufferPointer { p in
                    ARGBToI420(p.baseAddress, s[0], dy, sy, du, su, dv, sv, w, h)
                }
            }
        }
        guard status == 0 else {
            throw MediaError(.library, "libyuv failed converting \(frame.format) \(frame.width)x\(frame.height)")
        }
    }

    typealias PlaneWriter = (
        UnsafeMutablePointer<UInt8>?, Int32, UnsafeMutablePointer<UInt8>?, Int32, UnsafeMutablePointer<UInt8>?, Int32
    ) -> Int32

    /// For layouts libyuv cannot convert and rotate in one call: convert straight into `dest`
    /// when upright, else into a temporary I420 frame that the I420 path then rotates.
    private func convertThenRotate(
        _ frame: RawVideoFrame,
        into dest: inout PlaneSet,
        x: Int,
        y: Int,
        _ convert: PlaneWriter
    ) throws(MediaError) {
        var status: Int32 = 0
        if frame.rotation == .none {
            dest.withPointers(x: x, y: y) { status = convert($0, $1, $2, $3, $4, $5) }
        } else {
            var unrotated = PlaneSet(width: frame.width, height: frame.height)
            unrotated.withPointers(x: 0, y: 0) { status = convert($0, $1, $2, $3, $4, $5) }
            if status == 0 {
                let raw = try unrotated.raw(rotation: frame.rotation, captureTime: frame.captureTime)
                try toUprightI420(raw, into: &dest, x: x, y: y)
            }
        }
        guard status == 0 else {
            throw MediaError(.library, "libyuv failed converting \(frame.format) \(frame.width)x\(frame.height)")
        }
    }
}
