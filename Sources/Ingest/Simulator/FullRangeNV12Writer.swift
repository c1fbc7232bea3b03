import Media

/// Turns video-range I420 pictures into full-range NV12 (luma 0…255, interleaved UV), the
/// layout ReplayKit hands a broadcast extension (`420YpCbCr8BiPlanarFullRange`), in planes it
/// owns and reuses, with CoreVideo-style rows padded to 64 bytes.
///
/// The mapping is the inverse of the host's (ITU-R BT.601): Y = (Y' − 16)·255/219 and
/// C = 128 + (C' − 128)·255/224, rounded and clamped, so a picture that goes through both comes
/// back within one code value (values beyond the video range clip to its edges) and the synthetic
/// source's timecode strip stays readable.
public struct FullRangeNV12Writer: Sendable {
    public let width: Int
    public let height: Int
    public let strideY: Int
    public let strideUV: Int
    private(set) var y: [UInt8]
    private(set) var uv: [UInt8]

    static let lumaTable: [UInt8] = (0..<256).map { UInt8(clamping: (($0 - 16) * 255 + 109) / 219) }
    static let chromaTable: [UInt8] = (0..<256).map { c in
        UInt8(clamping: 128 + Int((Double(c - 128) * 255.0 / 224.0).rounded()))
    }

    /// Row alignment CoreVideo uses for pixel buffers.
    public static let rowAlignment = 64

    public init(width: Int, height: Int) throws(MediaError) {
        try VideoFrame.validate(width: width, height: height)
        self.width = width
        self.height = height
        let align = Self.rowAlignment
        strideY = (width + align - 1) / align * align
        strideUV = (2 * ((width + 1) / 2) + align - 1) / align * align
        y = [UInt8](repeating: 0, count: strideY * height)
        uv = [UInt8](repeating: 128, count: strideUV * ((height + 1) / 2))
    }

    /// Converts `frame`, which must be `width`×`height`, into the planes.
    public mutating func write(_ frame: VideoFrame) throws(MediaError) {
        guard frame.width == width, frame.height == height else {
            throw MediaError(
                .invalidDimensions,
                "frame is \(frame.width)x\(frame.height), the writer \(width)x\(height)"
            )
        }
        let (w, h, sy, suv) = (width, height, strideY, strideUV)
        let (cw, ch) = ((width + 1) / 2, (height + 1) / 2)
        Self.lumaTable.withUnsafeBufferPointer { lut in
            frame.y.withUnsafeBufferPointer { src in
                y.withUnsafeMutableBufferPointer { dst in
                    guard let l = lut.baseAddress, let s = src.baseAddress, let d = dst.baseAddress else { return }
                    for row in 0..<h {
                        let srow = s + row * frame.strideY
                        let drow = d + row * sy
                        for col in 0..<w { drow[col] = l[Int(srow[col])] }
                    }
                }
            }
        }
        Self.chromaTable.withUnsafeBufferPointer { lut in
            frame.u.withUnsafeBufferPointer { srcU in
                frame.v.withUnsafeBufferPointer { srcV in
                    uv.withUnsafeMutableBufferPointer { dst in
                        guard let l = lut.baseAddress, let u = srcU.baseAddress, let v = srcV.baseAddress,
                            let d = dst.baseAddress
                        else { return }
                        for row in 0..<ch {
                            let urow = u + row * frame.strideU
                            let vrow = v + row * frame.strideV
                            let drow = d + row * suv
                            for col in 0..<cw {
                                drow[2 * col] = l[Int(urow[col])]
                                drow[2 * col + 1] = l[Int(vrow[col])]
                            }
                        }
                    }
                }
            }
        }
    }

    /// The planes as a frame (no copy while the writer is not written to again).
    public func frame(rotation: Rotation = .none, captureTime: UInt64) throws(MediaError) -> RawVideoFrame {
        try RawVideoFrame(
            format: .nv12FullRange,
            width: width,
            height: height,
            planes: [y, uv],
            strides: [strideY, strideUV],
            rotation: rotation,
            captureTime: captureTime
        )
    }
}
