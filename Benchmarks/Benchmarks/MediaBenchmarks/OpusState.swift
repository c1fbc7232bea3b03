import Media

/// The product's Opus encoder (96 kbit/s, 20 ms, 48 kHz stereo) fed the benchmark input's audio
/// (the synthetic source's two tones and its beep each second), frame after frame: one iteration
/// is one 20 ms frame. `complexity` is the one setting that differs between the rows.
final class OpusState {
    private let encoder: OpusEncoder
    private let frames: [[Float]]
    private var packet = OpusPacket()
    private var index = 0

    /// 50 distinct frames, cycled: one second, beep included.
    static let distinctFrames = 50

    init(complexity: Int) throws {
        var configuration = OpusEncoder.Configuration()
        configuration.complexity = complexity
        encoder = try OpusEncoder(configuration: configuration)
        let source = try SyntheticScreenSource(width: 320, height: 180, frameRate: 30)
        let size = encoder.frameSize
        frames = (0..<Self.distinctFrames).map { frame in
            source.audioChunk(startSample: frame * size, frameCount: size, captureTime: 0).samples
        }
    }

    /// Encodes the next frame; returns the packet's length in bytes.
    func encodeNext() -> Int {
        let samples = frames[index % Self.distinctFrames]
        index += 1
        do {
            try samples.withUnsafeBufferPointer { pcm throws(MediaError) in
                try encoder.encode(pcm, captureTime: 0, into: &packet)
            }
        } catch {
            return -1
        }
        return packet.data.count
    }
}
