import CSpeexDSP

/// Converts interleaved float audio from any supported rate to 48 kHz, the one rate Opus and the
/// mixer use, through a speexdsp resampler that keeps its filter state between calls: chunks
/// of any size (3 frames, 4096 frames, changing every call) join without a seam.
///
/// **Quality.** Speex quality 0–10 trades filter length (so CPU) for pass-band width and
/// stop-band attenuation. The default, 5 ("desktop"), is chosen by measurement (see
/// `defaultQuality`).
///
/// **Timing.** The filter needs about half its length of input beyond the output sample it
/// computes. The initial zeros this would put at the front are skipped
/// (`speex_resampler_skip_zeros`), so output sample *k* is the signal at input position
/// *k · inputRate / 48000*: nothing is shifted, but the newest `inputLatencyFrames` of input are
/// still inside the filter after each call. The capture time returned with each output block
/// is therefore the time of its first sample exactly: the input chunk's capture time minus the
/// input that had entered the resampler but not yet come out (tracked as a rational count, so
/// it never drifts).
///
/// **Bypass.** At 48 kHz input the samples are copied through unchanged, with the same time.
///
/// Not thread-safe: a resampler belongs to one source in one task.
public final class AudioResampler {
    public static let outputRate = 48_000
    /// Chosen by measurement (release build, 1 s sines 44.1 kHz → 48 kHz, error against the
    /// ideal sine): quality 3 costs ~80 µs per 20 ms of stereo but already loses 0.6 dB at 19 kHz
    /// and 4.4 dB at 20 kHz; quality 5 costs ~135 µs, is flat to 19 kHz (−0.85 dB at 20 kHz,
    /// where Opus's full band ends) with 99–108 dB SNR below 15 kHz; quality 8 doubles the cost
    /// again for nothing a 96 kbit/s Opus stream keeps. 32 kHz mono costs only ~12 µs at
    /// quality 5: the 2:3 ratio is far cheaper per output sample than 44.1 kHz's 147:160.
    public static let defaultQuality = 5
    public static let qualityRange = 0...10

    public let inputRate: Int
    public let channels: Int
    public let quality: Int
    /// Input frames held inside the filter after each call (half the filter length); 0 in bypass.
    public let inputLatencyFrames: Int

    /// nil when `inputRate` is already 48 kHz.
    private let state: OpaquePointer?
    /// `consumed · 48000 − produced · inputRate`: how far the output lags the input, in units of
    /// 1 / (inputRate · 48000) s. An integer, so the time mapping is exact however long it runs.
    private var lag: Int64 = 0

    public init(inputRate: Int, channels: Int, quality: Int = defaultQuality) throws(MediaError) {
        guard AudioChunk.sampleRateRange.contains(inputRate) else {
            throw MediaError(.invalidAudio, "sample rate \(inputRate) Hz is outside \(AudioChunk.sampleRateRange)")
        }
        guard AudioChunk.channelRange.contains(channels) else {
            throw MediaError(.invalidAudio, "channel count \(channels) is outside \(AudioChunk.channelRange)")
        }
        guard Self.qualityRange.contains(quality) else {
            throw MediaError(.invalidSetting, "resampler quality \(quality) is outside \(Self.qualityRange)")
        }
        self.inputRate = inputRate
        self.channels = channels
        self.quality = quality
        guard inputRate != Self.outputRate else {
            state = nil
            inputLatencyFrames = 0
            return
        }
        var error: Int32 = 0
        let created = speex_resampler_init(
            UInt32(channels),
            UInt32(inputRate),
            UInt32(Self.outputRate),
            Int32(quality),
            &error
        )
        guard let created, error == 0 else {
            if let created { speex_resampler_destroy(created) }
            throw MediaError(.library, "speexdsp resampler \(inputRate) → 48000 Hz: \(Self.describe(error))")
        }
        speex_resampler_skip_zeros(created)
        state = created
        inputLatencyFrames = Int(speex_resampler_get_input_latency(created))
    }

    deinit {
        if let state { speex_resampler_destroy(state) }
    }

    public var isBypass: Bool { state == nil }

    /// Resamples `input` (interleaved, `channels` per frame, captured at `captureTime`) into
    /// `output`, which is emptied first but keeps its capacity: once it has grown to the largest
    /// chunk seen, the call allocates nothing. Returns the capture time of `output`'s first frame.
    public func process(
        _ input: UnsafeBufferPointer<Float>,
        captureTime: UInt64,
        into output: inout [Float]
    ) throws(MediaError) -> UInt64 {
        guard input.count % channels == 0 else {
            throw MediaError(
                .invalidAudio,
                "\(input.count) samples is not a whole number of \(channels)-channel frames"
            )
        }
        let frames = input.count / channels
        guard frames <= Int(Int32.max) else {
            throw MediaError(.invalidAudio, "\(frames) frames in one call is beyond the resampler's limit")
        }
        output.removeAll(keepingCapacity: true)
        guard let state, let inputBase = input.baseAddress else {
            output.append(contentsOf: input)
            return captureTime
        }
        let outputTime = captureTime &- UInt64(bitPattern: lagNanoseconds)

        var consumed = 0
        var produced = 0
        while consumed < frames {
            // Enough room for everything this input can yield, plus what the filter held back.
            let room = (frames - consumed) * Self.outputRate / inputRate + inputLatencyFrames + 4
            let start = output.count
            output.append(contentsOf: repeatElement(0, count: room * channels))
            var inLength = UInt32(frames - consumed)
            var outLength = UInt32(room)
            let status = output.withUnsafeMutableBufferPointer { out in
                speex_resampler_process_interleaved_float(
                    state,
                    inputBase + consumed * channels,
                    &inLength,
                    out.baseAddress.map { $0 + start },
                    &outLength
                )
            }
            guard status == 0 else {
                throw MediaError(.library, "speexdsp resampler: \(Self.describe(status))")
            }
            output.removeLast((room - Int(outLength)) * channels)
            consumed += Int(inLength)
            produced += Int(outLength)
            if inLength == 0 && outLength == 0 { break }
        }
        lag += Int64(consumed) * Int64(Self.outputRate) - Int64(produced) * Int64(inputRate)
        return outputTime
    }

    /// Resamples one chunk (which must have this resampler's rate and channel count).
    /// Allocates its result: for tests and cold paths.
    public func process(_ chunk: AudioChunk) throws(MediaError) -> AudioChunk {
        try chunk.validate()
        guard chunk.sampleRate == inputRate, chunk.channels == channels else {
            throw MediaError(
                .invalidAudio,
                "chunk is \(chunk.sampleRate) Hz \(chunk.channels) ch, resampler takes \(inputRate) Hz \(channels) ch"
            )
        }
        var output: [Float] = []
        let time = try chunk.samples.withUnsafeBufferPointer { (input) throws(MediaError) in
            try process(input, captureTime: chunk.captureTime, into: &output)
        }
        return try AudioChunk(samples: output, sampleRate: Self.outputRate, channels: channels, captureTime: time)
    }

    /// Forgets the filter history (for a source that restarts after a gap): the next call starts
    /// as fresh as the first.
    public func reset() {
        guard let state else { return }
        speex_resampler_reset_mem(state)
        speex_resampler_skip_zeros(state)
        lag = 0
    }

    /// The lag in nanoseconds, rounded to the nearest.
    private var lagNanoseconds: Int64 {
        let unit = Int64(inputRate) * Int64(Self.outputRate)
        // |lag| stays below a filter length times the rates (~10^7), so this cannot overflow.
        return (lag * 1_000_000_000 + unit / 2) / unit
    }

    static func describe(_ code: Int32) -> String {
        guard let text = speex_resampler_strerror(code) else { return "error \(code)" }
        return String(cString: text)
    }
}
