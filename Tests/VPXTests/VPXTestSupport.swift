import CVPX
import Foundation
import Media
import VPX

/// libvpx's VP8 or VP9 decoder, as the test's receiver: what our packets carried must decode.
final class VPXDecoder {
    /// A decoded picture, its planes copied out tightly packed.
    struct Picture {
        var width: Int
        var height: Int
        var y: [UInt8]
        var u: [UInt8]
        var v: [UInt8]
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private let context: UnsafeMutablePointer<vpx_codec_ctx_t>

    init(_ codec: VPXEncoder.Codec) throws {
        let interface =
            switch codec {
            case .vp8: vpx_codec_vp8_dx()
            case .vp9: vpx_codec_vp9_dx()
            }
        context = .allocate(capacity: 1)
        context.initialize(to: vpx_codec_ctx_t())
        var settings = vpx_codec_dec_cfg_t(threads: 1, w: 0, h: 0)
        let status = rtc_vpx_codec_dec_init(context, interface, &settings, 0)
        guard status == VPX_CODEC_OK else {
            context.deallocate()
            throw Failure(description: "vpx_codec_dec_init: \(String(cString: vpx_codec_err_to_string(status)))")
        }
    }

    deinit {
        vpx_codec_destroy(context)
        context.deallocate()
    }

    /// Decodes one frame and returns the pictures it shows (one, for our streams).
    func decode(_ data: [UInt8]) throws -> [Picture] {
        let status = data.withUnsafeBufferPointer {
            vpx_codec_decode(context, $0.baseAddress, UInt32($0.count), nil, 0)
        }
        guard status == VPX_CODEC_OK else {
            let detail = vpx_codec_error_detail(context).map { String(cString: $0) } ?? ""
            throw Failure(description: "vpx_codec_decode: \(String(cString: vpx_codec_error(context))) \(detail)")
        }
        var pictures: [Picture] = []
        var iterator: vpx_codec_iter_t?
        while let image = vpx_codec_get_frame(context, &iterator) {
            let width = Int(image.pointee.d_w)
            let height = Int(image.pointee.d_h)
            func plane(_ index: Int, _ w: Int, _ h: Int) -> [UInt8] {
                let (planes, strides) = (image.pointee.planes, image.pointee.stride)
                let base = [planes.0, planes.1, planes.2][index]
                let stride = Int([strides.0, strides.1, strides.2][index])
                guard let base else { return [] }
                var out: [UInt8] = []
                out.reserveCapacity(w * h)
                for row in 0..<h {
                    out.append(contentsOf: UnsafeBufferPointer(start: base + row * stride, count: w))
                }
                return out
            }
            let cw = (width + 1) / 2
            let ch = (height + 1) / 2
            pictures.append(
                Picture(
                    width: width,
                    height: height,
                    y: plane(0, width, height),
                    u: plane(1, cw, ch),
                    v: plane(2, cw, ch)
                )
            )
        }
        return pictures
    }
}

/// A screen-like test picture in BT.601 video range: a gray gradient, rows of dark "text"
/// blocks, and a saturated patch (red by default) at a position that moves with the frame.
struct TestScreen {
    var width: Int
    var height: Int
    static let patchSize = 48
    /// BT.601 video-range red: Y 81, U 90, V 240.
    static let patchColour: (y: UInt8, u: UInt8, v: UInt8) = (81, 90, 240)

    func patchOrigin(_ index: Int) -> (x: Int, y: Int) {
        // Even coordinates, so the patch covers whole chroma samples.
        ((40 + 16 * index) % (width - Self.patchSize - 2) & ~1, (60 + 8 * index) % (height - Self.patchSize - 2) & ~1)
    }

    func frame(_ index: Int, noise: Bool = false) throws -> VideoFrame {
        var frame = try VideoFrame(width: width, height: height, captureTime: UInt64(index) * 33_333_333)
        var state = UInt32(truncatingIfNeeded: index &* 2_654_435_761 | 1)
        for row in 0..<height {
            for column in 0..<width {
                var luma = 40 + (column * 150) / width
                // "Text": dark 6x10 glyph blocks on every 16th row band, 2 px gaps.
                if row % 16 < 10, column % 8 < 6, (row / 16 + column / 8) % 3 != 0, row > height / 2 {
                    luma = 30
                }
                if noise {
                    state = state &* 1_664_525 &+ 1_013_904_223
                    luma += Int(state >> 27) - 16
                }
                frame.y[row * width + column] = UInt8(clamping: luma)
            }
        }
        let origin = patchOrigin(index)
        for row in origin.y..<origin.y + Self.patchSize {
            for column in origin.x..<origin.x + Self.patchSize {
                frame.y[row * width + column] = Self.patchColour.y
            }
        }
        let cw = frame.chromaWidth
        for row in origin.y / 2..<(origin.y + Self.patchSize) / 2 {
            for column in origin.x / 2..<(origin.x + Self.patchSize) / 2 {
                frame.u[row * cw + column] = Self.patchColour.u
                frame.v[row * cw + column] = Self.patchColour.v
            }
        }
        return frame
    }
}

/// Luma PSNR in dB of a decoded picture against the frame that went in (99 when identical).
func lumaPSNR(_ frame: VideoFrame, _ picture: VPXDecoder.Picture) -> Double {
    var squared = 0.0
    for row in 0..<frame.height {
        for column in 0..<frame.width {
            let difference =
                Double(frame.y[row * frame.strideY + column]) - Double(picture.y[row * picture.width + column])
            squared += difference * difference
        }
    }
    let mean = squared / Double(frame.width * frame.height)
    return mean == 0 ? 99 : 10 * log10(255 * 255 / mean)
}

/// Mean of a chroma plane over a rectangle given in luma coordinates.
func chromaMean(_ plane: [UInt8], chromaWidth: Int, x: Int, y: Int, size: Int) -> Double {
    var sum = 0
    for row in y / 2..<(y + size) / 2 {
        for column in x / 2..<(x + size) / 2 {
            sum += Int(plane[row * chromaWidth + column])
        }
    }
    return Double(sum) / Double((size / 2) * (size / 2))
}
