import CYUV

/// Converts grabbed screen pictures (borrowed BGRX) into the encoder's I420 in one pass: libyuv
/// reads the grabbed memory and writes the output planes (or, when the picture must be scaled,
/// a full-size stage that libyuv then box-filters into them). No full copy of the picture is
/// made; the cursor goes into a small copy of the pixels under it, converted over its place in
/// the planes, so the grabbed memory is never written.
///
/// Its planes are kept between pictures: the frame it returns shares them, and once the encoder
/// has let go of it the next picture is written in place, so steady state allocates nothing.
/// Unscaled, only what changed is converted again: the planes still hold the last picture, so
/// the changed rectangles are converted over it and the cursor is drawn again on top.
public final class ScreenConverter {
    private var stage = PlaneSet()
    private var output = PlaneSet()
    /// The picture size whose full, unscaled conversion the output planes hold; nil when they
    /// hold something else (a scaled or letterboxed picture, nothing yet).
    private var directSize: (width: Int, height: Int)?
    /// The pixels under the cursor, blended (BGRX, `patchStride` bytes a row).
    private var patch: [UInt8] = []
    /// The output planes hold a whole converted picture.
    private var holdsPicture = false

    public init() {}

    /// `picture` as upright I420 of exactly `width`×`height` (both even), scaled to fit and
    /// centred on black when its shape differs, with `cursor` drawn over it. `changed` (what
    /// differs from the last picture converted, the cursor's old and new places included) lets
    /// an unscaled picture be converted in part; nil converts all of it.
    public func convert(
        _ picture: BorrowedBGRXPicture,
        cursor: CursorSprite?,
        changed: ChangedArea? = nil,
        width: Int,
        height: Int
    ) throws(MediaError) -> VideoFrame {
        try VideoFrame.validate(width: width, height: height)
        try VideoFrame.validate(width: picture.width, height: picture.height)
        guard width % 2 == 0, height % 2 == 0 else {
            throw MediaError(.invalidDimensions, "output size \(width)x\(height) must be even")
        }
        guard picture.stride >= 4 * picture.width else {
            throw MediaError(
                .planeTooSmall,
                "BGRX stride \(picture.stride) is under 4 × width \(picture.width)"
            )
        }
        let inner = VideoConverter.fitInside(
            width: picture.width,
            height: picture.height,
            maxWidth: width,
            maxHeight: height
        )
        output.resize(width: width, height: height)
        let x = ((width - inner.width) / 2) & ~1
        let y = ((height - inner.height) / 2) & ~1
        if inner.width != width || inner.height != height { output.fillBlack() }
        let direct = picture.width == width && picture.height == height
        // Cleared first: a conversion that fails leaves planes that no longer match any picture.
        let previous = directSize
        directSize = nil
        holdsPicture = false
        if direct, let changed, let size = previous, size == (picture.width, picture.height) {
            for rect in changed.rects { try write(picture, area: rect, into: &output) }
            if let cursor { try drawCursor(cursor, over: picture, into: &output, x: 0, y: 0) }
        } else if picture.width == inner.width && picture.height == inner.height {
            try write(picture, cursor: cursor, into: &output, x: x, y: y)
        } else {
            stage.resize(width: picture.width, height: picture.height)
            try write(picture, cursor: cursor, into: &stage, x: 0, y: 0)
            stage.scale(into: &output, x: x, y: y, width: inner.width, height: inner.height)
        }
        directSize = direct ? (picture.width, picture.height) : nil
        holdsPicture = true
        return try output.frame(captureTime: picture.captureTime)
    }

    // MARK: - Converting while the capture compares

    /// Whether `convertChanged` may convert rectangles of a `pictureWidth`×`pictureHeight`
    /// picture into `width`×`height` planes as the capture finds them: the picture is not scaled
    /// and the planes hold the last picture at that size. The X11 capture's comparison then
    /// hands each block row's changed blocks over while their pixels are still in this core's
    /// cache, instead of `convert` reading them from memory again (Docs/capture.md).
    public func canConvertChanges(pictureWidth: Int, pictureHeight: Int, width: Int, height: Int) -> Bool {
        guard pictureWidth == width, pictureHeight == height, let size = directSize else { return false }
        return size == (width, height) && output.width == width && output.height == height
    }

    /// Converts one changed rectangle of `picture` over the same place in the planes (allowed
    /// when `canConvertChanges` said so). Until `finishChanges` the planes hold no whole picture:
    /// the cursor is not drawn yet. A failure leaves the planes unusable for partial conversion,
    /// so the next `convert` converts everything.
    public func convertChanged(_ picture: BorrowedBGRXPicture, area: PixelRect) throws(MediaError) {
        guard let size = directSize, size == (picture.width, picture.height) else {
            throw MediaError(
                .invalidDimensions,
                "no unscaled \(picture.width)x\(picture.height) picture to convert a change over"
            )
        }
        holdsPicture = false
        do {
            try write(picture, area: area, into: &output)
        } catch {
            directSize = nil
            throw error
        }
    }

    /// The picture whose changes `convertChanged` converted, with `cursor` drawn over it.
    public func finishChanges(_ picture: BorrowedBGRXPicture, cursor: CursorSprite?) throws(MediaError) -> VideoFrame {
        guard let size = directSize, size == (picture.width, picture.height) else {
            throw MediaError(.invalidDimensions, "no unscaled \(picture.width)x\(picture.height) picture to finish")
        }
        directSize = nil
        if let cursor { try drawCursor(cursor, over: picture, into: &output, x: 0, y: 0) }
        directSize = size
        holdsPicture = true
        return try output.frame(captureTime: picture.captureTime)
    }

    /// The last picture converted, again, stamped `captureTime`: what a still screen's refresh
    /// or idle repeat encodes, with nothing converted. Nil before the first picture (or after a
    /// conversion that failed).
    public func lastPicture(captureTime: UInt64) throws(MediaError) -> VideoFrame? {
        guard holdsPicture else { return nil }
        return try output.frame(captureTime: captureTime)
    }

    /// Converts one rectangle of the picture over the same place in `planes` (an unscaled
    /// picture at (0, 0)), widened to even edges so its chroma samples are whole.
    private func write(_ picture: BorrowedBGRXPicture, area: PixelRect, into planes: inout PlaneSet) throws(MediaError)
    {
        guard let even = Self.evenRect(covering: area, in: picture) else { return }
        try Self.convert(
            picture.base.advanced(by: even.y * picture.stride + even.x * 4),
            stride: picture.stride,
            width: even.width,
            height: even.height,
            into: &planes,
            x: even.x,
            y: even.y,
            what: "BGRX \(even) of \(picture.width)x\(picture.height)"
        )
    }

    /// BGRX → I420 at (x, y) of `planes`, then the cursor over it.
    private func write(
        _ picture: BorrowedBGRXPicture,
        cursor: CursorSprite?,
        into planes: inout PlaneSet,
        x: Int,
        y: Int
    ) throws(MediaError) {
        try Self.convert(
            picture.base,
            stride: picture.stride,
            width: picture.width,
            height: picture.height,
            into: &planes,
            x: x,
            y: y,
            what: "BGRX \(picture.width)x\(picture.height)"
        )
        if let cursor { try drawCursor(cursor, over: picture, into: &planes, x: x, y: y) }
    }

    /// Copies the pixels under the cursor (widened to even edges so its chroma samples are whole),
    /// blends the sprite into the copy and converts the copy over the same place.
    private func drawCursor(
        _ cursor: CursorSprite,
        over picture: BorrowedBGRXPicture,
        into planes: inout PlaneSet,
        x: Int,
        y: Int
    ) throws(MediaError) {
        guard let even = Self.evenRect(covering: cursor.rect, in: picture) else { return }
        let patchStride = even.width * 4
        if patch.count < patchStride * even.height {
            patch = [UInt8](repeating: 0, count: patchStride * even.height)
        }
        var failure: MediaError?
        patch.withUnsafeMutableBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            for row in 0..<even.height {
                base.advanced(by: row * patchStride).copyMemory(
                    from: picture.base.advanced(by: (even.y + row) * picture.stride + even.x * 4),
                    byteCount: patchStride
                )
            }
            cursor.blend(
                into: base,
                stride: patchStride,
                width: even.width,
                height: even.height,
                originX: even.x,
                originY: even.y
            )
            do throws(MediaError) {
                try Self.convert(
                    UnsafeRawPointer(base),
                    stride: patchStride,
                    width: even.width,
                    height: even.height,
                    into: &planes,
                    x: x + even.x,
                    y: y + even.y,
                    what: "the cursor's \(even.width)x\(even.height) patch"
                )
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
    }

    /// `area` clipped to the picture and widened to even edges (chroma samples cover 2x2
    /// pixels); nil when nothing of it is in the picture.
    private static func evenRect(covering area: PixelRect, in picture: BorrowedBGRXPicture) -> PixelRect? {
        let covered = area.clipped(to: PixelRect(x: 0, y: 0, width: picture.width, height: picture.height))
        guard !covered.isEmpty else { return nil }
        let left = covered.x & ~1
        let top = covered.y & ~1
        let right = min(picture.width, (covered.x + covered.width + 1) & ~1)
        let bottom = min(picture.height, (covered.y + covered.height + 1) & ~1)
        return PixelRect(x: left, y: top, width: right - left, height: bottom - top)
    }

    /// libyuv's BGRX (its "ARGB") → I420 of `width`×`height` pixels from `source` into `planes`
    /// at (x, y), both even.
    private static func convert(
        _ source: UnsafeRawPointer,
        stride: Int,
        width: Int,
        height: Int,
        into planes: inout PlaneSet,
        x: Int,
        y: Int,
        what: @autoclosure () -> String
    ) throws(MediaError) {
        var status: Int32 = 0
        planes.withPointers(x: x, y: y) { dy, sy, du, su, dv, sv in
            status = ARGBToI420(
                source.assumingMemoryBound(to: UInt8.self),
                Int32(stride),
                dy,
                sy,
                du,
                su,
                dv,
                sv,
                Int32(width),
                Int32(height)
            )
        }
        guard status == 0 else { throw MediaError(.library, "libyuv failed converting \(what())") }
    }
}
