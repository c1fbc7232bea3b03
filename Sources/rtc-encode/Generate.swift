import ArgumentParser
import Media

#if canImport(Glibc)
    import Glibc
#endif

/// Writes the synthetic source to files, so every program in a benchmark reads the same frames
/// and samples: `in.y4m` and `in.wav` for rtc-publish and the encode floor, and the same bytes
/// headerless in `in.yuv` (I420) and `in.pcm` (s16le stereo, 48 kHz) for FFmpeg and GStreamer.
///
/// Frame `n` is stamped as captured at n / fps seconds, so the timecode strip and thus every
/// byte of the output is the same on every run and every machine.
struct Generate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write the synthetic screen and its audio to in.y4m, in.yuv, in.wav and in.pcm."
    )

    @Option(help: "How many seconds to write (1–60).")
    var seconds = 10
    @Option(help: "Frame size, WIDTHxHEIGHT.")
    var size = "1280x720"
    @Option(help: "Frame rate.")
    var fps = 30
    @Option(help: "Output directory (created if missing).")
    var out = "out/bench"

    mutating func run() throws {
        guard (1...60).contains(seconds) else { throw usageError("--seconds \(seconds) is outside 1...60") }
        let parts = size.split(separator: "x").compactMap { Int($0) }
        guard parts.count == 2, parts[0] > 0, parts[1] > 0 else {
            throw usageError("--size '\(size)' is not WIDTHxHEIGHT with positive numbers")
        }
        mkdir(out, 0o755)
        do {
            let source = try SyntheticScreenSource(width: parts[0], height: parts[1], frameRate: fps)
            let frames = try writeVideo(source, frames: seconds * fps)
            let samples = try writeAudio(source, samples: seconds * SyntheticScreenSource.audioSampleRate)
            print(
                "wrote \(frames) frames \(parts[0])x\(parts[1]) @ \(fps) fps and \(samples) stereo samples at 48 kHz "
                    + "to \(out)/in.{y4m,yuv,wav,pcm}"
            )
        } catch {
            var stderr = StandardError()
            print("rtc-encode: \(error.message)", to: &stderr)
            throw ExitCode(error.code == .invalidSetting || error.code == .invalidDimensions ? 2 : 1)
        }
    }

    private func writeVideo(_ source: SyntheticScreenSource, frames: Int) throws(MediaError) -> Int {
        let y4m = try Y4MWriter(path: "\(out)/in.y4m", width: source.width, height: source.height, frameRate: fps)
        let raw = try RawFileWriter(path: "\(out)/in.yuv")
        for index in 0..<frames {
            let frame = source.videoFrame(index: index, captureTime: UInt64(index) * 1_000_000_000 / UInt64(fps))
            try y4m.write(frame)
            try raw.writePlane(frame.y, stride: frame.strideY, width: frame.width, rows: frame.height)
            try raw.writePlane(frame.u, stride: frame.strideU, width: frame.chromaWidth, rows: frame.chromaHeight)
            try raw.writePlane(frame.v, stride: frame.strideV, width: frame.chromaWidth, rows: frame.chromaHeight)
        }
        return frames
    }

    /// The WAV and the raw PCM hold the same s16 samples: `WAVWriter` converts, and the raw file
    /// gets the bytes of the WAV's data chunk, converted by the same rule (×32768, rounded, clamped).
    private func writeAudio(_ source: SyntheticScreenSource, samples: Int) throws(MediaError) -> Int {
        let wav = try WAVWriter(path: "\(out)/in.wav", sampleRate: SyntheticScreenSource.audioSampleRate, channels: 2)
        let raw = try RawFileWriter(path: "\(out)/in.pcm")
        var bytes: [UInt8] = []
        var next = 0
        while next < samples {
            let count = min(960, samples - next)
            let chunk = source.audioChunk(
                startSample: next,
                frameCount: count,
                captureTime: UInt64(next) * 1_000_000 / 48
            )
            try wav.write(chunk)
            bytes.removeAll(keepingCapacity: true)
            for x in chunk.samples {
                let scaled = x.isNaN ? 0 : (x * 32768).rounded()
                let value = Int16(max(-32768, min(32767, scaled)))
                bytes.append(UInt8(truncatingIfNeeded: value))
                bytes.append(UInt8(truncatingIfNeeded: value >> 8))
            }
            try raw.write(bytes[...])
            next += count
        }
        try wav.finish()
        return samples
    }
}
