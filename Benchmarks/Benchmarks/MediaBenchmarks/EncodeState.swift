import Media

/// The product's H.264 encoder fed the synthetic screen source's frames in order, as a stream
/// (P frames, with an IDR every 60): one iteration is one frame.
final class EncodeState {
    private let encoder: H264Encoder
    private var frames: [VideoFrame]
    private var index = 0

    /// 30 distinct frames, cycled: one second of scrolling, the moving video window and cursor.
    static let distinctFrames = 30

    init(preset: String) throws {
        encoder = try H264Encoder(
            H264Encoder.Configuration(bitrateKbps: 2500, keyFrameInterval: 60, preset: preset, threads: 1)
        )
        let source = try SyntheticScreenSource(width: 1280, height: 720, frameRate: 30)
        frames = (0..<Self.distinctFrames).map { source.videoFrame(index: $0, captureTime: 0) }
    }

    /// Encodes the next frame; returns its size in bytes.
    func encodeNext() -> Int {
        let slot = index % Self.distinctFrames
        frames[slot].captureTime = UInt64(index) * 33_333_333
        index += 1
        return (try? encoder.encode(frames[slot]))?.data.count ?? 0
    }
}
