import COpus

/// A libopus encoder for the screen-share audio: 48 kHz stereo, fixed frame duration.
///
/// Application `OPUS_APPLICATION_AUDIO` with the music signal hint: what a screen share carries
/// is app and game audio (music, effects), for which the CELT path and full bandwidth are right;
/// the VoIP application would spend bits on speech-oriented processing and low-pass the music.
///
/// Not thread-safe: an encoder belongs to one task.
public final class OpusEncoder {
    public struct Configuration: Sendable, Equatable {
        /// 96 kbit/s stereo: the Opus developers' recommended range for full-band stereo music is
        /// 64–128 kbit/s, and 96 is where it is close to transparent for game and app audio at
        /// a cost (12 kB/s) that is a few per cent of a 720p screen-share video stream.
        public var bitrate = 96_000
        /// 20 ms: RFC 7587's recommended frame, the usual WebRTC choice (10, 40, 60 also allowed).
        public var frameMilliseconds = 20
        /// 0–10; see `defaultComplexity`.
        public var complexity = OpusEncoder.defaultComplexity
        /// In-band FEC (LBRR). It exists only in libopus's SILK and hybrid modes, which it picks
        /// at low bitrates; at the default 96 kbit/s music is coded with CELT and the flag has no
        /// effect until congestion control lowers the bitrate.
        public var inbandFEC = false
        /// The loss the encoder plans FEC for, in per cent (0–100); used only when `inbandFEC`.
        public var expectedPacketLossPercent = 10
        /// Discontinuous transmission: during silence libopus emits packets of 1–2 bytes that
        /// need not be sent. Off by default: app audio rarely has true digital silence, and
        /// some receivers treat the gaps as loss.
        public var dtx = false
        /// Variable bitrate (the libopus default): fewer bits on simple passages.
        public var variableBitrate = true

        public init() {}
    }

    public static let sampleRate = 48_000
    public static let channels = 2
    /// libopus's maximum and default. Measured (release build, 20 ms stereo tones plus noise at
    /// 96 kbit/s, on a shared 2-core build machine): complexity 10 takes ~140 µs per frame, 5
    /// ~86 µs, 0 ~42 µs. 140 µs per 20 ms is 0.7 % of one core, so the best quality is kept;
    /// lower it only on a machine that is really short of CPU.
    public static let defaultComplexity = 10
    public static let bitrateRange = 6_000...510_000
    /// libopus's complexity settings: 0 the cheapest, 10 the best audio.
    public static let complexityRange = 0...10
    public static let frameMillisecondChoices = [10, 20, 40, 60]
    /// libopus's recommended output buffer: enough for any single packet.
    public static let maxPacketBytes = 4000

    public let configuration: Configuration
    /// Samples per channel in each frame (960 for 20 ms).
    public let frameSize: Int
    /// Encoder delay in samples per channel at 48 kHz: the Ogg Opus pre-skip (RFC 7845 §4.2).
    public let lookahead: Int

    private let encoder: OpaquePointer
    /// Packet scratch for the array-filling variants, allocated once.
    private let scratch: UnsafeMutableBufferPointer<UInt8>
    private var previousWasDTX = false

    public init(configuration: Configuration = Configuration()) throws(MediaError) {
        let c = configuration
        try Self.validateBitrate(c.bitrate)
        guard Self.frameMillisecondChoices.contains(c.frameMilliseconds) else {
            throw MediaError(
                .invalidSetting,
                "Opus frame duration \(c.frameMilliseconds) ms is not one of 10, 20, 40, 60 ms"
            )
        }
        guard Self.complexityRange.contains(c.complexity) else {
            throw MediaError(.invalidSetting, "Opus complexity \(c.complexity) is outside \(Self.complexityRange)")
        }
        guard (0...100).contains(c.expectedPacketLossPercent) else {
            throw MediaError(
                .invalidSetting,
                "Opus expected packet loss \(c.expectedPacketLossPercent) % is outside 0...100"
            )
        }
        var error: Int32 = 0
        guard
            let created = opus_encoder_create(
                Int32(Self.sampleRate),
                Int32(Self.channels),
                OPUS_APPLICATION_AUDIO,
                &error
            ), error == OPUS_OK
        else {
            throw MediaError(.library, "opus_encoder_create: \(Self.describe(error))")
        }
        // Configure before any stored property is set: a throw after full initialisation would
        // run deinit as well, so the handle is freed here and only here on failure.
        var delay: Int32 = 0
        let settings: [(String, Int32)] = [
            ("bitrate \(c.bitrate)", rtc_opus_set_bitrate(created, Int32(c.bitrate))),
            ("complexity \(c.complexity)", rtc_opus_set_complexity(created, Int32(c.complexity))),
            ("signal music", rtc_opus_set_signal_music(created)),
            ("VBR \(c.variableBitrate)", rtc_opus_set_vbr(created, c.variableBitrate ? 1 : 0)),
            ("in-band FEC \(c.inbandFEC)", rtc_opus_set_inband_fec(created, c.inbandFEC ? 1 : 0)),
            (
                "packet loss \(c.expectedPacketLossPercent) %",
                rtc_opus_set_packet_loss_perc(created, c.inbandFEC ? Int32(c.expectedPacketLossPercent) : 0)
            ),
            ("DTX \(c.dtx)", rtc_opus_set_dtx(created, c.dtx ? 1 : 0)),
            ("lookahead query", rtc_opus_get_lookahead(created, &delay)),
        ]
        if let failed = settings.first(where: { $0.1 != OPUS_OK }) {
            opus_encoder_destroy(created)
            throw MediaError(.library, "Opus encoder setting \(failed.0): \(Self.describe(failed.1))")
        }
        encoder = created
        scratch = .allocate(capacity: Self.maxPacketBytes)
        self.configuration = c
        frameSize = Self.sampleRate / 1000 * c.frameMilliseconds
        lookahead = Int(delay)
    }

    deinit {
        opus_encoder_destroy(encoder)
        scratch.deallocate()
    }

    /// Changes the bitrate at run time (congestion control); takes effect from the next frame.
    public func setBitrate(_ bitrate: Int) throws(MediaError) {
        try Self.validateBitrate(bitrate)
        let status = rtc_opus_set_bitrate(encoder, Int32(bitrate))
        guard status == OPUS_OK else {
            throw MediaError(.library, "Opus bitrate \(bitrate): \(Self.describe(status))")
        }
    }

    /// The bitrate libopus is using, in bit/s.
    public var bitrate: Int {
        var value: Int32 = 0
        _ = rtc_opus_get_bitrate(encoder, &value)
        return Int(value)
    }

    /// Updates the loss rate FEC plans for (from RTCP receiver reports); 0–100.
    public func setExpectedPacketLoss(percent: Int) throws(MediaError) {
        guard (0...100).contains(percent) else {
            throw MediaError(.invalidSetting, "Opus expected packet loss \(percent) % is outside 0...100")
        }
        let status = rtc_opus_set_packet_loss_perc(encoder, Int32(percent))
        guard status == OPUS_OK else {
            throw MediaError(.library, "Opus packet loss \(percent) %: \(Self.describe(status))")
        }
    }

    /// Whether the encoder is currently in DTX (only meaningful with `dtx` on).
    public var isInDTX: Bool {
        var flag: Int32 = 0
        _ = rtc_opus_get_in_dtx(encoder, &flag)
        return flag != 0
    }

    /// Encodes one frame (`frameSize × 2` interleaved floats) into `output`; returns the packet
    /// length. Allocates nothing. `output` should hold `maxPacketBytes`.
    public func encode(
        _ pcm: UnsafeBufferPointer<Float>,
        into output: UnsafeMutableBufferPointer<UInt8>
    ) throws(MediaError) -> Int {
        guard pcm.count == frameSize * Self.channels else {
            throw MediaError(
                .invalidAudio,
                "Opus frame needs \(frameSize * Self.channels) interleaved stereo samples, got \(pcm.count)"
            )
        }
        guard let input = pcm.baseAddress, let out = output.baseAddress, output.count > 0 else {
            throw MediaError(.invalidAudio, "Opus output buffer is empty")
        }
        let length = opus_encode_float(encoder, input, Int32(frameSize), out, Int32(min(output.count, Int(Int32.max))))
        guard length > 0 else {
            throw MediaError(.library, "opus_encode_float: \(Self.describe(length))")
        }
        return Int(length)
    }

    /// Encodes one frame into `packet`, reusing its storage (no allocation once its capacity has
    /// grown to the largest packet), and fills in its sample count, time and DTX transition.
    public func encode(
        _ pcm: UnsafeBufferPointer<Float>,
        captureTime: UInt64,
        into packet: inout OpusPacket
    ) throws(MediaError) {
        let length = try encode(pcm, into: scratch)
        packet.data.removeAll(keepingCapacity: true)
        packet.data.append(contentsOf: UnsafeBufferPointer(rebasing: scratch[0..<length]))
        packet.sampleCount = frameSize
        packet.captureTime = captureTime
        packet.isFirstAfterDTX = previousWasDTX && !packet.isDTX
        previousWasDTX = packet.isDTX
    }

    /// Encodes a mixer frame into `packet` (see `encode(_:captureTime:into:)`).
    public func encode(_ frame: MixedFrame, into packet: inout OpusPacket) throws(MediaError) {
        try frame.samples.withUnsafeBufferPointer { (pcm) throws(MediaError) in
            try encode(pcm, captureTime: frame.captureTime, into: &packet)
        }
    }

    /// Convenience for tests and cold paths: allocates the packet.
    public func encode(_ pcm: [Float], captureTime: UInt64 = 0) throws(MediaError) -> OpusPacket {
        var packet = OpusPacket()
        try pcm.withUnsafeBufferPointer { (buffer) throws(MediaError) in
            try encode(buffer, captureTime: captureTime, into: &packet)
        }
        return packet
    }

    static func validateBitrate(_ bitrate: Int) throws(MediaError) {
        guard bitrateRange.contains(bitrate) else {
            throw MediaError(.invalidSetting, "Opus bitrate \(bitrate) bit/s is outside \(bitrateRange)")
        }
    }

    static func describe(_ code: Int32) -> String {
        guard let text = opus_strerror(code) else { return "error \(code)" }
        return String(cString: text)
    }
}
