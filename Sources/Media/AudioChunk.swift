/// Interleaved PCM audio as it moves through the pipeline, in 32-bit float (nominal range −1…1).
///
/// Sources that deliver s16 convert once on entry; everything after (upmix, resample, mix,
/// Opus) works in float so that summing two sources can exceed full scale without wrapping
/// and the limiter decides what to do with it.
public struct AudioChunk: Sendable, Equatable {
    /// Interleaved samples: frame 0 channel 0, frame 0 channel 1, …
    public var samples: [Float]
    public var sampleRate: Int
    public var channels: Int
    /// Capture time of the first sample, in nanoseconds on the monotonic clock.
    public var captureTime: UInt64

    public static let sampleRateRange = 8_000...192_000
    public static let channelRange = 1...8

    /// Validates the format; the sample count must be a whole number of frames.
    public init(samples: [Float], sampleRate: Int, channels: Int, captureTime: UInt64) throws(MediaError) {
        self.samples = samples
        self.sampleRate = sampleRate
        self.channels = channels
        self.captureTime = captureTime
        try validate()
    }

    /// Checks what the initialiser checks. The fields are mutable, so a chunk that reaches a
    /// consumer may have changed since it was made; the audio consumers call this before
    /// dividing by its rate or channel count.
    public func validate() throws(MediaError) {
        guard Self.sampleRateRange.contains(sampleRate) else {
            throw MediaError(.invalidAudio, "sample rate \(sampleRate) Hz is outside \(Self.sampleRateRange)")
        }
        guard Self.channelRange.contains(channels) else {
            throw MediaError(.invalidAudio, "channel count \(channels) is outside \(Self.channelRange)")
        }
        guard samples.count % channels == 0 else {
            throw MediaError(
                .invalidAudio,
                "\(samples.count) samples is not a whole number of \(channels)-channel frames"
            )
        }
    }

    /// Samples per channel.
    public var frameCount: Int { samples.count / channels }

    /// Duration in nanoseconds.
    public var duration: UInt64 { UInt64(frameCount) * 1_000_000_000 / UInt64(sampleRate) }

    /// Converts signed 16-bit interleaved samples (as WAV and the ingest socket carry them).
    public init(
        int16 pcm: some Collection<Int16>,
        sampleRate: Int,
        channels: Int,
        captureTime: UInt64
    )
        throws(MediaError)
    {
        let scale: Float = 1.0 / 32768.0
        try self.init(
            samples: pcm.map { Float($0) * scale },
            sampleRate: sampleRate,
            channels: channels,
            captureTime: captureTime
        )
    }
}

extension AudioChunk {
    /// For producers whose format is correct by construction; skips validation.
    init(uncheckedSamples samples: [Float], sampleRate: Int, channels: Int, captureTime: UInt64) {
        self.samples = samples
        self.sampleRate = sampleRate
        self.channels = channels
        self.captureTime = captureTime
    }
}
