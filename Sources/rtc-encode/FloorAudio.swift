import Media

/// The audio half of `rtc-encode floor --audio`: a 48 kHz stereo WAV read 20 ms at a time, as
/// rtc-publish's media loop reads it (`WAVReader`, 960 frames a chunk, capture times from 0), each
/// frame encoded by the product's `OpusEncoder` with the settings rtc-publish gives it (bitrate
/// and complexity from the options, the rest the defaults), the packet discarded.
///
/// No `AudioMixer`: a lone 48 kHz stereo source passes it unchanged (the resampler is bypassed
/// at 48 kHz, and the limiter leaves samples below −1 dBFS bit-exact), so Opus gets what
/// rtc-publish feeds it and the floor holds the encoders alone. Other formats would need the
/// mixer's conversion, so they are refused.
///
/// Not thread-safe: one floor run owns it.
final class FloorAudio {
    private let reader: WAVReader
    private let encoder: OpusEncoder
    private var chunk: AudioChunk
    /// Packet output, allocated once: the encode call allocates nothing.
    private let packet: UnsafeMutableBufferPointer<UInt8>
    /// True once the file has no whole 20 ms frame left.
    private var ended = false

    private(set) var frames = 0
    private(set) var bytes = 0
    /// The `opus_encode_float` call alone, per frame.
    private(set) var encodeNanoseconds: [UInt64] = []

    init(path: String, bitrate: Int, complexity: Int) throws(MediaError) {
        var configuration = OpusEncoder.Configuration()
        configuration.bitrate = bitrate
        configuration.complexity = complexity
        let encoder = try OpusEncoder(configuration: configuration)
        let reader = try WAVReader(path: path, framesPerChunk: encoder.frameSize)
        guard reader.sampleRate == OpusEncoder.sampleRate, reader.channels == OpusEncoder.channels else {
            throw MediaError(
                .invalidSetting,
                "\(path) is \(reader.sampleRate) Hz with \(reader.channels) channel(s); the floor takes "
                    + "\(OpusEncoder.sampleRate) Hz stereo only (anything else would need the mixer)"
            )
        }
        self.encoder = encoder
        self.reader = reader
        chunk = try AudioChunk(
            samples: [],
            sampleRate: OpusEncoder.sampleRate,
            channels: OpusEncoder.channels,
            captureTime: 0
        )
        chunk.samples.reserveCapacity(encoder.frameSize * OpusEncoder.channels)
        packet = .allocate(capacity: OpusEncoder.maxPacketBytes)
    }

    deinit { packet.deallocate() }

    /// Encodes every 20 ms frame whose capture time is at most `time` (`inclusive`) or before
    /// it, until the file ends. A last frame shorter than 20 ms is dropped, as the mixer would
    /// hold it back waiting for the rest.
    func encode(upTo time: UInt64, inclusive: Bool) throws(MediaError) {
        while !ended, inclusive ? reader.nextCaptureTime <= time : reader.nextCaptureTime < time {
            guard try reader.read(into: &chunk), chunk.frameCount == encoder.frameSize else {
                ended = true
                return
            }
            let before = MonotonicClock.now()
            let length = try chunk.samples.withUnsafeBufferPointer { (pcm) throws(MediaError) in
                try encoder.encode(pcm, into: packet)
            }
            encodeNanoseconds.append(MonotonicClock.now() - before)
            frames += 1
            bytes += length
        }
    }
}
