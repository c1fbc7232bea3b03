import CYUV

/// Three tightly packed I420 planes the converter writes into; reused between frames when held
/// as a stage, so steady-state conversion allocates only its output.
struct PlaneSet {
    private(set) var width = 0
    private(set) var height = 0
    private var y: [UInt8] = []
    private var u: [UInt8] = []
    private var v: [UInt8] = []

    init() {}

    init(width: Int, height: Int) {
        resize(width: width, height: height)
    }

    var chromaWidth: Int { (width + 1) / 2 }
    var chromaHeight: Int { (height + 1) / 2 }

    /// Changes the geometry; storage only grows, so a steady size never reallocates.
    mutating func resize(width: Int, height: Int) {
        self.width = width
        self.height = height
        let luma = width * height
        let chroma = ((width + 1) / 2) * ((height + 1) / 2)
        if y.count != luma { y = [UInt8](repeating: 0, count: luma) }
        if u.count != chroma {
            u = [UInt8](repeating: 0, count: chroma)
            v = [UInt8](repeating: 0, count: chroma)
        }
    }

    /// Video-range black: Y 16, U and V 128.
    mutating func fillBlack() {
        y.withUnsafeMutableBufferPointer { $0.update(repeating: 16) }
        u.withUnsafeMutableBufferPointer { $0.update(repeating: 128) }
        v.withUnsafeMutableBufferPointer { $0.update(repeating: 128) }
    }

    /// Hands out plane pointers offset to (x, y), which must be even so chroma stays aligned.
    mutating func withPointers(
        x: Int,
        y yOffset: Int,
        _ body: (
            UnsafeMutablePointer<UInt8>?, Int32, UnsafeMutablePointer<UInt8>?, Int32,
            UnsafeMutablePointer<UInt8>?, Int32
        ) -> Void
    ) {
        let sy = width
        let sc = chromaWidth
        y.withUnsafeMutableBufferPointer { py in
            u.withUnsafeMutableBufferPointer { pu in
                v.withUnsafeMutableBufferPointer { pv in
                    body(
                        py.baseAddress.map { $0 + yOffset * sy + x },
                        Int32(sy),
                        pu.baseAddress.map { $0 + (yOffset / 2) * sc + x / 2 },
                        Int32(sc),
                        pv.baseAddress.map { $0 + (yOffset / 2) * sc + x / 2 },
                        Int32(sc)
                    )
                }
            }
        }
    }

    /// Box-filter scale (libyuv's best quality) of the whole set into a rectangle of `dest`.
    func scale(into dest: inout PlaneSet, x: Int, y yOffset: Int, width w: Int, height h: Int) {
        let sw = Int32(width)
        let sh = Int32(height)
        let sc = Int32(chromaWidth)
        y.withUnsafeBufferPointer { py in
            u.withUnsafeBufferPointer { pu in
                v.withUnsafeBufferPointer { pv in
                    dest.withPointers(x: x, y: yOffset) { dy, dsy, du, dsu, dv, dsv in
                        _ = I420Scale(
                            py.baseAddress,
                            sw,
                            pu.baseAddress,
                            sc,
                            pv.baseAddress,
                            sc,
                            sw,
                            sh,
                            dy,
                            dsy,
                            du,
                            dsu,
                            dv,
                            dsv,
                            Int32(w),
                            Int32(h),
                            kFilterBox
                        )
                    }
                }
            }
        }
    }

    func frame(captureTime: UInt64) throws(MediaError) -> VideoFrame {
        try VideoFrame(
            width: width,
            height: height,
            y: y,
            strideY: width,
            u: u,
            strideU: chromaWidth,
            v: v,
            strideV: chromaWidth,
            captureTime: captureTime
        )
    }

    func raw(rotation: Rotation, captureTime: UInt64) throws(MediaError) -> RawVideoFrame {
        try RawVideoFrame(
            format: .i420,
            width: width,
            height: height,
            planes: [y, u, v],
            strides: [width, chromaWidth, chromaWidth],
            rotation: rotation,
            captureTime: captureTime
        )
    }
}
