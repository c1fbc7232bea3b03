import Foundation
import Media

/// Signals, measurements and helpers shared by the audio tests.
enum AudioTestSupport {
    /// `frames` of a sine, interleaved over `channels` (all channels equal unless `phasePerChannel`).
    static func sine(
        frequency: Double,
        sampleRate: Int,
        frames: Int,
        channels: Int = 1,
        amplitude: Double = 0.5,
        startFrame: Int = 0
    ) -> [Float] {
        var out: [Float] = []
        out.reserveCapacity(frames * channels)
        for n in startFrame..<startFrame + frames {
            let value = Float(amplitude * sin(2 * Double.pi * frequency * Double(n) / Double(sampleRate)))
            for _ in 0..<channels { out.append(value) }
        }
        return out
    }

    /// Channel `channel` of interleaved audio.
    static func channel(_ samples: [Float], _ channel: Int, of channels: Int) -> [Float] {
        stride(from: channel, to: samples.count, by: channels).map { samples[$0] }
    }

    static func rms(_ samples: ArraySlice<Float>) -> Double {
        guard !samples.isEmpty else { return 0 }
        let sum = samples.reduce(0.0) { $0 + Double($1) * Double($1) }
        return (sum / Double(samples.count)).squareRoot()
    }

    static func rms(_ samples: [Float]) -> Double { rms(samples[...]) }

    static func decibels(_ ratio: Double) -> Double { 20 * log10(ratio) }

    /// Frequency from linearly interpolated upward zero crossings (mono samples): precise to a
    /// small fraction of a hertz over a second of a clean tone.
    static func zeroCrossingFrequency(_ samples: [Float], sampleRate: Int) -> Double {
        var crossings: [Double] = []
        for i in 1..<samples.count where samples[i - 1] < 0 && samples[i] >= 0 {
            let a = Double(samples[i - 1])
            let b = Double(samples[i])
            crossings.append(Double(i - 1) + (-a) / (b - a))
        }
        guard let first = crossings.first, let last = crossings.last, crossings.count > 1 else { return 0 }
        return Double(crossings.count - 1) * Double(sampleRate) / (last - first)
    }

    /// Amplitude of the component at `frequency` (Goertzel), for mono samples.
    static func toneAmplitude(_ samples: ArraySlice<Float>, frequency: Double, sampleRate: Int) -> Double {
        let w = 2 * Double.pi * frequency / Double(sampleRate)
        var re = 0.0
        var im = 0.0
        for (k, x) in samples.enumerated() {
            re += Double(x) * cos(w * Double(k))
            im -= Double(x) * sin(w * Double(k))
        }
        return 2 * (re * re + im * im).squareRoot() / Double(samples.count)
    }

    /// Normalised cross-correlation of two equally long signals at lag 0.
    static func correlation(_ a: ArraySlice<Float>, _ b: ArraySlice<Float>) -> Double {
        var ab = 0.0
        var aa = 0.0
        var bb = 0.0
        for (x, y) in zip(a, b) {
            ab += Double(x) * Double(y)
            aa += Double(x) * Double(x)
            bb += Double(y) * Double(y)
        }
        return ab / (aa * bb).squareRoot()
    }

    struct CommandFailed: Error, CustomStringConvertible {
        var description: String
    }

    /// Runs a program (found on PATH) through `Tool.run` and returns its standard output; throws
    /// with its standard error when it exits non-zero.
    static func run(_ program: String, _ arguments: [String]) throws -> Data {
        let result = try Tool.run(program, arguments)
        guard result.status == 0 else {
            throw CommandFailed(description: "\(program) exited \(result.status): \(result.stderr)")
        }
        return result.stdout
    }

    /// Little-endian s16 bytes to floats (÷32768).
    static func floats(fromS16LE data: Data) -> [Float] {
        var out: [Float] = []
        out.reserveCapacity(data.count / 2)
        data.withUnsafeBytes { raw in
            for i in 0..<raw.count / 2 {
                let value = Int16(littleEndian: raw.loadUnaligned(fromByteOffset: i * 2, as: Int16.self))
                out.append(Float(value) / 32768)
            }
        }
        return out
    }

    /// Little-endian byte helpers for hand-built headers.
    static func le16(_ value: Int) -> [UInt8] { [UInt8(value & 0xFF), UInt8((value >> 8) & 0xFF)] }
    static func le32(_ value: Int) -> [UInt8] { (0..<4).map { UInt8((value >> (8 * $0)) & 0xFF) } }
}

/// A fresh directory under the system temporary directory, removed with everything in it when
/// the value goes away. Suites keep one as a stored property: Swift Testing makes a new suite
/// instance per test, so each test gets its own directory and leaves nothing behind.
final class ScratchDirectory: Sendable {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("media-audio-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }
}
