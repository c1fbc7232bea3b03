import Media

/// What an audio body's fixed fields describe, checked.
struct AudioLayout {
    var source: AudioSource
    var format: IngestSampleFormat
    var channels: Int
    var sampleRate: Int
    var frameCount: Int
}

extension IngestParser {
    func audioLayout(_ header: IngestHeader, _ bytes: MessageBytes) throws(IngestError) -> AudioLayout {
        let b = Self.body
        let sourceCode: UInt8 = try bytes.integer(b, "audio.source")
        guard let source = AudioSource(wireCode: sourceCode) else {
            throw .field(.invalidField, "audio.source", at: b, "code \(sourceCode) is not 1 (app) or 2 (mic)")
        }
        let formatCode: UInt8 = try bytes.integer(b + 1, "audio.format")
        guard let format = IngestSampleFormat(rawValue: formatCode) else {
            throw .field(.invalidField, "audio.format", at: b + 1, "code \(formatCode) is not 1 (s16) or 2 (f32)")
        }
        let channels = Int(try bytes.integer(b + 2, "audio.channels", as: UInt16.self))
        guard (1...limits.maxAudioChannels).contains(channels) else {
            throw .field(
                .invalidField,
                "audio.channels",
                at: b + 2,
                "\(channels) is outside 1…\(limits.maxAudioChannels)"
            )
        }
        let rate = Int(try bytes.integer(b + 4, "audio.sampleRate", as: UInt32.self))
        guard IngestLimits.sampleRates.contains(rate) else {
            throw .field(
                .invalidField,
                "audio.sampleRate",
                at: b + 4,
                "\(rate) Hz is outside \(IngestLimits.sampleRates.lowerBound)…\(IngestLimits.sampleRates.upperBound)"
            )
        }
        let frames = Int(try bytes.integer(b + 8, "audio.frameCount", as: UInt32.self))
        guard frames > 0 else {
            throw .field(.invalidField, "audio.frameCount", at: b + 8, "a chunk cannot be empty")
        }
        guard frames <= limits.maxAudioFrames else {
            throw .field(
                .payloadTooLarge,
                "audio.frameCount",
                at: b + 8,
                "\(frames) frames is over the limit of \(limits.maxAudioFrames)"
            )
        }
        let expected = IngestAudio.fixedSize + frames * channels * format.bytesPerSample
        guard header.payloadLength == expected else {
            throw .field(
                .lengthMismatch,
                "length",
                at: 8,
                "a payload of \(header.payloadLength) bytes disagrees with the \(expected) bytes of \(frames) frames "
                    + "× \(channels) channels × \(format.bytesPerSample)-byte \(format) samples "
                    + "(\(IngestAudio.fixedSize) + samples)"
            )
        }
        return AudioLayout(source: source, format: format, channels: channels, sampleRate: rate, frameCount: frames)
    }

    func audio(_ header: IngestHeader, _ bytes: MessageBytes) throws(IngestError) -> IngestAudio {
        let layout = try audioLayout(header, bytes)
        let count = layout.frameCount * layout.channels
        let first = Self.body + IngestAudio.fixedSize
        let samples: IngestSamples
        switch layout.format {
        case .s16:
            var pcm = [Int16](repeating: 0, count: count)
            for i in 0..<count {
                pcm[i] = try bytes.integer(first + 2 * i, "audio.samples[\(i)]")
            }
            samples = .s16(pcm)
        case .f32:
            var pcm = [Float](repeating: 0, count: count)
            for i in 0..<count {
                let value = Float(bitPattern: try bytes.integer(first + 4 * i, "audio.samples[\(i)]"))
                // NaN or infinity would poison the mixer and the encoder for good.
                guard value.isFinite else {
                    throw .field(.invalidField, "audio.samples[\(i)]", at: first + 4 * i, "is not a finite number")
                }
                pcm[i] = value
            }
            samples = .f32(pcm)
        }
        return IngestAudio(
            source: layout.source,
            sampleRate: layout.sampleRate,
            channels: layout.channels,
            samples: samples,
            timestamp: header.timestamp,
            flags: header.flags
        )
    }
}
