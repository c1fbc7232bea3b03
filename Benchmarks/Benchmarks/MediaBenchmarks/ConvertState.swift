import Media

/// One full-range NV12 picture (ReplayKit's format) converted to video-range I420 and scaled
/// to fit the stream's size, as the ingest path does for every frame.
final class ConvertState {
    private let converter = VideoConverter()
    private let frame: RawVideoFrame
    private let outputWidth: Int
    private let outputHeight: Int

    init(width: Int, height: Int, outputWidth: Int, outputHeight: Int) throws {
        let chromaRowBytes = (width + 1) / 2 * 2
        let chromaRows = (height + 1) / 2
        let luma = (0..<(width * height)).map { UInt8(truncatingIfNeeded: ($0 % width) ^ ($0 / width)) }
        let chroma = (0..<(chromaRowBytes * chromaRows)).map { UInt8(truncatingIfNeeded: 96 + $0 % 61) }
        frame = try RawVideoFrame(
            format: .nv12FullRange,
            width: width,
            height: height,
            planes: [luma, chroma],
            strides: [width, chromaRowBytes],
            captureTime: 0
        )
        self.outputWidth = outputWidth
        self.outputHeight = outputHeight
    }

    /// Returns the output's luma size, so the work cannot be optimised away.
    func convert() -> Int {
        (try? converter.convert(frame, width: outputWidth, height: outputHeight))?.y.count ?? 0
    }
}
