/// Writes interleaved float PCM to a WAV file as s16 (format tag 1) or IEEE float32 (tag 3),
/// for tests and tools. The RIFF and data sizes are patched in by `finish()` (called by
/// `deinit` if the caller did not, errors then being lost).
///
/// Float files carry the `fact` chunk the RIFF specification asks of non-PCM formats.
public final class WAVWriter {
    public let sampleRate: Int
    public let channels: Int
    public let sampleFormat: WAVFormat.SampleFormat

    private let file: POSIXFile
    private let dataOffset: Int
    private var dataBytes = 0
    private var finished = false
    /// Converted bytes of one write, reused.
    private var scratch: [UInt8] = []

    /// A RIFF size field is 32 bits; stop well before it would wrap.
    static let maxDataBytes = Int(UInt32.max) - 1024

    public init(
        path: String,
        sampleRate: Int,
        channels: Int,
        format: WAVFormat.SampleFormat = .int16
    ) throws(MediaError) {
        guard AudioChunk.sampleRateRange.contains(sampleRate) else {
            throw MediaError(.invalidAudio, "sample rate \(sampleRate) Hz is outside \(AudioChunk.sampleRateRange)")
        }
        guard AudioChunk.channelRange.contains(channels) else {
            throw MediaError(.invalidAudio, "channel count \(channels) is outside \(AudioChunk.channelRange)")
        }
        self.sampleRate = sampleRate
        self.channels = channels
        self.sampleFormat = format
        self.file = try POSIXFile(path: path, mode: .write)
        let header = Self.header(sampleRate: sampleRate, channels: channels, format: format, dataBytes: 0)
        self.dataOffset = header.count
        try file.write(header, at: 0)
    }

    deinit {
        if !finished { try? finish() }
    }

    /// Appends interleaved samples; the count must be a whole number of frames. Floats are
    /// clamped to −1…1 for s16 (NaN becomes 0) and written as they are for float32.
    public func write(_ samples: UnsafeBufferPointer<Float>) throws(MediaError) {
        guard !finished else {
            throw MediaError(.io, "\(file.displayName): write after finish")
        }
        guard samples.count % channels == 0 else {
            throw MediaError(
                .invalidAudio,
                "\(samples.count) samples is not a whole number of \(channels)-channel frames"
            )
        }
        let bytes = samples.count * sampleFormat.bytesPerSample
        guard dataBytes + bytes <= Self.maxDataBytes else {
            throw MediaError(.invalidAudio, "\(file.displayName): WAV data would exceed the 4 GiB RIFF limit")
        }
        scratch.removeAll(keepingCapacity: true)
        switch sampleFormat {
        case .int16:
            for x in samples {
                let scaled = x.isNaN ? 0 : (x * 32768).rounded()
                let value = Int16(max(-32768, min(32767, scaled)))
                scratch.append(UInt8(truncatingIfNeeded: value))
                scratch.append(UInt8(truncatingIfNeeded: value >> 8))
            }
        case .float32:
            for x in samples {
                let bits = x.bitPattern
                for shift in stride(from: 0, to: 32, by: 8) {
                    scratch.append(UInt8(truncatingIfNeeded: bits >> UInt32(shift)))
                }
            }
        }
        try file.write(scratch, at: dataOffset + dataBytes)
        dataBytes += bytes
    }

    public func write(_ samples: [Float]) throws(MediaError) {
        try samples.withUnsafeBufferPointer { (buffer) throws(MediaError) in try write(buffer) }
    }

    /// Appends a chunk, which must have this file's rate and channel count.
    public func write(_ chunk: AudioChunk) throws(MediaError) {
        try chunk.validate()
        guard chunk.sampleRate == sampleRate, chunk.channels == channels else {
            throw MediaError(
                .invalidAudio,
                "chunk is \(chunk.sampleRate) Hz \(chunk.channels) ch, file is \(sampleRate) Hz \(channels) ch"
            )
        }
        try write(chunk.samples)
    }

    /// Pads the data to an even length and writes the final sizes into the header.
    public func finish() throws(MediaError) {
        guard !finished else { return }
        finished = true
        if dataBytes & 1 == 1 {
            try file.write([0], at: dataOffset + dataBytes)
        }
        let header = Self.header(sampleRate: sampleRate, channels: channels, format: sampleFormat, dataBytes: dataBytes)
        try file.write(header, at: 0)
    }

    /// `RIFF size WAVE`, `fmt ` (16 bytes for PCM; 18 with cbSize 0 for float), `fact` for
    /// float, then the `data` chunk header.
    static func header(sampleRate: Int, channels: Int, format: WAVFormat.SampleFormat, dataBytes: Int) -> [UInt8] {
        var out: [UInt8] = []
        func append32(_ value: Int) {
            for shift in stride(from: 0, to: 32, by: 8) { out.append(UInt8(truncatingIfNeeded: value >> shift)) }
        }
        func append16(_ value: Int) {
            out.append(UInt8(truncatingIfNeeded: value))
            out.append(UInt8(truncatingIfNeeded: value >> 8))
        }
        let isFloat = format == .float32
        let fmtSize = isFloat ? 18 : 16
        let factChunkBytes = isFloat ? 12 : 0
        let blockAlign = channels * format.bytesPerSample
        let riffSize = 4 + (8 + fmtSize) + factChunkBytes + 8 + dataBytes + (dataBytes & 1)
        out += Array("RIFF".utf8)
        append32(riffSize)
        out += Array("WAVEfmt ".utf8)
        append32(fmtSize)
        append16(isFloat ? 3 : 1)
        append16(channels)
        append32(sampleRate)
        append32(sampleRate * blockAlign)
        append16(blockAlign)
        append16(format.bytesPerSample * 8)
        if isFloat {
            append16(0)
            out += Array("fact".utf8)
            append32(4)
            append32(dataBytes / blockAlign)
        }
        out += Array("data".utf8)
        append32(dataBytes)
        return out
    }
}
