#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The built-in test input: deterministic, screen-like video and matching audio, so the whole
/// product runs and can be measured with no capture device.
///
/// Video: a desktop with a window of static text, a panel of text scrolling up, a small "video"
/// window moving across with changing content (the hard-to-compress part of real shares), a
/// moving cursor, a white flash square for the first 100 ms of every second, and the
/// `TimecodeStrip` along the top. Frame `n` always looks the same apart from its timecode.
///
/// Audio: 48 kHz stereo, a steady tone (440 Hz left, 660 Hz right, −18 dBFS) plus a 1 kHz beep
/// (−8 dBFS) for the first 100 ms of every second — the same instants as the flash, so a receiver
/// can measure audio/video sync.
public final class SyntheticScreenSource {
    public let width: Int
    public let height: Int
    public let frameRate: Int

    public static let audioSampleRate = 48_000
    public static let audioChannels = 2
    /// Flash and beep last this long at the start of each second.
    public static let markerDurationMs = 100

    private let base: Canvas
    private let document: [UInt8]
    private let documentRows: Int
    private let layout: Layout

    struct Layout {
        var strip: Int
        var window: (x: Int, y: Int, w: Int, h: Int)
        var panel: (x: Int, y: Int, w: Int, h: Int)
        var video: (w: Int, h: Int, y: Int, minX: Int, maxX: Int)
        var flash: (x: Int, y: Int, size: Int)
        var glyph: Int
        var lineSpacing: Int
        var scrollPerFrame: Int
    }

    public init(width: Int = 1280, height: Int = 720, frameRate: Int = 30) throws(MediaError) {
        try VideoFrame.validate(width: width, height: height)
        guard width >= 160, height >= 96, width % 2 == 0, height % 2 == 0 else {
            throw MediaError(
                .invalidDimensions,
                "synthetic source size \(width)x\(height) must be even and at least 160x96"
            )
        }
        guard (1...240).contains(frameRate) else {
            throw MediaError(.invalidSetting, "synthetic source frame rate \(frameRate) is outside 1...240")
        }
        self.width = width
        self.height = height
        self.frameRate = frameRate
        let layout = Self.makeLayout(width: width, height: height, frameRate: frameRate)
        self.layout = layout
        (document, documentRows) = Self.renderDocument(layout)
        base = Self.renderBase(width: width, height: height, layout)
    }

    static func makeLayout(width w: Int, height h: Int, frameRate: Int) -> Layout {
        let strip = TimecodeStrip.blockSize(width: w)
        let even = { (v: Int) in v & ~1 }
        let wx = even(w / 25)
        let wy = even(strip + h / 25)
        let ww = even(w - 2 * wx)
        let wh = even(h - wy - h / 25)
        let title = max(4, even(h / 20))
        let panel = (x: even(wx + ww * 42 / 100), y: wy + title + 4, w: even(ww * 56 / 100), h: even(wh - title - 8))
        let glyph = max(3, h / 80)
        let vw = even(w / 8)
        let vh = even(h / 8)
        return Layout(
            strip: strip,
            window: (wx, wy, ww, wh),
            panel: panel,
            video: (vw, vh, even(wy + wh - vh - wh / 20), wx + 8, even(panel.x - vw - 8)),
            flash: (x: 0, y: even(h - max(16, h / 10)), size: max(16, even(h / 10))),
            glyph: glyph,
            lineSpacing: glyph * 2,
            // About one text line every 10 frames at 30 fps, whatever the size.
            scrollPerFrame: max(1, glyph * 2 * 3 / max(1, frameRate))
        )
    }

    /// The static parts: desktop, window frame and title bar, the left column of text.
    static func renderBase(width: Int, height: Int, _ l: Layout) -> Canvas {
        var c = Canvas(width: width, height: height, fill: YUV(y: 96, u: 150, v: 112))
        let win = l.window
        c.fill(x: win.x, y: win.y, w: win.w, h: win.h, YUV(y: 226, u: 128, v: 128))
        c.fill(x: win.x, y: win.y, w: win.w, h: max(4, (height / 20) & ~1), YUV(y: 58, u: 168, v: 114))
        let text = YUV(y: 40, u: 128, v: 128)
        var line = 0
        var top = l.panel.y + 4
        while top + l.glyph < l.video.y - 8 {
            c.textLine(
                x: win.x + 12,
                y: top,
                maxWidth: l.panel.x - win.x - 24,
                glyphHeight: l.glyph,
                seed: 0xC0DE_0000 + UInt64(line),
                color: line % 7 == 0 ? YUV(y: 70, u: 110, v: 170) : text
            )
            line += 1
            top += l.lineSpacing
        }
        return c
    }

    /// The scrolling panel's content, rendered once as a tall luma strip that wraps around.
    static func renderDocument(_ l: Layout) -> ([UInt8], Int) {
        let lines = max(8, (l.panel.h / l.lineSpacing) * 2)
        let rows = lines * l.lineSpacing
        var doc = Canvas(width: l.panel.w, height: rows, fill: YUV(y: 245, u: 128, v: 128))
        for i in 0..<lines {
            let indent = Int(i % 5 == 0 ? 0 : (i % 3) * l.glyph * 2)
            doc.textLine(
                x: 6 + indent,
                y: i * l.lineSpacing + l.glyph / 2,
                maxWidth: l.panel.w - 12 - indent,
                glyphHeight: l.glyph,
                seed: 0xD0C0_0000 + UInt64(i),
                color: YUV(y: 30, u: 128, v: 128)
            )
        }
        return (doc.y, rows)
    }

    /// True for frames in the first 100 ms of a second of stream time (frame 0 is t = 0).
    public func isFlash(frameIndex: Int) -> Bool {
        (frameIndex % frameRate) * 1000 < Self.markerDurationMs * frameRate
    }

    /// Frame `index` of the stream, stamped with `captureTime` (ns, monotonic), which also goes
    /// into the timecode strip.
    public func videoFrame(index: Int, captureTime: UInt64) -> VideoFrame {
        var c = base
        let l = layout
        let n = max(0, index)
        // Scrolling panel: copy document rows at an offset that grows each frame.
        let offset = (n * l.scrollPerFrame) % documentRows
        document.withUnsafeBufferPointer { doc in
            c.y.withUnsafeMutableBufferPointer { dst in
                guard let d = dst.baseAddress, let s = doc.baseAddress else { return }
                for row in 0..<l.panel.h where l.panel.y + row < height {
                    let src = s + ((row + offset) % documentRows) * l.panel.w
                    (d + (l.panel.y + row) * width + l.panel.x).update(from: src, count: l.panel.w)
                }
            }
        }
        drawVideoWindow(&c, n)
        drawCursor(&c, n)
        let flash = isFlash(frameIndex: n)
        c.fill(x: l.flash.x, y: l.flash.y, w: l.flash.size, h: l.flash.size, flash ? .white : .black)
        c.fill(x: 0, y: 0, w: width, h: l.strip, YUV(y: 128, u: 128, v: 128))
        let stamp = TimecodeStrip.Value(
            frame: UInt32(truncatingIfNeeded: n),
            timeMs: UInt32(truncatingIfNeeded: captureTime / 1_000_000)
        )
        c.y.withUnsafeMutableBufferPointer { p in
            if let b = p.baseAddress { TimecodeStrip.draw(stamp, into: b, width: width, height: height, stride: width) }
        }
        return VideoFrame(uncheckedWidth: width, height: height, y: c.y, u: c.u, v: c.v, captureTime: captureTime)
    }

    /// A small window of moving, colourful, camera-like content sliding back and forth.
    private func drawVideoWindow(_ c: inout Canvas, _ n: Int) {
        let v = layout.video
        let span = max(1, v.maxX - v.minX)
        let phase = (n * 4) % (2 * span)
        let x = (v.minX + (phase < span ? phase : 2 * span - phase)) & ~1
        let bands = 8
        for b in 0..<bands {
            let t = Double(n) / Double(frameRate)
            let luma = 100 + 80 * sin(t * 2.1 + Double(b) * 0.7)
            let u = 128 + 60 * sin(t * 1.3 + Double(b))
            let vv = 128 + 60 * cos(t * 0.9 + Double(b) * 1.3)
            let bh = v.h / bands
            c.fill(
                x: x,
                y: v.y + b * bh,
                w: v.w,
                h: bh,
                YUV(y: UInt8(clamping: Int(luma)), u: UInt8(clamping: Int(u)), v: UInt8(clamping: Int(vv)))
            )
        }
        let dot = max(4, v.h / 4) & ~1
        let dx = Int((sin(Double(n) / 7.0) * 0.5 + 0.5) * Double(v.w - dot))
        c.fill(x: x + dx, y: v.y + v.h / 2 - dot / 2, w: dot, h: dot, YUV(y: 230, u: 90, v: 200))
    }

    /// An arrow-shaped cursor on a slow Lissajous path.
    private func drawCursor(_ c: inout Canvas, _ n: Int) {
        let t = Double(n) / Double(frameRate)
        let cx = Int(Double(width) * (0.5 + 0.4 * sin(t * 2 * .pi / 4.0)))
        let cy = Int(Double(height) * (0.5 + 0.35 * sin(t * 2 * .pi / 3.0)))
        let size = max(6, height / 40)
        for row in 0..<size {
            c.fill(x: cx - 1, y: cy + row - 1, w: row * 2 / 3 + 3, h: 1, .black)
            c.fill(x: cx, y: cy + row, w: row * 2 / 3 + 1, h: 1, .white)
        }
    }

    /// True for samples in the first 100 ms of a second of stream time.
    public static func isBeep(sample: Int) -> Bool {
        (sample % audioSampleRate) < audioSampleRate * markerDurationMs / 1000
    }

    /// `frameCount` stereo samples starting at absolute sample `startSample` of the stream
    /// (sample 0 is t = 0, the time of video frame 0), stamped with `captureTime`.
    public func audioChunk(startSample: Int, frameCount: Int, captureTime: UInt64) -> AudioChunk {
        var samples = [Float](repeating: 0, count: frameCount * 2)
        let rate = Double(Self.audioSampleRate)
        let beepSamples = Self.audioSampleRate * Self.markerDurationMs / 1000
        let ramp = Self.audioSampleRate / 500  // 2 ms raised-cosine edges: a beep without clicks.
        for i in 0..<frameCount {
            let s = startSample + i
            let t = Double(s) / rate
            var left = 0.125 * sin(2 * .pi * 440 * t)
            var right = 0.125 * sin(2 * .pi * 660 * t)
            let inSecond = s % Self.audioSampleRate
            if inSecond < beepSamples {
                let edge = min(inSecond, beepSamples - 1 - inSecond)
                let gain = edge >= ramp ? 1.0 : 0.5 - 0.5 * cos(.pi * Double(edge) / Double(ramp))
                let beep = 0.4 * gain * sin(2 * .pi * 1000 * t)
                left += beep
                right += beep
            }
            samples[2 * i] = Float(left)
            samples[2 * i + 1] = Float(right)
        }
        return AudioChunk(
            uncheckedSamples: samples,
            sampleRate: Self.audioSampleRate,
            channels: 2,
            captureTime: captureTime
        )
    }
}
