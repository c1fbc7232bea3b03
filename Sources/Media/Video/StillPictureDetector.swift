#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Tells whether an I420 picture is the same as the one before, for inputs that do not say what
/// changed (the test source, `.y4m` files, capture processes): `FrameCadence` then leaves a still
/// picture unencoded. The X11 capture reports its changed area and needs none of this.
///
/// Keeps a copy of the last picture's planes, made once at its size and rewritten only when a
/// picture differs: a still picture costs one comparison (`memcmp`, which stops at the first
/// difference for a moving one), no allocation.
public final class StillPictureDetector {
    private var planes: [[UInt8]] = [[], [], []]
    private var width = 0
    private var height = 0
    private var hasPicture = false

    public init() {}

    /// True when `frame` equals the last picture given (same size, same samples); else keeps a
    /// copy of it and returns false. The first picture is always a change.
    public func isUnchanged(_ frame: VideoFrame) -> Bool {
        if hasPicture, frame.width == width, frame.height == height,
            Self.same(frame.y, stride: frame.strideY, as: planes[0], width: frame.width, rows: frame.height),
            Self.same(
                frame.u,
                stride: frame.strideU,
                as: planes[1],
                width: frame.chromaWidth,
                rows: frame.chromaHeight
            ),
            Self.same(frame.v, stride: frame.strideV, as: planes[2], width: frame.chromaWidth, rows: frame.chromaHeight)
        {
            return true
        }
        width = frame.width
        height = frame.height
        Self.keep(frame.y, stride: frame.strideY, in: &planes[0], width: frame.width, rows: frame.height)
        Self.keep(frame.u, stride: frame.strideU, in: &planes[1], width: frame.chromaWidth, rows: frame.chromaHeight)
        Self.keep(frame.v, stride: frame.strideV, in: &planes[2], width: frame.chromaWidth, rows: frame.chromaHeight)
        hasPicture = true
        return false
    }

    /// Whether `rows` rows of `width` samples of `plane` (a row every `stride` bytes) equal the
    /// packed copy `kept`.
    private static func same(_ plane: [UInt8], stride: Int, as kept: [UInt8], width: Int, rows: Int) -> Bool {
        guard kept.count == width * rows else { return false }
        return plane.withUnsafeBytes { source in
            kept.withUnsafeBytes { copy in
                guard let source = source.baseAddress, let copy = copy.baseAddress else { return rows == 0 }
                for row in 0..<rows where memcmp(source + row * stride, copy + row * width, width) != 0 {
                    return false
                }
                return true
            }
        }
    }

    /// Copies `rows` rows of `plane` into `kept`, packed, sizing it once.
    private static func keep(_ plane: [UInt8], stride: Int, in kept: inout [UInt8], width: Int, rows: Int) {
        if kept.count != width * rows { kept = [UInt8](repeating: 0, count: width * rows) }
        plane.withUnsafeBytes { source in
            kept.withUnsafeMutableBytes { copy in
                guard let source = source.baseAddress, let copy = copy.baseAddress else { return }
                for row in 0..<rows { memcpy(copy + row * width, source + row * stride, width) }
            }
        }
    }

    /// Forgets the last picture: the next one counts as a change.
    public func reset() { hasPicture = false }
}
