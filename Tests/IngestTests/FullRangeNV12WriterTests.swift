import Ingest
import Media
import Testing

@Suite struct FullRangeNV12WriterTests {
    @Test func theHostsConversionGivesThePictureBack() throws {
        let screen = try SyntheticScreenSource(width: 320, height: 192)
        let original = screen.videoFrame(index: 7, captureTime: 123_000_000)
        var writer = try FullRangeNV12Writer(width: 320, height: 192)
        try writer.write(original)
        #expect(writer.strideY == 320 && writer.strideUV == 320)
        let raw = try writer.frame(captureTime: 0)
        #expect(raw.format == .nv12FullRange)
        let back = try VideoConverter().convert(raw, width: 320, height: 192)
        // Video range → full range → video range is exact to within one code value; values the
        // synthetic source draws beyond the video range (its 245 paper white) clip to its edge.
        for (a, b) in zip(original.y, back.y) {
            #expect(abs(Int(min(max(a, 16), 235)) - Int(b)) <= 1)
        }
        for (a, b) in zip(original.u + original.v, back.u + back.v) {
            #expect(abs(Int(min(max(a, 16), 240)) - Int(b)) <= 1)
        }
        #expect(
            TimecodeStrip.decode(luma: back.y, width: 320, height: 192) == TimecodeStrip.Value(frame: 7, timeMs: 123)
        )
    }

    @Test func rowsArePaddedLikeCoreVideo() throws {
        var writer = try FullRangeNV12Writer(width: 886, height: 4)
        #expect(writer.strideY == 896 && writer.strideUV == 896)
        try writer.write(try VideoFrame(width: 886, height: 4, luma: 235, chroma: 240))
        let frame = try writer.frame(captureTime: 0)
        #expect(frame.planes[0].count == 896 * 4 && frame.planes[1].count == 896 * 2)
        #expect(frame.planes[0][0] == 255 && frame.planes[0][885] == 255)
        #expect(frame.planes[1][0] == 255 && frame.planes[1][885] == 255)
        #expect(throws: MediaError.self) { try writer.write(try VideoFrame(width: 4, height: 4)) }
    }
}
