import Media

/// The largest input a receiver accepts. Every allocation the parser makes is bounded by these,
/// and each is checked against the header before a byte of the payload is buffered.
public struct IngestLimits: Sendable, Hashable {
    /// Largest picture width and height (a phone screen is under 3000 on its long side).
    public var maxWidth: Int
    public var maxHeight: Int
    /// How far a stride may exceed the bytes of one row (CoreVideo pads rows to 16–64 bytes).
    public var maxStridePadding: Int
    /// Largest audio chunk, in samples per channel (ReplayKit's are about 1024).
    public var maxAudioFrames: Int
    public var maxAudioChannels: Int

    public init(
        maxWidth: Int = 4096,
        maxHeight: Int = 4096,
        maxStridePadding: Int = 1024,
        maxAudioFrames: Int = 8192,
        maxAudioChannels: Int = 8
    ) {
        self.maxWidth = maxWidth
        self.maxHeight = maxHeight
        self.maxStridePadding = maxStridePadding
        self.maxAudioFrames = maxAudioFrames
        self.maxAudioChannels = maxAudioChannels
    }

    /// Sample rates accepted: what the audio pipeline can resample.
    public static let sampleRates = AudioChunk.sampleRateRange
    /// Largest hello payload: version 1 needs 72 bytes; later versions may add fields.
    public static let maxHelloPayload = 1024
    public static let maxControlPayload = IngestControl.fixedSize + IngestControl.maxTextBytes

    /// Rejects limits the pipeline cannot honour.
    public func validate() throws(IngestError) {
        guard (1...VideoFrame.maxDimension).contains(maxWidth), (1...VideoFrame.maxDimension).contains(maxHeight) else {
            throw IngestError(
                .invalidOption,
                "picture limit \(maxWidth)x\(maxHeight) is outside 1x1…\(VideoFrame.maxDimension)x\(VideoFrame.maxDimension)"
            )
        }
        guard (0...65_536).contains(maxStridePadding) else {
            throw IngestError(.invalidOption, "stride padding limit \(maxStridePadding) is outside 0…65536")
        }
        guard (1...1 << 20).contains(maxAudioFrames) else {
            throw IngestError(.invalidOption, "audio chunk limit \(maxAudioFrames) frames is outside 1…1048576")
        }
        guard AudioChunk.channelRange.contains(maxAudioChannels) else {
            throw IngestError(
                .invalidOption,
                "audio channel limit \(maxAudioChannels) is outside \(AudioChunk.channelRange)"
            )
        }
    }

    /// Largest video payload: the biggest format (BGRA) at the largest size with the widest strides.
    public var maxVideoPayload: Int {
        PixelFormat.allCases.map { format in
            format.planeGeometry(width: maxWidth, height: maxHeight).reduce(IngestVideo.fixedSize) { total, plane in
                total + (plane.minStride + maxStridePadding) * plane.rows
            }
        }.max() ?? IngestVideo.fixedSize
    }

    /// Largest audio payload: the longest chunk with the most channels in f32.
    public var maxAudioPayload: Int {
        IngestAudio.fixedSize + maxAudioFrames * maxAudioChannels * IngestSampleFormat.f32.bytesPerSample
    }

    /// Payload length range for a message type; nil for types this version does not know.
    public func payloadRange(for type: IngestMessageType) -> ClosedRange<Int>? {
        switch type {
        case .hello: 2...Self.maxHelloPayload
        case .video: IngestVideo.fixedSize...maxVideoPayload
        case .audio: IngestAudio.fixedSize...maxAudioPayload
        case .control: IngestControl.fixedSize...Self.maxControlPayload
        default: nil
        }
    }
}
