import COpus

/// A libopus decoder to interleaved float: the tests' check on our encoder, and the receiver
/// tool's decoder.
///
/// Not thread-safe: a decoder belongs to one task (and one stream: it keeps state).
public final class OpusDecoder {
    /// 120 ms at 48 kHz, the longest an Opus packet can decode to (RFC 6716 §3.2.5).
    public static let maxFrameSize = 5760
    public static let sampleRates = [8_000, 12_000, 16_000, 24_000, 48_000]

    public let sampleRate: Int
    public let channels: Int

    private let decoder: OpaquePointer
    /// Output of the array-returning variant, allocated once.
    private var scratch: [Float]

    public init(sampleRate: Int = 48_000, channels: Int = 2) throws(MediaError) {
        guard Self.sampleRates.contains(sampleRate) else {
            throw MediaError(.invalidSetting, "Opus decoder rate \(sampleRate) Hz is not one of \(Self.sampleRates)")
        }
        guard channels == 1 || channels == 2 else {
            throw MediaError(.invalidSetting, "Opus decoder channel count \(channels) is not 1 or 2")
        }
        var error: Int32 = 0
        guard let created = opus_decoder_create(Int32(sampleRate), Int32(channels), &error), error == OPUS_OK else {
            throw MediaError(.library, "opus_decoder_create: \(OpusEncoder.describe(error))")
        }
        decoder = created
        self.sampleRate = sampleRate
        self.channels = channels
        scratch = [Float](repeating: 0, count: Self.maxFrameSize * channels)
    }

    deinit {
        opus_decoder_destroy(decoder)
    }

    /// Decodes `packet` into `output` (interleaved); returns samples per channel. `output`
    /// should hold 120 ms (`maxFrameSize × channels`) to take any packet.
    public func decode(
        _ packet: UnsafeBufferPointer<UInt8>,
        into output: UnsafeMutableBufferPointer<Float>
    ) throws(MediaError) -> Int {
        let (data, length) = try Self.check(packet)
        return try run(data, length, output, fec: false)
    }

    /// Recovers a lost packet of `frameSize` samples per channel from the in-band FEC copy that
    /// the packet after it carries (RFC 6716 §2.1.7); without FEC data libopus conceals instead.
    /// Decode `nextPacket` normally afterwards.
    public func recoverLost(
        frameSize: Int,
        from nextPacket: UnsafeBufferPointer<UInt8>,
        into output: UnsafeMutableBufferPointer<Float>
    ) throws(MediaError) -> Int {
        let (data, length) = try Self.check(nextPacket)
        return try run(data, length, try window(output, frameSize: frameSize), fec: true)
    }

    /// Packet-loss concealment: synthesises `frameSize` samples per channel for a packet that
    /// never arrived.
    public func concealLoss(frameSize: Int, into output: UnsafeMutableBufferPointer<Float>) throws(MediaError) -> Int {
        try run(nil, 0, try window(output, frameSize: frameSize), fec: false)
    }

    /// The first `frameSize` frames of `output`: libopus takes the length of a lost packet from
    /// the output size it is given.
    private func window(
        _ output: UnsafeMutableBufferPointer<Float>,
        frameSize: Int
    ) throws(MediaError) -> UnsafeMutableBufferPointer<Float> {
        guard frameSize > 0, frameSize <= Self.maxFrameSize, frameSize % 120 == 0 else {
            throw MediaError(
                .invalidSetting,
                "lost frame of \(frameSize) samples is not a multiple of 2.5 ms up to \(Self.maxFrameSize)"
            )
        }
        guard frameSize * channels <= output.count else {
            throw MediaError(.invalidAudio, "output holds \(output.count) samples, needs \(frameSize * channels)")
        }
        return UnsafeMutableBufferPointer(rebasing: output[0..<frameSize * channels])
    }

    private static func check(_ packet: UnsafeBufferPointer<UInt8>) throws(MediaError) -> (UnsafePointer<UInt8>, Int32)
    {
        guard let data = packet.baseAddress, !packet.isEmpty else {
            throw MediaError(.invalidAudio, "empty Opus packet")
        }
        guard packet.count <= Int(Int32.max) else {
            throw MediaError(.invalidAudio, "Opus packet of \(packet.count) bytes is too large")
        }
        return (data, Int32(packet.count))
    }

    /// Convenience for tests and cold paths: decodes into a new array.
    public func decode(_ packet: [UInt8]) throws(MediaError) -> [Float] {
        let frames = try packet.withUnsafeBufferPointer { (input) throws(MediaError) in
            try scratch.withUnsafeMutableBufferPointer { (output) throws(MediaError) in
                try decode(input, into: output)
            }
        }
        return Array(scratch[0..<frames * channels])
    }

    private func run(
        _ data: UnsafePointer<UInt8>?,
        _ length: Int32,
        _ output: UnsafeMutableBufferPointer<Float>,
        fec: Bool
    ) throws(MediaError) -> Int {
        guard let out = output.baseAddress else {
            throw MediaError(.invalidAudio, "Opus output buffer is empty")
        }
        let capacity = Int32(min(output.count / channels, Self.maxFrameSize))
        let frames = opus_decode_float(decoder, data, length, out, capacity, fec ? 1 : 0)
        guard frames >= 0 else {
            throw MediaError(.invalidAudio, "Opus packet of \(length) bytes: \(OpusEncoder.describe(frames))")
        }
        return Int(frames)
    }
}
