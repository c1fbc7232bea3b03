/// Pixel layouts a capture process may hand us.
public enum PixelFormat: String, Sendable, CaseIterable, CustomStringConvertible {
    /// Planar Y, U, V (4:2:0), video range.
    case i420
    /// Y plane + interleaved UV plane, luma 0…255 (ReplayKit's `420YpCbCr8BiPlanarFullRange`).
    case nv12FullRange = "nv12-full"
    /// Y plane + interleaved UV plane, luma 16…235.
    case nv12VideoRange = "nv12-video"
    /// 8-bit B, G, R, A in memory order (CoreVideo's `32BGRA`; libyuv calls it "ARGB").
    case bgra

    public var description: String { rawValue }

    /// Number of planes the format carries.
    public var planeCount: Int {
        switch self {
        case .i420: 3
        case .nv12FullRange, .nv12VideoRange: 2
        case .bgra: 1
        }
    }

    /// Minimum stride and row count of each plane for a `width`×`height` picture.
    public func planeGeometry(width: Int, height: Int) -> [(name: String, minStride: Int, rows: Int)] {
        let cw = (width + 1) / 2
        let ch = (height + 1) / 2
        switch self {
        case .i420: return [("Y", width, height), ("U", cw, ch), ("V", cw, ch)]
        case .nv12FullRange, .nv12VideoRange: return [("Y", width, height), ("UV", 2 * cw, ch)]
        case .bgra: return [("BGRA", 4 * width, height)]
        }
    }
}

/// Clockwise rotation to apply to make the picture upright (capture devices report it per frame).
public enum Rotation: Int, Sendable, CaseIterable {
    case none = 0
    case clockwise90 = 90
    case clockwise180 = 180
    case clockwise270 = 270

    /// True when width and height trade places.
    public var swapsAxes: Bool { self == .clockwise90 || self == .clockwise270 }
}

/// A picture as a capture process delivers it, before conversion: any supported layout, planes
/// with their strides, and the rotation that makes it upright.
public struct RawVideoFrame: Sendable {
    public var format: PixelFormat
    public var width: Int
    public var height: Int
    public var planes: [[UInt8]]
    public var strides: [Int]
    public var rotation: Rotation
    /// Capture time in nanoseconds on the monotonic clock.
    public var captureTime: UInt64

    /// Validates plane count, strides and sizes against the format before anything reads them.
    public init(
        format: PixelFormat,
        width: Int,
        height: Int,
        planes: [[UInt8]],
        strides: [Int],
        rotation: Rotation = .none,
        captureTime: UInt64
    ) throws(MediaError) {
        try VideoFrame.validate(width: width, height: height)
        guard planes.count == format.planeCount, strides.count == format.planeCount else {
            throw MediaError(
                .planeTooSmall,
                "\(format) needs \(format.planeCount) planes and strides, got \(planes.count) and \(strides.count)"
            )
        }
        for (i, plane) in format.planeGeometry(width: width, height: height).enumerated() {
            try VideoFrame.checkPlane(
                plane.name,
                bytes: planes[i].count,
                stride: strides[i],
                width: plane.minStride,
                rows: plane.rows
            )
        }
        self.format = format
        self.width = width
        self.height = height
        self.planes = planes
        self.strides = strides
        self.rotation = rotation
        self.captureTime = captureTime
    }

    /// Wraps an I420 frame without copying its planes.
    public init(_ frame: VideoFrame, rotation: Rotation = .none) {
        self.format = .i420
        self.width = frame.width
        self.height = frame.height
        self.planes = [frame.y, frame.u, frame.v]
        self.strides = [frame.strideY, frame.strideU, frame.strideV]
        self.rotation = rotation
        self.captureTime = frame.captureTime
    }

    /// Size once the rotation is applied.
    public var uprightSize: (width: Int, height: Int) {
        rotation.swapsAxes ? (height, width) : (width, height)
    }
}
