import Testing

@testable import Media

@Suite struct VideoConverterTests {
    /// NV12 with every pixel the same; `stride` > width leaves padding we fill with garbage.
    func nv12(_ format: PixelFormat, w: Int, h: Int, y: UInt8, u: UInt8, v: UInt8, pad: Int = 0) throws -> RawVideoFrame
    {
        let cw = (w + 1) / 2
        let ch = (h + 1) / 2
        var luma = [UInt8](repeating: 0xEE, count: (w + pad) * h)
        var uv = [UInt8](repeating: 0xEE, count: (2 * cw + pad) * ch)
        for r in 0..<h { for c in 0..<w { luma[r * (w + pad) + c] = y } }
        for r in 0..<ch {
            for c in 0..<cw {
                uv[r * (2 * cw + pad) + 2 * c] = u
                uv[r * (2 * cw + pad) + 2 * c + 1] = v
            }
        }
        return try RawVideoFrame(
            format: format,
            width: w,
            height: h,
            planes: [luma, uv],
            strides: [w + pad, 2 * cw + pad],
            captureTime: 7
        )
    }

    @Test(arguments: [
        // (in Y, in U, in V) → expected (Y, U, V), BT.601 full → video range.
        ((UInt8(0), UInt8(0), UInt8(0)), (UInt8(16), UInt8(16), UInt8(16))),
        ((255, 255, 255), (235, 240, 240)),
        ((128, 128, 128), (126, 128, 128)),
        ((64, 200, 30), (71, 191, 42)),
    ])
    func nv12FullRangeMapsToVideoRange(input: (UInt8, UInt8, UInt8), expected: (UInt8, UInt8, UInt8)) throws {
        let frame = try nv12(.nv12FullRange, w: 64, h: 32, y: input.0, u: input.1, v: input.2, pad: 16)
        let out = try VideoConverter().convert(frame, width: 64, height: 32)
        #expect(Set(out.y) == [expected.0])
        #expect(Set(out.u) == [expected.1])
        #expect(Set(out.v) == [expected.2])
        #expect(out.captureTime == 7)
    }

    @Test func nv12VideoRangePassesValuesThrough() throws {
        let frame = try nv12(.nv12VideoRange, w: 64, h: 32, y: 16, u: 100, v: 200, pad: 8)
        let out = try VideoConverter().convert(frame, width: 64, height: 32)
        #expect(Set(out.y) == [16])
        #expect(Set(out.u) == [100])
        #expect(Set(out.v) == [200])
    }

    @Test(arguments: [
        // (B, G, R) → expected (Y, U, V) by BT.601 video range, ±1 for rounding.
        ((UInt8(255), UInt8(255), UInt8(255)), (235, 128, 128)),
        ((0, 0, 0), (16, 128, 128)),
        ((0, 0, 255), (82, 90, 240)),
        ((255, 0, 0), (41, 240, 110)),
    ])
    func bgraToI420(bgr: (UInt8, UInt8, UInt8), expected: (Int, Int, Int)) throws {
        let w = 32
        let h = 16
        let stride = w * 4 + 12
        var pixels = [UInt8](repeating: 0x55, count: stride * h)
        for r in 0..<h {
            for c in 0..<w {
                pixels[r * stride + 4 * c] = bgr.0
                pixels[r * stride + 4 * c + 1] = bgr.1
                pixels[r * stride + 4 * c + 2] = bgr.2
                pixels[r * stride + 4 * c + 3] = 255
            }
        }
        let frame = try RawVideoFrame(
            format: .bgra,
            width: w,
            height: h,
            planes: [pixels],
            strides: [stride],
            captureTime: 0
        )
        let out = try VideoConverter().convert(frame, width: w, height: h)
        for (plane, want) in [(out.y, expected.0), (out.u, expected.1), (out.v, expected.2)] {
            let values = Set(plane)
            #expect(values.count == 1)
            let got = Int(values.first ?? 0)
            #expect(abs(got - want) <= 1, "got \(got), want \(want)")
        }
    }

    @Test(arguments: [
        ((1920, 1080), (1280, 720)),
        ((886, 1920), (590, 1280)),
        ((1280, 720), (1280, 720)),
        ((640, 480), (640, 480)),  // Never upscaled.
        ((1281, 721), (1280, 720)),
        ((2532, 1170), (1280, 592)),  // 592 keeps the aspect closer than 590.
        ((7, 5), (6, 4)),  // Odd sizes come out even.
    ])
    func fitKeepsAspectAndEvenSizes(input: (Int, Int), expected: (Int, Int)) {
        let fitted = VideoConverter.fit(width: input.0, height: input.1)
        #expect(fitted.width == expected.0 && fitted.height == expected.1)
        #expect(fitted.width % 2 == 0 && fitted.height % 2 == 0)
    }

    @Test func scalesDownIntoTheBox() throws {
        let source = try SyntheticScreenSource(width: 1920, height: 1080).videoFrame(index: 3, captureTime: 99)
        let size = VideoConverter.fit(width: 1920, height: 1080)
        let out = try VideoConverter().convert(RawVideoFrame(source), width: size.width, height: size.height)
        #expect(out.width == 1280 && out.height == 720)
        #expect(out.y.count == 1280 * 720 && out.u.count == 640 * 360)
        #expect(out.captureTime == 99)
    }

    @Test func portraitIntoLandscapeIsLetterboxedNotStretched() throws {
        let portrait = try VideoFrame(width: 360, height: 640, luma: 200, chroma: 60)
        let out = try VideoConverter().convert(RawVideoFrame(portrait), width: 1280, height: 720)
        // Scaled up to 406x720 (405 rounded to even) (aspect kept), centred; bars are video-range black.
        #expect(out.y[0] == 16 && out.y[1279] == 16)
        #expect(out.y[360 * 1280 + 640] == 200)
        let inner = VideoConverter.fitInside(width: 360, height: 640, maxWidth: 1280, maxHeight: 720)
        #expect(inner.width == 406 && inner.height == 720)
        let left = ((1280 - 406) / 2) & ~1
        #expect(out.y[100 * 1280 + left - 1] == 16)
        #expect(out.y[100 * 1280 + left] == 200)
        #expect(out.u[0] == 128 && out.u[180 * 640 + 320] == 60)
    }

    @Test func oddSizedInputConvertsWithoutReadingPastPlanes() throws {
        let frame = try nv12(.nv12FullRange, w: 7, h: 5, y: 255, u: 128, v: 128)
        let out = try VideoConverter().convert(frame, width: 6, height: 4)
        #expect(out.width == 6 && out.height == 4)
        #expect(Set(out.y) == [235])
    }

    @Test func rotationTurnsThePictureUpright() throws {
        // A white 4x4 block in the top-left corner of a 64x32 black frame.
        var frame = try VideoFrame(width: 64, height: 32)
        for r in 0..<4 { for c in 0..<4 { frame.y[r * 64 + c] = 235 } }
        let converter = VideoConverter()
        let cw90 = try converter.convert(RawVideoFrame(frame, rotation: .clockwise90), width: 32, height: 64)
        #expect(cw90.y[0 * 32 + 31] == 235)  // Top-left goes to top-right.
        #expect(cw90.y[0] == 16)
        let cw180 = try converter.convert(RawVideoFrame(frame, rotation: .clockwise180), width: 64, height: 32)
        #expect(cw180.y[31 * 64 + 63] == 235)
        let cw270 = try converter.convert(RawVideoFrame(frame, rotation: .clockwise270), width: 32, height: 64)
        #expect(cw270.y[63 * 32 + 0] == 235)
        // NV12 full range rotates through the same path (LUT first, then libyuv).
        let nv = try nv12(.nv12FullRange, w: 64, h: 32, y: 0, u: 128, v: 128)
        let nvRot = try converter.convert(
            RawVideoFrame(
                format: nv.format,
                width: 64,
                height: 32,
                planes: nv.planes,
                strides: nv.strides,
                rotation: .clockwise90,
                captureTime: 0
            ),
            width: 32,
            height: 64
        )
        #expect(Set(nvRot.y) == [16])
    }

    @Test func badFramesAreRejectedWithTheirReason() throws {
        #expect {
            try RawVideoFrame(
                format: .nv12FullRange,
                width: 64,
                height: 32,
                planes: [[UInt8](repeating: 0, count: 64 * 32), [1, 2, 3]],
                strides: [64, 64],
                captureTime: 0
            )
        } throws: { error in
            let e = error as? MediaError
            return e?.code == .planeTooSmall && e?.message == "UV plane has 3 bytes, needs 1024 for 64x16 at stride 64"
        }
        #expect {
            try RawVideoFrame(
                format: .bgra,
                width: 10,
                height: 10,
                planes: [[UInt8](repeating: 0, count: 400)],
                strides: [30],
                captureTime: 0
            )
        } throws: { error in
            (error as? MediaError)?.message == "BGRA plane stride 30 is less than its width 40"
        }
        #expect {
            try RawVideoFrame(
                format: .i420,
                width: 0,
                height: 720,
                planes: [[], [], []],
                strides: [0, 0, 0],
                captureTime: 0
            )
        } throws: { error in
            (error as? MediaError) == MediaError(.invalidDimensions, "frame size 0x720 is empty")
        }
        #expect {
            try VideoFrame(width: 100_000, height: 2)
        } throws: { error in
            (error as? MediaError)?.message == "frame size 100000x2 exceeds the 8192x8192 limit"
        }
        #expect {
            try RawVideoFrame(format: .i420, width: 4, height: 4, planes: [[0]], strides: [4], captureTime: 0)
        } throws: { error in
            (error as? MediaError)?.message == "i420 needs 3 planes and strides, got 1 and 1"
        }
        #expect(throws: MediaError.self) {
            try VideoConverter().convert(RawVideoFrame(VideoFrame(width: 8, height: 8)), width: 7, height: 8)
        }
    }
}
