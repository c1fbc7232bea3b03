import Media

#if canImport(Glibc)
    import Glibc
#endif

/// The mixer fed what ReplayKit delivers every 20 ms: the app's audio at 44.1 kHz stereo and
/// the microphone at 32 kHz mono, each resampled to 48 kHz and mixed into one stereo frame.
final class MixerState {
    private let mixer: AudioMixer
    private var app: AudioChunk
    private var mic: AudioChunk
    private var frame = MixedFrame()
    private var tick: UInt64 = 0

    init() throws {
        mixer = try AudioMixer()
        app = try AudioChunk(
            samples: Self.tone(frames: 882, channels: 2),
            sampleRate: 44_100,
            channels: 2,
            captureTime: 0
        )
        mic = try AudioChunk(
            samples: Self.tone(frames: 640, channels: 1),
            sampleRate: 32_000,
            channels: 1,
            captureTime: 0
        )
    }

    /// Pushes 20 ms from each source and mixes what is ready; returns the frames mixed.
    func mixNext() -> Int {
        tick += 1
        app.captureTime = tick * 20_000_000
        mic.captureTime = tick * 20_000_000
        do {
            try mixer.push(app, from: .app)
            try mixer.push(mic, from: .mic)
        } catch {
            return -1
        }
        var mixed = 0
        while mixer.mixNext(into: &frame) { mixed += 1 }
        return mixed
    }

    private static func tone(frames: Int, channels: Int) -> [Float] {
        (0..<(frames * channels)).map { index in Float(0.25 * sin(Double(index / channels) * 0.0627)) }
    }
}
