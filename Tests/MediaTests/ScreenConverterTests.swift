import Media
import Testing

/// ScreenConverter on BGRX pictures built in memory: partial conversion of what changed gives the
/// same planes as converting everything; the cursor is blended over the picture, never into it.
@Suite struct ScreenConverterTests {
    /// A BGRX picture with a gradient (every pixel different) and a block of `fill` at `block`.
    static func picture(width: Int, height: Int, block: PixelRect? = nil, fill: UInt8 = 0) -> [UInt8] {
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let i = (y * width + x) * 4
                pixels[i] = UInt8(truncatingIfNeeded: x * 3)
                pixels[i + 1] = UInt8(truncatingIfNeeded: y * 5)
                pixels[i + 2] = UInt8(truncatingIfNeeded: x + y)
                pixels[i + 3] = 0xFF
            }
        }
        if let block {
            for y in block.y..<(block.y + block.height) {
                for x in block.x..<(block.x + block.width) {
                    let i = (y * width + x) * 4
                    pixels[i] = fill
                    pixels[i + 1] = fill
                    pixels[i + 2] = fill
                }
            }
        }
        return pixels
    }

    static func convert(
        _ converter: ScreenConverter,
        _ pixels: [UInt8],
        width: Int,
        height: Int,
        cursor: CursorSprite? = nil,
        changed: ChangedArea? = nil
    ) throws -> VideoFrame {
        try pixels.withUnsafeBytes { bytes in
            let picture = BorrowedBGRXPicture(
                base: bytes.baseAddress!,
                stride: width * 4,
                width: width,
                height: height,
                captureTime: 1
            )
            return try converter.convert(picture, cursor: cursor, changed: changed, width: width, height: height)
        }
    }

    @Test(arguments: [
        PixelRect(x: 10, y: 6, width: 20, height: 12), PixelRect(x: 33, y: 17, width: 7, height: 9),
        PixelRect(x: 0, y: 0, width: 1, height: 1),
    ])
    func onlyTheChangedAreaIsConvertedAndTheResultIsWhole(block: PixelRect) throws {
        let (width, height) = (64, 48)
        let before = Self.picture(width: width, height: height)
        let after = Self.picture(width: width, height: height, block: block, fill: 200)
        let partial = ScreenConverter()
        _ = try Self.convert(partial, before, width: width, height: height)
        var changed = ChangedArea()
        changed.add(block)
        let updated = try Self.convert(partial, after, width: width, height: height, changed: changed)
        let whole = try Self.convert(ScreenConverter(), after, width: width, height: height)
        #expect(updated.y == whole.y)
        #expect(updated.u == whole.u)
        #expect(updated.v == whole.v)
        // And the change did land (the block is light in the luma plane).
        #expect(updated.y[(block.y) * width + block.x] > 150)
    }

    @Test func theCursorIsDrawnOverACopyAndMovesCleanly() throws {
        let (width, height) = (64, 48)
        var pixels = [UInt8](repeating: 0x20, count: width * height * 4)
        let sprite = CursorSprite(
            pixels: [UInt32](repeating: 0xFFFF_FFFF, count: 8 * 8),
            width: 8,
            height: 8,
            x: 10,
            y: 10,
            serial: 1
        )
        let converter = ScreenConverter()
        let first = try Self.convert(converter, pixels, width: width, height: height, cursor: sprite)
        #expect(first.y[12 * width + 12] > 200, "the white sprite is in the picture")
        #expect(pixels.allSatisfy { $0 == 0x20 }, "the grabbed memory is not written")
        // The cursor moves to (40, 30): its old and new places are the changed area.
        var moved = sprite
        (moved.x, moved.y) = (40, 30)
        var changed = ChangedArea()
        changed.add(sprite.rect)
        changed.add(moved.rect)
        pixels[0] = 0x20
        let second = try Self.convert(converter, pixels, width: width, height: height, cursor: moved, changed: changed)
        #expect(second.y[12 * width + 12] < 60, "the old place is the picture again")
        #expect(second.y[32 * width + 42] > 200, "the sprite is at its new place")
    }
}
