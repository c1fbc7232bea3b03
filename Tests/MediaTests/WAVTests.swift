import Foundation
import Testing

@testable import Media

@Suite("WAV reader and writer")
struct WAVTests {
    typealias S = AudioTestSupport
    let scratch: ScratchDirectory

    init() throws {
        scratch = try ScratchDirectory()
    }

    /// Reads every chunk of a file into one interleaved array.
    static func readAll(_ reader: WAVReader) throws -> [Float] {
        var all: [Float] = []
        while let chunk = try reader.nextChunk() { all += chunk.samples }
        return all
    }

    func write(_ bytes: [UInt8], named name: String) throws -> String {
        let path = scratch.path(name)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// A canonical 44-byte header plus `dataBytes` zero bytes, with fields to break.
    static func wavBytes(
        tag: Int = 1,
        channels: Int = 2,
        rate: Int = 44_100,
        bits: Int = 16,
        blockAlign: Int? = nil,
        dataBytes: Int = 400,
        claimedData: Int? = nil
    ) -> [UInt8] {
        let align = blockAlign ?? channels * bits / 8
        var b = Array("RIFF".utf8) + S.le32(36 + dataBytes) + Array("WAVEfmt ".utf8) + S.le32(16)
        b += S.le16(tag) + S.le16(channels) + S.le32(rate) + S.le32(rate * align) + S.le16(align) + S.le16(bits)
        b += Array("data".utf8) + S.le32(claimedData ?? dataBytes) + [UInt8](repeating: 0, count: dataBytes)
        return b
    }

    func expectError(
        _ bytes: [UInt8],
        code: MediaError.Code,
        _ text: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let path = try write(bytes, named: "broken.wav")
        do {
            _ = try WAVReader(path: path)
            Issue.record("expected \(code) containing \"\(text)\"", sourceLocation: sourceLocation)
        } catch {
            #expect(error.code == code, sourceLocation: sourceLocation)
            #expect(error.message.contains(text), "\(error.message)", sourceLocation: sourceLocation)
            #expect(error.message.hasPrefix("broken.wav: "), "\(error.message)", sourceLocation: sourceLocation)
        }
    }

    @Test("s16 stereo at 44.1 kHz round-trips within s16 quantisation, in chunks with exact times")
    func s16Stereo() throws {
        let path = scratch.path("s16.wav")
        let input = S.sine(frequency: 1000, sampleRate: 44_100, frames: 1050, channels: 2, amplitude: 0.7)
        let writer = try WAVWriter(path: path, sampleRate: 44_100, channels: 2, format: .int16)
        try writer.write(input)
        try writer.finish()

        let reader = try WAVReader(path: path, framesPerChunk: 100, startTime: 5_000_000_000)
        #expect(reader.format.sampleFormat == .int16)
        #expect(reader.format.frameCount == 1050)
        var chunks: [AudioChunk] = []
        while let chunk = try reader.nextChunk() { chunks.append(chunk) }
        #expect(chunks.map(\.frameCount) == Array(repeating: 100, count: 10) + [50])
        for (i, chunk) in chunks.enumerated() {
            #expect(chunk.captureTime == 5_000_000_000 + UInt64(i * 100) * 1_000_000_000 / 44_100)
            #expect(chunk.sampleRate == 44_100 && chunk.channels == 2)
        }
        let output = chunks.flatMap(\.samples)
        #expect(output.count == input.count)
        let worst = zip(input, output).map { abs($0 - $1) }.max() ?? 1
        #expect(worst <= 0.5 / 32768 + 1e-7)
    }

    @Test("float32 at odd rates and channel counts round-trips bit-exact")
    func float32() throws {
        for (rate, channels) in [(22_050, 1), (37_800, 3), (96_000, 6), (8_000, 8)] {
            let path = scratch.path("f32.wav")
            var rng = SplitMix64(seed: UInt64(rate))
            let input = (0..<(rate / 10) * channels).map { _ in Float.random(in: -1.5...1.5, using: &rng) }
            let writer = try WAVWriter(path: path, sampleRate: rate, channels: channels, format: .float32)
            try writer.write(input)
            try writer.finish()
            let reader = try WAVReader(path: path, framesPerChunk: 333)
            #expect(reader.format.sampleFormat == .float32)
            #expect(reader.sampleRate == rate && reader.channels == channels)
            #expect(try Self.readAll(reader) == input)
        }
    }

    @Test("loop wraps to the start of the data and the timeline keeps counting")
    func loop() throws {
        let path = scratch.path("loop.wav")
        let input = (0..<300).map { Float($0) / 1024 }
        let writer = try WAVWriter(path: path, sampleRate: 16_000, channels: 1, format: .float32)
        try writer.write(input)
        try writer.finish()

        let reader = try WAVReader(path: path, framesPerChunk: 128, startTime: 0, loop: true)
        var output: [Float] = []
        var times: [UInt64] = []
        var chunk = try AudioChunk(samples: [], sampleRate: 16_000, channels: 1, captureTime: 0)
        for _ in 0..<5 {
            #expect(try reader.read(into: &chunk))
            #expect(chunk.frameCount == 128)
            output += chunk.samples
            times.append(chunk.captureTime)
        }
        #expect(output == (0..<640).map { Float($0 % 300) / 1024 })
        let expectedTimes: [UInt64] = (0..<5).map { (index: Int) -> UInt64 in
            UInt64(index * 128 * 1_000_000_000 / 16_000)
        }
        #expect(times == expectedTimes)
    }

    @Test("a file written by ffmpeg (with its LIST chunk) reads as a 1 kHz tone")
    func ffmpegFile() throws {
        let path = scratch.path("ffmpeg.wav")
        _ = try S.run(
            "ffmpeg",
            ["-v", "error", "-f", "lavfi", "-i", "sine=frequency=1000:sample_rate=44100", "-t", "1", path]
        )
        let reader = try WAVReader(path: path, framesPerChunk: 4096)
        #expect(reader.format.sampleFormat == .int16 && reader.channels == 1 && reader.sampleRate == 44_100)
        #expect(reader.format.frameCount == 44_100)
        let samples = try Self.readAll(reader)
        #expect(samples.count == 44_100)
        #expect(abs(S.zeroCrossingFrequency(samples, sampleRate: 44_100) - 1000) < 0.05)
    }

    @Test("ffmpeg's WAVE_FORMAT_EXTENSIBLE float 5.1 file reads with the right layout")
    func ffmpegExtensible() throws {
        let path = scratch.path("surround.wav")
        _ = try S.run(
            "ffmpeg",
            [
                "-v", "error", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000", "-t", "0.5",
                "-af", "pan=5.1|c0=c0|c1=0*c0|c2=0*c0|c3=0*c0|c4=0*c0|c5=0*c0", "-c:a", "pcm_f32le", path,
            ]
        )
        let header = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(header[20] == 0xFE && header[21] == 0xFF)  // the file really is EXTENSIBLE
        let reader = try WAVReader(path: path, framesPerChunk: 1000)
        #expect(reader.format.sampleFormat == .float32 && reader.channels == 6)
        let samples = try Self.readAll(reader)
        let front = S.channel(samples, 0, of: 6)
        #expect(front.count == 24_000)
        #expect(abs(S.zeroCrossingFrequency(front, sampleRate: 48_000) - 440) < 0.05)
        #expect(S.rms(S.channel(samples, 1, of: 6)) == 0)
    }

    @Test("unknown chunks are skipped, odd sizes padded")
    func oddChunkPadding() throws {
        var bytes = Array("RIFF".utf8) + S.le32(0) + Array("WAVE".utf8)
        bytes += Array("LIST".utf8) + S.le32(5) + [1, 2, 3, 4, 5, 0]  // 5 bytes + pad
        bytes += Array("fmt ".utf8) + S.le32(16) + S.le16(1) + S.le16(1) + S.le32(8000) + S.le32(16000)
        bytes += S.le16(2) + S.le16(16)
        bytes += Array("junk".utf8) + S.le32(1) + [9, 0]
        bytes += Array("data".utf8) + S.le32(4) + [0x00, 0x40, 0x00, 0xC0]
        let reader = try WAVReader(path: try write(bytes, named: "odd.wav"))
        #expect(try Self.readAll(reader) == [0.5, -0.5])
    }

    @Test("WAVE_FORMAT_EXTENSIBLE with a float subformat written by hand")
    func extensibleByHand() throws {
        var bytes = Array("RIFF".utf8) + S.le32(0) + Array("WAVEfmt ".utf8) + S.le32(40)
        bytes += S.le16(0xFFFE) + S.le16(1) + S.le32(48_000) + S.le32(192_000) + S.le16(4) + S.le16(32)
        bytes += S.le16(22) + S.le16(32) + S.le32(4)
        bytes += S.le16(3) + [0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71]
        bytes += Array("data".utf8) + S.le32(4) + [0x00, 0x00, 0x80, 0x3F]  // 1.0f
        let reader = try WAVReader(path: try write(bytes, named: "ext.wav"))
        #expect(reader.format.sampleFormat == .float32)
        #expect(try Self.readAll(reader) == [1.0])
    }

    @Test("broken headers throw errors that name the problem")
    func brokenHeaders() throws {
        try expectError(
            Array("RIFF".utf8) + [0, 0, 0, 0],
            code: .truncated,
            "RIFF header: file has 8 bytes, needs 12"
        )
        try expectError(
            Array("RIFX".utf8) + [0, 0, 0, 0] + Array("WAVE".utf8),
            code: .badHeader,
            "RIFX (big-endian"
        )
        try expectError(
            Array("OggS".utf8) + [0, 0, 0, 0, 0, 0, 0, 0],
            code: .badHeader,
            "not a RIFF file (starts with 'OggS')"
        )
        try expectError(
            Array("RIFF".utf8) + [0, 0, 0, 0] + Array("AVI ".utf8),
            code: .badHeader,
            "form type is 'AVI '"
        )
        try expectError(
            Array("RIFF".utf8) + S.le32(12) + Array("WAVE".utf8) + Array("data".utf8) + S.le32(0),
            code: .badHeader,
            "missing fmt chunk before the data chunk at byte 12"
        )
        try expectError(
            Array("RIFF".utf8) + S.le32(12) + Array("WAVE".utf8) + Array("LIST".utf8) + S.le32(2) + [0, 0],
            code: .badHeader,
            "missing fmt chunk"
        )
        try expectError(
            Self.wavBytes(tag: 2, bits: 4),
            code: .badHeader,
            "fmt chunk: unsupported format tag 2 (ADPCM)"
        )
        try expectError(Self.wavBytes(tag: 0x55), code: .badHeader, "unsupported format tag 85 (MP3)")
        try expectError(
            Self.wavBytes(dataBytes: 4096, claimedData: 1_000_000),
            code: .truncated,
            "data chunk claims 1000000 bytes, file has 4096"
        )
        try expectError(Self.wavBytes(channels: 0, blockAlign: 2), code: .badHeader, "fmt chunk: channel count 0")
        try expectError(Self.wavBytes(channels: 9), code: .badHeader, "channel count 9 is outside 1...8")
        try expectError(Self.wavBytes(bits: 24), code: .badHeader, "PCM with 24 bits per sample unsupported")
        try expectError(
            Self.wavBytes(tag: 3, bits: 64),
            code: .badHeader,
            "IEEE float with 64 bits per sample unsupported"
        )
        try expectError(Self.wavBytes(rate: 4000), code: .badHeader, "sample rate 4000 Hz is outside")
        try expectError(Self.wavBytes(blockAlign: 3), code: .badHeader, "block align 3, expected 4")
        var noData = Self.wavBytes()
        noData.removeLast(408)
        try expectError(noData, code: .badHeader, "missing data chunk")
        var shortFmt = Self.wavBytes()
        shortFmt.replaceSubrange(16..<20, with: S.le32(12))
        try expectError(shortFmt, code: .badHeader, "fmt chunk is 12 bytes, needs at least 16")
        var hugeList = Array("RIFF".utf8) + S.le32(0) + Array("WAVE".utf8)
        hugeList += Array("LIST".utf8) + S.le32(0x7FFF_0000) + [0, 0]
        try expectError(hugeList, code: .truncated, "'LIST' chunk at byte 12 claims 2147418112 bytes, file has 2")
    }

    @Test("a missing file is an I/O error naming the path")
    func missingFile() {
        #expect {
            _ = try WAVReader(path: "/nonexistent/dir/none.wav")
        } throws: { error in
            guard let error = error as? MediaError else { return false }
            return error.code == .io && error.message.contains("/nonexistent/dir/none.wav: cannot open")
        }
    }

    @Test("every truncation and 3000 random corruptions of a valid file either parse or throw, never crash")
    func corruptionNeverCrashes() throws {
        let valid = Self.wavBytes(channels: 2, dataBytes: 64)
        let path = scratch.path("mutant.wav")
        func attempt(_ bytes: [UInt8]) throws -> Bool {
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            do {
                let reader = try WAVReader(path: path, framesPerChunk: 7)
                while try reader.nextChunk() != nil {}
                return true
            } catch {
                #expect([.truncated, .badHeader].contains(error.code), "\(error)")
                #expect(error.message.hasPrefix("mutant.wav: "))
                return false
            }
        }
        for length in 0..<valid.count {
            let parsed = try attempt(Array(valid[0..<length]))
            // Up to the data chunk header the file cannot parse; after it, it is a short data chunk.
            #expect(parsed == false, "prefix of \(length) bytes")
        }
        #expect(try attempt(valid))
        var rng = SplitMix64(seed: 42)
        for _ in 0..<3000 {
            var bytes = valid
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                bytes[Int.random(in: 0..<44, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
            }
            _ = try attempt(bytes)
        }
    }

    @Test("reader and writer reject bad settings")
    func badSettings() throws {
        let path = scratch.path("x.wav")
        #expect(throws: MediaError.self) { _ = try WAVWriter(path: path, sampleRate: 0, channels: 2) }
        #expect(throws: MediaError.self) { _ = try WAVWriter(path: path, sampleRate: 48_000, channels: 9) }
        let writer = try WAVWriter(path: path, sampleRate: 48_000, channels: 2)
        #expect(throws: MediaError.self) { try writer.write([0.1, 0.2, 0.3]) }
        try writer.write([0.25, -0.25])
        try writer.finish()
        #expect(throws: MediaError.self) { _ = try WAVReader(path: path, framesPerChunk: 0) }
        #expect(try Self.readAll(WAVReader(path: path)) == [0.25, -0.25])
    }
}
