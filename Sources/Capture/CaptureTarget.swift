import Media

/// What to capture. Every target is grabbed from the root window, so a window shows what is on
/// screen at its place (overlapping windows included), as FFmpeg's x11grab does.
public enum CaptureTarget: Sendable, Equatable {
    /// The whole screen, following RandR size changes.
    case screen
    /// A RandR 1.5 monitor by name, or by its decimal index as `xrandr --listactivemonitors`
    /// numbers them. The whole screen while it is gone.
    case monitor(String)
    /// A window by id, following its moves and resizes; clipped to the screen.
    case window(UInt32)
    /// A fixed rectangle of the screen; clipped if the screen shrinks.
    case region(PixelRect)
}

extension CaptureTarget {
    /// `WxH+X+Y` (X11 geometry): positive sizes, non-negative offsets.
    public static func parseRegion(_ text: String) throws(CaptureError) -> PixelRect {
        let bad = CaptureError(
            .badTarget,
            "region '\(text)' is not WxH+X+Y with a positive width and height and offsets of 0 or more (e.g. 640x480+0+0)"
        )
        let parts = text.split(separator: "+", omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw bad }
        let size = parts[0].split(separator: "x", omittingEmptySubsequences: false)
        guard size.count == 2,
            let width = decimal(size[0]),
            let height = decimal(size[1]),
            let x = decimal(parts[1]),
            let y = decimal(parts[2]),
            width > 0, height > 0
        else { throw bad }
        return PixelRect(x: x, y: y, width: width, height: height)
    }

    /// A window id in decimal or `0x` hexadecimal (as `xwininfo` and `xdotool` print them).
    public static func parseWindow(_ text: String) throws(CaptureError) -> UInt32 {
        let trimmed = text.trimmingWhitespace
        let value: UInt32?
        if trimmed.lowercased().hasPrefix("0x") {
            let digits = trimmed.dropFirst(2)
            value = digits.isEmpty || digits.count > 8 ? nil : UInt32(digits, radix: 16)
        } else {
            value = trimmed.count > 10 || !trimmed.allSatisfy(\.isASCIIDigit) ? nil : UInt32(trimmed)
        }
        guard let value, value != 0 else {
            throw CaptureError(.badTarget, "window '\(text)' is not a window id (decimal or 0x hexadecimal, not 0)")
        }
        return value
    }

    /// Digits only (no sign, no spaces), at most 6 of them: X coordinates are 16-bit.
    private static func decimal(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.count <= 6, text.allSatisfy(\.isASCIIDigit) else { return nil }
        return Int(text)
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}

extension String {
    fileprivate var trimmingWhitespace: Substring {
        let start = firstIndex { !$0.isWhitespace } ?? endIndex
        let end = lastIndex { !$0.isWhitespace }.map { index(after: $0) } ?? start
        return self[start..<max(start, end)]
    }
}
