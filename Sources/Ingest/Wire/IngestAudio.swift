import Media

/// How samples are stored on the wire.
public enum IngestSampleFormat: UInt8, Sendable, Hashable, CustomStringConvertible {
    /// Signed 16-bit integers, little-endian.
    case s16 = 1
    /// IEEE 754 32-bit floats, little-endian, nominal range −1…1.
    case f32 = 2

    public var bytesPerSample: Int {
        switch self {
        case .s16: 2
        case .f32: 4
        }
    }

    public var description: String {
        switch self {
        case .s16: "s16"
        case .f32: "f32"
        }
    }
}

/// Interleaved samples in the format they travel in.
public enum IngestSamples: Sendable, Hashable {
    case s16([Int16])
    case f32([Float])

    public var format: IngestSampleFormat {
        switch self {
        case .s16: .s16
        case .f32: .f32
        }
    }

    public var count: Int {
        switch self {
        case .s16(let samples): samples.count
        case .f32(let samples): samples.count
        }
    }
}

/// An audio message: one chunk of interleaved PCM from the app or the microphone, with its
/// timestamp as sent.
///
/// Body:
/// ```
/// 0  source         u8: 1 app, 2 mic
/// 1  sample format  u8: 1 s16, 2 f32
/// 2  channels       u16
/// 4  sample rate    u32, Hz
/// 8  frame count    u32, samples per channel
/// 12 samples        frame count × channels × bytes per sample, interleaved
/// ```
public struct IngestAudio: Sendable, Hashable {
    public var source: AudioSource
    public var sampleRate: Int
    public var channels: Int
    public var samples: IngestSamples
    public var timestamp: IngestTimestamp
    public var flags: IngestFlags

    public init(
        source: AudioSource,
        sampleRate: Int,
        channels: Int,
        samples: IngestSamples,
        timestamp: IngestTimestamp,
        flags: IngestFlags = []
    ) {
        self.source = source
        self.sampleRate = sampleRate
        self.channels = channels
        self.samples = samples
        self.timestamp = timestamp
        self.flags = flags
    }

    /// Samples per channel.
    public var frameCount: Int { channels > 0 ? samples.count / channels : 0 }

    static let fixedSize = 12

    /// The chunk in the pipeline's float format, stamped with `captureTime` (ns, monotonic).
    public func chunk(captureTime: UInt64) throws(MediaError) -> AudioChunk {
        switch samples {
        case .s16(let pcm):
            return try AudioChunk(int16: pcm, sampleRate: sampleRate, channels: channels, captureTime: captureTime)
        case .f32(let pcm):
            return try AudioChunk(samples: pcm, sampleRate: sampleRate, channels: channels, captureTime: captureTime)
        }
    }
}

extension AudioSource {
    var wireCode: UInt8 {
        switch self {
        case .app: 1
        case .mic: 2
        }
    }

    init?(wireCode: UInt8) {
        switch wireCode {
        case 1: self = .app
        case 2: self = .mic
        default: return nil
        }
    }
}
