/// A raw picture in I420 (planar Y, then U and V at half resolution in both directions), the
/// one layout the encoder takes. Other layouts (NV12, BGRA) are converted into this by
/// `VideoConverter`.
///
/// Planes keep their strides: a row may be longer than the picture is wide, as capture APIs
/// and libyuv's aligned buffers produce.
public struct VideoFrame: Sendable, Equatable {
    public var width: Int
    public var height: Int
    public var y: [UInt8]
    public var u: [UInt8]
    public var v: [UInt8]
    public var strideY: Int
    public var strideU: Int
    public var strideV: Int
    /// Capture time in nanoseconds on the monotonic clock.
    public var captureTime: UInt64

    /// Largest picture accepted anywhere in the pipeline (8K UHD); bounds every allocation
    /// derived from a header.
    public static let maxDimension = 8192

    /// Width and height of the chroma planes: half, rounded up, so odd sizes keep their last column.
    public var chromaWidth: Int { (width + 1) / 2 }
    public var chromaHeight: Int { (height + 1) / 2 }

    /// Checks the geometry and that each plane holds `stride × rows` bytes (the last row may
    /// stop at the picture's width).
    public init(
        width: Int,
        height: Int,
        y: [UInt8],
        strideY: Int,
        u: [UInt8],
        strideU: Int,
        v: [UInt8],
        strideV: Int,
        captureTime: UInt64
    ) throws(MediaError) {
        try Self.validate(width: width, height: height)
        let cw = (width + 1) / 2
        let ch = (height + 1) / 2
        try Self.checkPlane("Y", bytes: y.count, stride: strideY, width: width, rows: height)
        try Self.checkPlane("U", bytes: u.count, stride: strideU, width: cw, rows: ch)
        try Self.checkPlane("V", bytes: v.count, stride: strideV, width: cw, rows: ch)
        self.width = width
        self.height = height
        self.y = y
        self.u = u
        self.v = v
        self.strideY = strideY
        self.strideU = strideU
        self.strideV = strideV
        self.captureTime = captureTime
    }

    /// A tightly packed frame (stride = width) filled with one colour; black by default.
    public init(
        width: Int,
        height: Int,
        captureTime: UInt64 = 0,
        luma: UInt8 = 16,
        chroma: UInt8 = 128
    )
        throws(MediaError)
    {
        try Self.validate(width: width, height: height)
        let cw = (width + 1) / 2
        let ch = (height + 1) / 2
        self.width = width
        self.height = height
        self.y = [UInt8](repeating: luma, count: width * height)
        self.u = [UInt8](repeating: chroma, count: cw * ch)
        self.v = [UInt8](repeating: chroma, count: cw * ch)
        self.strideY = width
        self.strideU = cw
        self.strideV = cw
        self.captureTime = captureTime
    }

    /// Rejects zero, negative and absurd sizes before anything is allocated from them.
    public static func validate(width: Int, height: Int) throws(MediaError) {
        guard width > 0, height > 0 else {
            throw MediaError(.invalidDimensions, "frame size \(width)x\(height) is empty")
        }
        guard width <= maxDimension, height <= maxDimension else {
            throw MediaError(
                .invalidDimensions,
                "frame size \(width)x\(height) exceeds the \(maxDimension)x\(maxDimension) limit"
            )
        }
    }

    /// A plane must hold `stride × (rows − 1) + width` bytes at least, with `stride ≥ width`.
    static func checkPlane(_ name: String, bytes: Int, stride: Int, width: Int, rows: Int) throws(MediaError) {
        guard stride >= width else {
            throw MediaError(.planeTooSmall, "\(name) plane stride \(stride) is less than its width \(width)")
        }
        let needed = stride * (rows - 1) + width
        guard bytes >= needed else {
            throw MediaError(
                .planeTooSmall,
                "\(name) plane has \(bytes) bytes, needs \(needed) for \(width)x\(rows) at stride \(stride)"
            )
        }
    }
}

extension VideoFrame {
    /// For producers whose geometry is correct by construction (tightly packed planes of the
    /// right size); skips validation.
    init(uncheckedWidth width: Int, height: Int, y: [UInt8], u: [UInt8], v: [UInt8], captureTime: UInt64) {
        self.width = width
        self.height = height
        self.y = y
        self.u = u
        self.v = v
        self.strideY = width
        self.strideU = (width + 1) / 2
        self.strideV = (width + 1) / 2
        self.captureTime = captureTime
    }
}
