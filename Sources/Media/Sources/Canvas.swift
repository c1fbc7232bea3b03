/// A colour in video-range Y′CbCr.
struct YUV {
    var y: UInt8
    var u: UInt8
    var v: UInt8
    static let black = YUV(y: 16, u: 128, v: 128)
    static let white = YUV(y: 235, u: 128, v: 128)
}

/// Minimal drawing on I420 planes for the synthetic source: clipped rectangle fills.
struct Canvas {
    var width: Int
    var height: Int
    var y: [UInt8]
    var u: [UInt8]
    var v: [UInt8]

    init(width: Int, height: Int, fill: YUV) {
        self.width = width
        self.height = height
        let cw = (width + 1) / 2
        let ch = (height + 1) / 2
        y = [UInt8](repeating: fill.y, count: width * height)
        u = [UInt8](repeating: fill.u, count: cw * ch)
        v = [UInt8](repeating: fill.v, count: cw * ch)
    }

    var chromaWidth: Int { (width + 1) / 2 }

    /// Fills a rectangle, clipped to the picture; chroma covers the rectangle's 2×2 cells.
    mutating func fill(x: Int, y top: Int, w: Int, h: Int, _ color: YUV) {
        let x0 = max(0, x)
        let y0 = max(0, top)
        let x1 = min(width, x + w)
        let y1 = min(height, top + h)
        guard x1 > x0, y1 > y0 else { return }
        let stride = width
        y.withUnsafeMutableBufferPointer { p in
            guard let base = p.baseAddress else { return }
            for row in y0..<y1 { (base + row * stride + x0).update(repeating: color.y, count: x1 - x0) }
        }
        let cx0 = x0 / 2
        let cx1 = (x1 + 1) / 2
        let cy0 = y0 / 2
        let cy1 = (y1 + 1) / 2
        let cstride = chromaWidth
        for (plane, value) in [(0, color.u), (1, color.v)] {
            let fillRows: (UnsafeMutablePointer<UInt8>) -> Void = { base in
                for row in cy0..<cy1 { (base + row * cstride + cx0).update(repeating: value, count: cx1 - cx0) }
            }
            if plane == 0 {
                u.withUnsafeMutableBufferPointer { if let b = $0.baseAddress { fillRows(b) } }
            } else {
                v.withUnsafeMutableBufferPointer { if let b = $0.baseAddress { fillRows(b) } }
            }
        }
    }

    /// Text-like glyph blocks for one line: words of 2–9 "characters" of varied height, the
    /// spatial frequency of real UI text, chosen by a hash of `seed` so every run draws the same.
    mutating func textLine(x: Int, y top: Int, maxWidth: Int, glyphHeight: Int, seed: UInt64, color: YUV) {
        let charW = max(2, glyphHeight * 6 / 10)
        var rng = SplitMix64(seed: seed)
        var cx = x
        let lineEnd = x + maxWidth - Int(rng.next() % UInt64(max(1, maxWidth / 3)))
        while cx < lineEnd {
            let letters = 2 + Int(rng.next() % 8)
            for _ in 0..<letters where cx + charW <= lineEnd {
                let tall = rng.next() % 4 == 0
                let h = tall ? glyphHeight : glyphHeight * 2 / 3
                fill(x: cx, y: top + glyphHeight - h, w: charW - 1, h: h, color)
                cx += charW
            }
            cx += charW
        }
    }
}

/// SplitMix64: a tiny, fast, well-mixed deterministic generator for procedural content.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
