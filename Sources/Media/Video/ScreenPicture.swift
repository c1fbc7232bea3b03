/// A BGRX picture in memory its owner keeps (an X11 shared-memory segment): valid only until
/// that owner grabs again, so it is converted or copied at once and never kept.
///
/// Bytes B, G, R, X per pixel in memory order (depth 24 in 32 bits, least significant byte
/// first): what libyuv's "ARGB" functions read.
public struct BorrowedBGRXPicture {
    public var base: UnsafeRawPointer
    /// Bytes from one row to the next (at least `4 * width`).
    public var stride: Int
    public var width: Int
    public var height: Int
    /// Monotonic nanoseconds.
    public var captureTime: UInt64

    public init(base: UnsafeRawPointer, stride: Int, width: Int, height: Int, captureTime: UInt64) {
        self.base = base
        self.stride = stride
        self.width = width
        self.height = height
        self.captureTime = captureTime
    }
}

/// A rectangle of pixels, in the coordinates of the picture it belongs to.
public struct PixelRect: Sendable, Equatable, CustomStringConvertible {
    public var x: Int
    public var y: Int
    public var width: Int
    public var height: Int

    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    public var isEmpty: Bool { width <= 0 || height <= 0 }
    public var area: Int { isEmpty ? 0 : width * height }

    /// The part inside `bounds`; empty (zero size) when they do not overlap.
    public func clipped(to bounds: PixelRect) -> PixelRect {
        let left = max(x, bounds.x)
        let top = max(y, bounds.y)
        let right = min(x + width, bounds.x + bounds.width)
        let bottom = min(y + height, bounds.y + bounds.height)
        guard right > left, bottom > top else { return PixelRect(x: left, y: top, width: 0, height: 0) }
        return PixelRect(x: left, y: top, width: right - left, height: bottom - top)
    }

    /// The smallest rectangle holding both (an empty one adds nothing).
    public func union(_ other: PixelRect) -> PixelRect {
        if isEmpty { return other }
        if other.isEmpty { return self }
        let left = min(x, other.x)
        let top = min(y, other.y)
        let right = max(x + width, other.x + other.width)
        let bottom = max(y + height, other.y + other.height)
        return PixelRect(x: left, y: top, width: right - left, height: bottom - top)
    }

    /// `WxH+X+Y`, as X11 geometry strings write it.
    public var description: String { "\(width)x\(height)+\(x)+\(y)" }
}

/// What changed in a picture since the one before: a few rectangles (capped, so a busy screen
/// costs a bounded list, not one entry per block) and the share of the picture they cover.
/// Empty when nothing changed. Kept by its producer and refilled each picture, so its storage
/// is reused.
public struct ChangedArea: Sendable, Equatable {
    public private(set) var rects: [PixelRect] = []
    /// Changed pixels over all pixels, 0…1.
    public private(set) var fraction = 0.0
    /// The most rectangles kept; past it the last one grows to hold the rest.
    public static let maximumRects = 32

    public init() { rects.reserveCapacity(Self.maximumRects) }

    public var isEmpty: Bool { rects.isEmpty }

    /// Everything: a first picture, a new size.
    public static func whole(width: Int, height: Int) -> ChangedArea {
        var area = ChangedArea()
        area.add(PixelRect(x: 0, y: 0, width: width, height: height))
        area.fraction = 1
        return area
    }

    public mutating func removeAll() {
        rects.removeAll(keepingCapacity: true)
        fraction = 0
    }

    /// Adds a rectangle (merged into the last one when the cap is reached).
    public mutating func add(_ rect: PixelRect) {
        guard !rect.isEmpty else { return }
        if rects.count < Self.maximumRects {
            rects.append(rect)
        } else {
            rects[rects.count - 1] = rects[rects.count - 1].union(rect)
        }
    }

    /// Sets the covered share, computed by the producer (it knows the blocks, not just the
    /// rectangles, which may overlap once merged).
    public mutating func setFraction(_ value: Double) { fraction = min(1, max(0, value)) }

    /// The bounding box of all rectangles.
    public var bounds: PixelRect {
        rects.reduce(PixelRect(x: 0, y: 0, width: 0, height: 0)) { $0.union($1) }
    }
}

/// The pointer's picture as XFIXES gives it: premultiplied ARGB words (B, G, R, A in memory on
/// a little-endian machine), placed by its top-left corner (the hotspot already subtracted) in
/// the coordinates of the captured picture. Blended into a copy of the picture, never into the
/// grabbed memory, which would make it flicker.
public struct CursorSprite: Sendable, Equatable {
    public var pixels: [UInt32]
    public var width: Int
    public var height: Int
    /// Top-left corner in the captured picture (may lie partly or wholly outside it).
    public var x: Int
    public var y: Int
    /// XFIXES's cursor serial: a new value for a new shape.
    public var serial: UInt32

    public init(pixels: [UInt32], width: Int, height: Int, x: Int, y: Int, serial: UInt32) {
        self.pixels = pixels
        self.width = width
        self.height = height
        self.x = x
        self.y = y
        self.serial = serial
    }

    /// Where it lands in the picture's coordinates (before clipping).
    public var rect: PixelRect { PixelRect(x: x, y: y, width: width, height: height) }

    /// Blends the sprite over a BGRX/BGRA picture whose top-left pixel is (`originX`,
    /// `originY`) in the sprite's coordinates: `dst = src + dst × (255 − α) / 255` per channel.
    public func blend(
        into base: UnsafeMutableRawPointer,
        stride: Int,
        width pictureWidth: Int,
        height pictureHeight: Int,
        originX: Int = 0,
        originY: Int = 0
    ) {
        guard pixels.count >= width * height else { return }
        let area = rect.clipped(
            to: PixelRect(x: originX, y: originY, width: pictureWidth, height: pictureHeight)
        )
        guard !area.isEmpty else { return }
        pixels.withUnsafeBufferPointer { sprite in
            for row in area.y..<(area.y + area.height) {
                let destRow = base.advanced(by: (row - originY) * stride + (area.x - originX) * 4)
                    .assumingMemoryBound(to: UInt8.self)
                let spriteRow = (row - y) * width + (area.x - x)
                for column in 0..<area.width {
                    let word = sprite[spriteRow + column]
                    let alpha = word >> 24
                    if alpha == 0 { continue }
                    let d = destRow + column * 4
                    if alpha == 255 {
                        d[0] = UInt8(truncatingIfNeeded: word)
                        d[1] = UInt8(truncatingIfNeeded: word >> 8)
                        d[2] = UInt8(truncatingIfNeeded: word >> 16)
                        continue
                    }
                    let keep = 255 - alpha
                    for channel in 0..<3 {
                        let source = (word >> (8 * UInt32(channel))) & 0xFF
                        let mixed = source + (UInt32(d[channel]) * keep + 127) / 255
                        d[channel] = UInt8(min(255, mixed))
                    }
                }
            }
        }
    }
}
