import Media
import Testing

@Suite struct StillPictureDetectorTests {
    /// A 6x4 I420 picture with padded rows (stride 8 luma, 4 chroma) whose samples come from `seed`.
    static func picture(seed: UInt8, width: Int = 6, height: Int = 4, padding: UInt8 = 0) throws -> VideoFrame {
        let strideY = width + 2
        let strideC = (width + 1) / 2 + 1
        var y = [UInt8](repeating: padding, count: strideY * height)
        var u = [UInt8](repeating: padding, count: strideC * ((height + 1) / 2))
        var v = u
        for row in 0..<height {
            for column in 0..<width { y[row * strideY + column] = seed &+ UInt8(row * width + column) }
        }
        for row in 0..<((height + 1) / 2) {
            for column in 0..<((width + 1) / 2) {
                u[row * strideC + column] = seed &* 3 &+ UInt8(column)
                v[row * strideC + column] = seed &* 5 &+ UInt8(row)
            }
        }
        return try VideoFrame(
            width: width,
            height: height,
            y: y,
            strideY: strideY,
            u: u,
            strideU: strideC,
            v: v,
            strideV: strideC,
            captureTime: 0
        )
    }

    @Test("the first picture is a change, the same samples again are not")
    func sameSamples() throws {
        let detector = StillPictureDetector()
        #expect(!detector.isUnchanged(try Self.picture(seed: 1)))
        #expect(detector.isUnchanged(try Self.picture(seed: 1)))
        // Padding beyond the width is not part of the picture.
        #expect(detector.isUnchanged(try Self.picture(seed: 1, padding: 99)))
    }

    @Test("one sample in any plane is a change, and the new picture is the one kept")
    func anyPlaneChanges() throws {
        let detector = StillPictureDetector()
        let base = try Self.picture(seed: 7)
        #expect(!detector.isUnchanged(base))
        var luma = base
        luma.y[3 * luma.strideY + 5] &+= 1  // The last luma sample.
        #expect(!detector.isUnchanged(luma))
        #expect(detector.isUnchanged(luma))
        var chroma = luma
        chroma.v[1 * chroma.strideV + 2] &+= 1  // The last V sample.
        #expect(!detector.isUnchanged(chroma))
        #expect(detector.isUnchanged(chroma))
    }

    @Test("a new size is a change; reset forgets the picture")
    func sizeAndReset() throws {
        let detector = StillPictureDetector()
        #expect(!detector.isUnchanged(try Self.picture(seed: 2)))
        #expect(!detector.isUnchanged(try Self.picture(seed: 2, width: 4)))
        #expect(detector.isUnchanged(try Self.picture(seed: 2, width: 4)))
        detector.reset()
        #expect(!detector.isUnchanged(try Self.picture(seed: 2, width: 4)))
    }
}
