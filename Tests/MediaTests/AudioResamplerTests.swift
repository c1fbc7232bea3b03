import Foundation
import Media
import Testing

@Suite("Audio resampler (speexdsp)")
struct AudioResamplerTests {
    typealias S = AudioTestSupport

    /// The uneven delivery pattern of the tests: tiny, odd, large, and 3-frame chunks in turn.
    static let pattern = [37, 441, 1024, 3]

    /// Feeds `input` in `pattern`-sized chunks with capture times that follow the input's own
    /// clock; returns the concatenated output and each call's (output offset, returned time).
    static func feed(
        _ resampler: AudioResampler,
        _ input: [Float],
        pattern: [Int],
        start: UInt64 = 1_000_000_000
    ) throws -> (output: [Float], marks: [(offset: Int, time: UInt64)]) {
        let channels = resampler.channels
        var output: [Float] = []
        var marks: [(Int, UInt64)] = []
        var scratch: [Float] = []
        var frame = 0
        var step = 0
        let frames = input.count / channels
        while frame < frames {
            let n = min(pattern[step % pattern.count], frames - frame)
            step += 1
            let time = start + UInt64(frame) * 1_000_000_000 / UInt64(resampler.inputRate)
            let outTime = try input.withUnsafeBufferPointer { buffer in
                try resampler.process(
                    UnsafeBufferPointer(rebasing: buffer[(frame * channels)..<((frame + n) * channels)]),
                    captureTime: time,
                    into: &scratch
                )
            }
            if !scratch.isEmpty { marks.append((output.count / channels, outTime)) }
            output += scratch
            frame += n
        }
        return (output, marks)
    }

    @Test(
        "a sine fed in uneven chunks comes out at 48 kHz with the same frequency and no seams",
        arguments: [(32_000, 1000.0, 1), (44_100, 997.0, 2), (44_100, 1000.0, 1), (16_000, 440.0, 2)]
    )
    func sineThroughUnevenChunks(rate: Int, frequency: Double, channels: Int) throws {
        let input = S.sine(frequency: frequency, sampleRate: rate, frames: rate * 2, channels: channels, amplitude: 0.8)
        let chunked = try Self.feed(AudioResampler(inputRate: rate, channels: channels), input, pattern: Self.pattern)
        let whole = try Self.feed(AudioResampler(inputRate: rate, channels: channels), input, pattern: [input.count])

        // Output length: the input's duration at 48 kHz, less what is still inside the filter.
        let expected = rate * 2 * 48_000 / rate
        #expect(chunked.output.count / channels <= expected)
        #expect(chunked.output.count / channels >= expected - 200)
        #expect(chunked.output.count == whole.output.count)

        // No seams: chunked delivery gives the same samples as one call.
        let worst = zip(chunked.output, whole.output).map { abs($0 - $1) }.max() ?? 1
        #expect(worst < 1e-5)

        for c in 0..<channels {
            let mono = S.channel(chunked.output, c, of: channels)
            // Skip the filter's start-up (its history begins as zeros).
            let steady = Array(mono[200...])
            let measured = S.zeroCrossingFrequency(steady, sampleRate: 48_000)
            #expect(abs(measured - frequency) < 0.01, "measured \(measured) Hz")
            // Level kept (passband is flat well above these tones).
            #expect(abs(S.decibels(S.rms(steady) / (0.8 / 2.0.squareRoot()))) < 0.1)
            // Largest step between neighbours is what the ideal sine allows at 48 kHz.
            let maxStep = zip(steady, steady.dropFirst()).map { abs($1 - $0) }.max() ?? 0
            let ideal = 0.8 * 2 * sin(Double.pi * frequency / 48_000)
            #expect(Double(maxStep) < ideal * 1.02)
        }
    }

    @Test("returned capture times place an impulse where it was captured, within a sample")
    func impulseTiming() throws {
        for rate in [32_000, 44_100, 22_050] {
            var input = [Float](repeating: 0, count: rate)
            let impulseFrame = rate / 3 + 7
            input[impulseFrame] = 1
            let start: UInt64 = 7_000_000_000
            let result = try Self.feed(
                AudioResampler(inputRate: rate, channels: 1),
                input,
                pattern: Self.pattern,
                start: start
            )
            let peak = result.output.indices.max { abs(result.output[$0]) < abs(result.output[$1]) } ?? 0
            // The output time of the peak, from the call that produced it.
            let mark = try #require(result.marks.last { $0.offset <= peak })
            let peakTime = Double(mark.time) + Double(peak - mark.offset) * 1e9 / 48_000
            let impulseTime = Double(start) + Double(impulseFrame) * 1e9 / Double(rate)
            #expect(abs(peakTime - impulseTime) <= 1e9 / 48_000, "rate \(rate): off by \(peakTime - impulseTime) ns")
        }
    }

    @Test("consecutive output blocks are stamped contiguously")
    func contiguousTimes() throws {
        let input = S.sine(frequency: 300, sampleRate: 44_100, frames: 44_100, channels: 2)
        let result = try Self.feed(AudioResampler(inputRate: 44_100, channels: 2), input, pattern: Self.pattern)
        let first = try #require(result.marks.first)
        for mark in result.marks {
            let predicted = Double(first.time) + Double(mark.offset - first.offset) * 1e9 / 48_000
            // Input times are whole nanoseconds (truncated), the mapping rounds: 2 ns at most.
            #expect(abs(Double(mark.time) - predicted) <= 2, "block at \(mark.offset)")
        }
    }

    @Test("48 kHz input bypasses the filter: same samples, same time")
    func bypass() throws {
        let resampler = try AudioResampler(inputRate: 48_000, channels: 2)
        #expect(resampler.isBypass && resampler.inputLatencyFrames == 0)
        let chunk = try AudioChunk(samples: [0.1, 0.2, 0.3, 0.4], sampleRate: 48_000, channels: 2, captureTime: 123)
        #expect(try resampler.process(chunk) == chunk)
    }

    @Test("the chunk convenience checks the format and returns a 48 kHz chunk")
    func chunkConvenience() throws {
        let resampler = try AudioResampler(inputRate: 32_000, channels: 1)
        #expect(!resampler.isBypass && resampler.inputLatencyFrames > 0)
        let chunk = try AudioChunk(
            samples: [Float](repeating: 0.25, count: 3200),
            sampleRate: 32_000,
            channels: 1,
            captureTime: 0
        )
        let out = try resampler.process(chunk)
        #expect(out.sampleRate == 48_000 && out.channels == 1)
        #expect(out.frameCount == 4800 - resampler.inputLatencyFrames * 3 / 2)
        let stereo = try AudioChunk(samples: [0, 0], sampleRate: 32_000, channels: 2, captureTime: 0)
        #expect {
            _ = try resampler.process(stereo)
        } throws: { error in
            (error as? MediaError)?.message == "chunk is 32000 Hz 2 ch, resampler takes 32000 Hz 1 ch"
        }
    }

    @Test("invalid settings and input are errors")
    func invalid() throws {
        #expect(throws: MediaError.self) { _ = try AudioResampler(inputRate: 7_999, channels: 1) }
        #expect(throws: MediaError.self) { _ = try AudioResampler(inputRate: 44_100, channels: 0) }
        #expect {
            _ = try AudioResampler(inputRate: 44_100, channels: 2, quality: 11)
        } throws: { error in
            (error as? MediaError)?.code == .invalidSetting
        }
        let resampler = try AudioResampler(inputRate: 44_100, channels: 2)
        var out: [Float] = []
        #expect {
            _ = try [Float](repeating: 0, count: 3).withUnsafeBufferPointer {
                try resampler.process($0, captureTime: 0, into: &out)
            }
        } throws: { error in
            (error as? MediaError)?.message == "3 samples is not a whole number of 2-channel frames"
        }
    }

    @Test("reset forgets the filter history: the next output matches a fresh resampler")
    func reset() throws {
        let input = S.sine(frequency: 440, sampleRate: 32_000, frames: 3200)
        let used = try AudioResampler(inputRate: 32_000, channels: 1)
        _ = try Self.feed(used, input, pattern: [1000])
        used.reset()
        let again = try Self.feed(used, input, pattern: [1000]).output
        let fresh = try Self.feed(AudioResampler(inputRate: 32_000, channels: 1), input, pattern: [1000]).output
        #expect(again == fresh)
    }
}
