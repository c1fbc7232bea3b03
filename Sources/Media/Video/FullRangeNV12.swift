/// Full-range NV12 (luma 0…255, as ReplayKit delivers) to video-range I420 (luma 16…235,
/// chroma 16…240), which is what the encoder signals and every decoder assumes by default.
///
/// libyuv splits NV12 planes but has no planar range conversion, so this one pass does both:
/// a table lookup per luma byte and per de-interleaved chroma byte (ITU-R BT.601 scaling:
/// Y' = 16 + Y·219/255, C' = 128 + (C−128)·224/255, rounded).
enum FullRangeNV12 {
    static let lumaTable: [UInt8] = (0..<256).map { UInt8(16 + ($0 * 219 + 127) / 255) }
    static let chromaTable: [UInt8] = (0..<256).map { c in
        let scaled = (Double(c - 128) * 224.0 / 255.0).rounded()
        return UInt8(128 + Int(scaled))
    }

    static func convert(
        _ frame: RawVideoFrame,
        _ dy: UnsafeMutablePointer<UInt8>?,
        _ sy: Int32,
        _ du: UnsafeMutablePointer<UInt8>?,
        _ su: Int32,
        _ dv: UnsafeMutablePointer<UInt8>?,
        _ sv: Int32
    ) {
        guard let dy, let du, let dv else { return }
        let w = frame.width
        let h = frame.height
        let cw = (w + 1) / 2
        let ch = (h + 1) / 2
        let srcStrideY = frame.strides[0]
        let srcStrideUV = frame.strides[1]
        lumaTable.withUnsafeBufferPointer { lut in
            frame.planes[0].withUnsafeBufferPointer { src in
                guard let s = src.baseAddress, let l = lut.baseAddress else { return }
                for row in 0..<h {
                    let srow = s + row * srcStrideY
                    let drow = dy + row * Int(sy)
                    for col in 0..<w { drow[col] = l[Int(srow[col])] }
                }
            }
        }
        chromaTable.withUnsafeBufferPointer { lut in
            frame.planes[1].withUnsafeBufferPointer { src in
                guard let s = src.baseAddress, let l = lut.baseAddress else { return }
                for row in 0..<ch {
                    let srow = s + row * srcStrideUV
                    let urow = du + row * Int(su)
                    let vrow = dv + row * Int(sv)
                    for col in 0..<cw {
                        urow[col] = l[Int(srow[2 * col])]
                        vrow[col] = l[Int(srow[2 * col + 1])]
                    }
                }
            }
        }
    }
}
