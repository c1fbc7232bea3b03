import Media

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The audio ReplayKit hands a broadcast extension, made up: app audio at 44.1 kHz stereo s16
/// (a 440 Hz / 660 Hz tone with a 1 kHz beep in the first 100 ms of every second, the instants
/// the synthetic picture flashes, so a receiver can check sync), and microphone audio at 32 kHz
/// mono f32 (a quiet 300 Hz tone). Chunks cycle through uneven sizes as ReplayKit's do.
struct SimulatedAudio: Sendable {
    let source: AudioSource
    let sampleRate: Int
    let channels: Int
    let format: IngestSampleFormat

    /// Chunk sizes in samples per channel, used in turn.
    static let chunkSizes = [1024, 940, 1100]

    static let app = SimulatedAudio(source: .app, sampleRate: 44_100, channels: 2, format: .s16)
    static let mic = SimulatedAudio(source: .mic, sampleRate: 32_000, channels: 1, format: .f32)

    static func of(_ source: AudioSource) -> SimulatedAudio {
        source == .app ? app : mic
    }

    /// `frames` samples per channel starting at absolute sample `start` (sample 0 is t = 0).
    func samples(start: Int, frames: Int) -> IngestSamples {
        var values = [Float](repeating: 0, count: frames * channels)
        let rate = Double(sampleRate)
        let beepLength = sampleRate / 10
        let ramp = sampleRate / 500
        for i in 0..<frames {
            let s = start + i
            let t = Double(s) / rate
            switch source {
            case .app:
                var beep = 0.0
                let inSecond = s % sampleRate
                if inSecond < beepLength {
                    // 2 ms raised-cosine edges: a beep without clicks.
                    let edge = min(inSecond, beepLength - 1 - inSecond)
                    let gain = edge >= ramp ? 1.0 : 0.5 - 0.5 * cos(.pi * Double(edge) / Double(ramp))
                    beep = 0.4 * gain * sin(2 * .pi * 1000 * t)
                }
                values[2 * i] = Float(0.125 * sin(2 * .pi * 440 * t) + beep)
                values[2 * i + 1] = Float(0.125 * sin(2 * .pi * 660 * t) + beep)
            case .mic:
                values[i] = Float(0.1 * sin(2 * .pi * 300 * t))
            }
        }
        switch format {
        case .s16: return .s16(values.map { Int16(clamping: Int(($0 * 32767).rounded())) })
        case .f32: return .f32(values)
        }
    }
}
