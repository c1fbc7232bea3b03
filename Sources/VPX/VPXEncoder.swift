import CVPX
import Media

/// VP8 and VP9 encoding through libvpx, set up for real-time screen sharing to viewers that
/// cannot take H.264 (Firefox without OpenH264, shared/field-notes.md).
///
/// What it shares with `H264Encoder`: the same `VideoFrame` (I420) in, so one conversion feeds
/// either encoder; one frame out per frame in, from the same call (no lag, no alt-ref frames);
/// key frames only when asked, like H.264's `.onRequest`; constant bitrate that can change at run
/// time without a key frame; `MediaError` on failure, with libvpx's own words in the message.
///
/// Settings, and why:
/// - `VPX_DL_REALTIME` deadline, one pass, `g_lag_in_frames = 0`: each frame is coded within its
///   own `encode` call, so latency stays at one frame.
/// - `VPX_CBR` with a 1000 ms buffer (initial 500, optimal 600 ms): what libwebrtc gives its VP8
///   and VP9 encoders; the buffer lets a key frame or a slide change overshoot for a moment.
/// - `rc_dropframe_thresh = 0`: libvpx never drops a frame on its own. When a picture is skipped
///   is the cadence's decision (Docs/cadence.md), and a frame the caller handed over must come
///   back, or the caller's picture count and the receiver's frame count part ways.
/// - `g_error_resilient`: entropy contexts are reset at every frame, so a receiver that lost a
///   frame and skipped it can go on decoding the next ones it gets; a few percent of bitrate.
/// - `kf_mode = VPX_KF_DISABLED`: a key frame only on the first frame and when asked
///   (`requestKeyFrame` or `forceKeyFrame:`), as receivers ask with PLI/FIR.
/// - Screen content: VP8 `VP8E_SET_SCREEN_CONTENT_MODE` 1 (not 2: mode 2 drops frames after an
///   overshoot, see above), VP9 `VP9E_SET_TUNE_CONTENT` screen with cyclic-refresh AQ (mode 3),
///   libvpx's real-time adaptive quantization.
/// - Key frames capped at `maximumKeyFrameBitratePercent` of an average frame
///   (`VP8E_SET_MAX_INTRA_BITRATE_PCT`), libwebrtc's rule: half the optimal buffer's worth.
///
/// Not thread-safe: one encoder belongs to the one media thread that encodes.
public final class VPXEncoder {
    public enum Codec: String, Sendable, CaseIterable {
        case vp8
        case vp9

        /// The name in SDP (`a=rtpmap:<pt> VP8/90000`).
        public var encodingName: String {
            switch self {
            case .vp8: "VP8"
            case .vp9: "VP9"
            }
        }
    }

    public struct Configuration: Sendable, Equatable {
        public var codec: Codec
        public var width: Int
        public var height: Int
        /// Nominal frame rate: the duration libvpx is told each frame lasts, and the rate the
        /// key-frame cap is derived from.
        public var frameRate: Int
        /// Target bitrate in kbit/s (the same range and default as H.264's).
        public var bitrateKbps: Int
        /// libvpx's `cpu-used`; nil takes `defaultSpeed(for:)`.
        public var speed: Int?
        /// Encoder threads. 1 leaves the other core of a small host to audio, SRTP and sending.
        public var threads: Int
        /// Tunes the encoder for screens (text, UI, flat areas) rather than camera video.
        public var screenContent: Bool
        /// The finest quantizer rate control may use (libvpx's 0–63 scale); nil: the screen
        /// content floor for screens (`screenContentMinimumQuantizer`), libwebrtc's 2 otherwise.
        /// A content hint sets its own (`detailMinimumQuantizer`).
        public var finestQuantizer: Int?

        public init(
            codec: Codec,
            width: Int = 1280,
            height: Int = 720,
            frameRate: Int = 30,
            bitrateKbps: Int = 1800,
            speed: Int? = nil,
            threads: Int = 1,
            screenContent: Bool = true,
            finestQuantizer: Int? = nil
        ) {
            self.codec = codec
            self.width = width
            self.height = height
            self.frameRate = frameRate
            self.bitrateKbps = bitrateKbps
            self.speed = speed
            self.threads = threads
            self.screenContent = screenContent
            self.finestQuantizer = finestQuantizer
        }

        /// The `cpu-used` each codec runs at unless told otherwise, from CPU time per 720p frame
        /// of the synthetic screen at 1800 kbit/s on this project's 2-core host
        /// (`VPXEncoderTests/timing`; x264 veryfast takes 9.5–10 ms there):
        /// - VP8 −6, libwebrtc's desktop default. −6, −8 and −10 all took 10–12 ms with the same
        ///   size and PSNR (35.0 dB), so the one that searches most. A negative value is a fixed
        ///   speed; a positive one lets libvpx change it by its own CPU-use estimate, which on a
        ///   shared host would move the quality with the neighbours' load.
        /// - VP9 8: 15–16 ms at 39.6 dB, where 7 took 22–27 ms for 39.5 dB and 9 gave 39.4 dB.
        ///   At 7 one frame would take most of a 30 fps frame period of the core that also
        ///   captures, converts and sends.
        public static func defaultSpeed(for codec: Codec) -> Int {
            switch codec {
            case .vp8: -6
            case .vp9: 8
            }
        }

        /// libvpx's ranges for `cpu-used` (vp8cx.h).
        public static func speedRange(for codec: Codec) -> ClosedRange<Int> {
            switch codec {
            case .vp8: -16...16
            case .vp9: -9...9
            }
        }

        public static let bitrateRange = H264Encoder.Configuration.bitrateRange
        /// VP8 codes sizes in 14 bits (RFC 6386 §9.1); VP9 in 16, but the RTP scalability
        /// structure and our pipeline stop earlier.
        public static let maximumDimension = 16_383

        public var effectiveSpeed: Int { speed ?? Self.defaultSpeed(for: codec) }

        /// A key frame's cap in percent of an average frame, libwebrtc's `MaxIntraTarget`: half
        /// the 600 ms optimal buffer at the frame rate, at least 300 % (3 average frames).
        public var maximumKeyFrameBitratePercent: Int { max(300, 600 * frameRate / 20) }

        /// The quantizers rate control may use (0...63): from `finestQuantizer`, or for screen
        /// content from `screenContentMinimumQuantizer`.
        public var quantizerRange: ClosedRange<Int> {
            let finest =
                finestQuantizer
                ?? (screenContent ? VPXEncoder.screenContentMinimumQuantizer : VPXEncoder.quantizerRange.lowerBound)
            return finest...VPXEncoder.quantizerRange.upperBound
        }

        func validate() throws(MediaError) {
            try VideoFrame.validate(width: width, height: height)
            guard width <= Self.maximumDimension, height <= Self.maximumDimension else {
                throw MediaError(
                    .invalidDimensions,
                    "\(codec.encodingName) encoder size \(width)x\(height) exceeds \(Self.maximumDimension)"
                )
            }
            guard width % 2 == 0, height % 2 == 0 else {
                throw MediaError(.invalidDimensions, "encoder size \(width)x\(height) must be even for 4:2:0")
            }
            guard (1...240).contains(frameRate) else {
                throw MediaError(.invalidSetting, "frame rate \(frameRate) is outside 1...240")
            }
            guard Self.bitrateRange.contains(bitrateKbps) else {
                throw MediaError(.invalidSetting, "video bitrate \(bitrateKbps) kbit/s is outside \(Self.bitrateRange)")
            }
            let speeds = Self.speedRange(for: codec)
            guard speeds.contains(effectiveSpeed) else {
                throw MediaError(
                    .invalidSetting,
                    "\(codec.encodingName) speed (cpu-used) \(effectiveSpeed) is outside \(speeds)"
                )
            }
            guard (1...16).contains(threads) else {
                throw MediaError(.invalidSetting, "encoder threads \(threads) is outside 1...16")
            }
            if let finestQuantizer, !VPXEncoder.quantizerRange.contains(finestQuantizer) {
                throw MediaError(
                    .invalidSetting,
                    "finest quantizer \(finestQuantizer) is outside \(VPXEncoder.quantizerRange)"
                )
            }
        }
    }

    /// The 90 kHz RTP clock of video (RFC 7741 §4.1, RFC 9628 §4.1) as libvpx's time base, so
    /// presentation times go in as they are.
    public static let timebaseDenominator: Int32 = 90_000
    /// The quantizer bounds libwebrtc gives libvpx (libvpx's own default is 4...63): 2 keeps the
    /// finest steps, 56 the coarsest for bursts of motion. A low bitrate on content dense enough
    /// to need more than 56 overshoots rather than breaking into blocks (`VPXEncoderTests`: VP8
    /// on noise at 250 kbit/s); fewer frames is then the cadence's answer.
    public static let quantizerRange = 2...56
    /// The finest quantizer for screen content, the counterpart of x264's `qp_min` 12
    /// (`H264Encoder.Configuration.finestQP`): on a 720p terminal screen still for two seconds at
    /// 1800 kbit/s, VP8 with a floor of 8 reached 58.9 dB luma PSNR and VP9 57.9 dB where x264's
    /// floor of 12 reached 58.1 dB; lower floors cost VP8 17–38 % more bytes for no gain
    /// (58.8 dB at 4 and 2) and VP9 9–22 % more for 2–6 dB that text does not need
    /// (Docs/codecs.md). It is also the quantizer at which a still picture has converged.
    public static let screenContentMinimumQuantizer = 8
    /// The finest quantizer for a screen whose details matter but not every pixel of its text
    /// (`--content-hint detail`), the counterpart of x264's QP 24. Which quantizer gives x264's
    /// picture depends on the screen: VP8 matched it at 32 on a terminal and on the synthetic
    /// screen but at about 20 on the X clients of `StillScreenEndToEndTests`; at 24 it is within
    /// 2.5 dB of x264 on all three, above on two (Docs/codecs.md). VP9 matched at 20 and 24 on
    /// the two it was measured on; 16 keeps the same margin.
    public static func detailMinimumQuantizer(for codec: Codec) -> Int {
        switch codec {
        case .vp8: 24
        case .vp9: 16
        }
    }

    public let configuration: Configuration
    /// The codec context, allocated once: every libvpx call takes its address, which must not
    /// move while the encoder lives.
    private let context: UnsafeMutablePointer<vpx_codec_ctx_t>
    /// The picture description handed to libvpx; its plane pointers are set per frame.
    private let image: UnsafeMutablePointer<vpx_image_t>
    private var encoderConfiguration: vpx_codec_enc_cfg_t
    private var forceKeyFrame = false
    private var bitrate: Int
    private var lastQP: Int?
    /// Reused for every frame's bytes (see `VPXEncodedFrame`).
    private var output: [UInt8] = []

    public init(_ configuration: Configuration) throws(MediaError) {
        try configuration.validate()
        let codec = configuration.codec
        let name = codec.encodingName
        guard let interface = Self.interface(codec) else {
            throw MediaError(.library, "libvpx was built without the \(name) encoder")
        }
        var settings = vpx_codec_enc_cfg_t()
        let status = vpx_codec_enc_config_default(interface, &settings, 0)
        guard status == VPX_CODEC_OK else {
            throw MediaError(.library, "vpx_codec_enc_config_default (\(name)) failed: \(Self.describe(status))")
        }
        settings.g_w = UInt32(configuration.width)
        settings.g_h = UInt32(configuration.height)
        settings.g_timebase = vpx_rational(num: 1, den: Self.timebaseDenominator)
        settings.g_threads = UInt32(configuration.threads)
        settings.g_pass = VPX_RC_ONE_PASS
        settings.g_lag_in_frames = 0
        settings.g_error_resilient = vpx_codec_er_flags_t(VPX_ERROR_RESILIENT_DEFAULT)
        settings.rc_end_usage = VPX_CBR
        settings.rc_target_bitrate = UInt32(configuration.bitrateKbps)
        settings.rc_min_quantizer = UInt32(configuration.quantizerRange.lowerBound)
        settings.rc_max_quantizer = UInt32(configuration.quantizerRange.upperBound)
        settings.rc_dropframe_thresh = 0
        settings.rc_resize_allowed = 0
        settings.rc_undershoot_pct = 100
        settings.rc_overshoot_pct = 15
        settings.rc_buf_initial_sz = 500
        settings.rc_buf_optimal_sz = 600
        settings.rc_buf_sz = 1000
        settings.kf_mode = VPX_KF_DISABLED
        settings.kf_min_dist = 0
        settings.kf_max_dist = 0x7FFF_FFFF

        let context = UnsafeMutablePointer<vpx_codec_ctx_t>.allocate(capacity: 1)
        context.initialize(to: vpx_codec_ctx_t())
        let initialized = rtc_vpx_codec_enc_init(context, interface, &settings, 0)
        guard initialized == VPX_CODEC_OK else {
            let message = Self.describe(initialized, context: context)
            context.deallocate()
            throw MediaError(
                .library,
                "vpx_codec_enc_init (\(name) \(configuration.width)x\(configuration.height)) failed: \(message)"
            )
        }
        let image = UnsafeMutablePointer<vpx_image_t>.allocate(capacity: 1)
        image.initialize(to: vpx_image_t())
        self.context = context
        self.image = image
        self.encoderConfiguration = settings
        self.configuration = configuration
        self.bitrate = configuration.bitrateKbps
        // From here on `deinit` destroys the context, also when a control below fails.
        try applyControls()
        output.reserveCapacity(configuration.width * configuration.height / 4)
    }

    deinit {
        vpx_codec_destroy(context)
        context.deallocate()
        image.deallocate()
    }

    private static func interface(_ codec: Codec) -> OpaquePointer? {
        switch codec {
        case .vp8: vpx_codec_vp8_cx()
        case .vp9: vpx_codec_vp9_cx()
        }
    }

    private func applyControls() throws(MediaError) {
        let codec = configuration.codec
        try control("VP8E_SET_CPUUSED \(configuration.effectiveSpeed)") {
            rtc_vpx_set_cpu_used($0, Int32(configuration.effectiveSpeed))
        }
        let keyFrameCap = UInt32(configuration.maximumKeyFrameBitratePercent)
        try control("VP8E_SET_MAX_INTRA_BITRATE_PCT \(keyFrameCap)") {
            rtc_vpx_set_max_intra_bitrate_pct($0, keyFrameCap)
        }
        switch codec {
        case .vp8:
            // A macroblock whose sum of differences stays at 0 is skipped outright (libwebrtc's
            // setting): an unchanged screen area costs no motion search.
            try control("VP8E_SET_STATIC_THRESHOLD \(Self.staticThreshold)") {
                rtc_vpx_set_static_threshold($0, Self.staticThreshold)
            }
            let mode: UInt32 = configuration.screenContent ? 1 : 0
            try control("VP8E_SET_SCREEN_CONTENT_MODE \(mode)") { rtc_vpx_vp8_set_screen_content_mode($0, mode) }
        case .vp9:
            let content = configuration.screenContent ? VP9E_CONTENT_SCREEN : VP9E_CONTENT_DEFAULT
            try control("VP9E_SET_TUNE_CONTENT \(content.rawValue)") {
                rtc_vpx_vp9_set_tune_content($0, Int32(content.rawValue))
            }
            try control("VP9E_SET_AQ_MODE 3 (cyclic refresh)") { rtc_vpx_vp9_set_aq_mode($0, 3) }
            if configuration.threads > 1 {
                // VP9 threads work on tile columns (and rows within them): log2 of the threads,
                // within what the width allows (libvpx clamps it to 256-pixel-wide tiles).
                let columns = Int32(Int.bitWidth - 1 - configuration.threads.leadingZeroBitCount)
                try control("VP9E_SET_TILE_COLUMNS \(columns)") { rtc_vpx_vp9_set_tile_columns($0, columns) }
                try control("VP9E_SET_ROW_MT 1") { rtc_vpx_vp9_set_row_mt($0, 1) }
            }
        }
    }

    private func control(
        _ what: @autoclosure () -> String,
        _ call: (UnsafeMutablePointer<vpx_codec_ctx_t>) -> vpx_codec_err_t
    ) throws(MediaError) {
        let status = call(context)
        guard status == VPX_CODEC_OK else {
            throw MediaError(
                .library,
                "\(configuration.codec.encodingName) control \(what()) failed: \(Self.describe(status, context: context))"
            )
        }
    }

    /// The current target bitrate in kbit/s.
    public var bitrateKbps: Int { bitrate }

    /// The quantizer (0...63) of the last frame encoded, for a frame-rate governor; nil before
    /// the first frame.
    public var lastQuantizer: Int? { lastQP }

    /// Makes the next encoded frame a key frame (a receiver's PLI or FIR, a new subscriber).
    public func requestKeyFrame() { forceKeyFrame = true }

    /// Changes the target bitrate without re-creating the encoder: no key frame, no gap.
    public func setBitrate(kbps: Int) throws(MediaError) {
        guard Configuration.bitrateRange.contains(kbps) else {
            throw MediaError(.invalidSetting, "video bitrate \(kbps) kbit/s is outside \(Configuration.bitrateRange)")
        }
        var settings = encoderConfiguration
        settings.rc_target_bitrate = UInt32(kbps)
        let status = vpx_codec_enc_config_set(context, &settings)
        guard status == VPX_CODEC_OK else {
            throw MediaError(
                .library,
                "vpx_codec_enc_config_set (\(configuration.codec.encodingName)) refused bitrate \(kbps) kbit/s: "
                    + Self.describe(status, context: context)
            )
        }
        encoderConfiguration = settings
        bitrate = kbps
    }

    /// Encodes one picture. `pts90k` is its presentation time in 90 kHz units and must grow
    /// from frame to frame (libvpx's rate control measures the frame rate from it, so pass the
    /// capture time, not a frame counter, when frames are skipped). `forceKeyFrame` (or an
    /// earlier `requestKeyFrame`) makes this frame a key frame.
    ///
    /// `idleRepeat`: the picture is the one the last frame coded, and this frame only tells
    /// receivers the stream is alive (`FrameCadence.Action.idleRepeat`). For it the static
    /// threshold is raised to `idleRepeatStaticThreshold`, so every block is skipped before any
    /// search: 246 bytes and 5.5 ms of CPU for a 720p VP8 frame (VP9 about 800 bytes, 6.6 ms),
    /// where a plain encode a second after the last frame took 57 kB and 22 ms, libvpx's rate
    /// control giving the one frame the whole second's budget. Ignored for a key frame.
    ///
    /// The planes are handed to libvpx as they are (`vpx_img_wrap` over the Y plane, then the
    /// U and V pointers and all three strides set): no copy before the encoder's own.
    /// Returns nil only if libvpx produced no frame, which these settings do not allow.
    public func encode(
        _ frame: VideoFrame,
        pts90k: Int64,
        forceKeyFrame force: Bool = false,
        idleRepeat: Bool = false
    ) throws(MediaError) -> VPXEncodedFrame? {
        let codec = configuration.codec
        guard frame.width == configuration.width, frame.height == configuration.height else {
            throw MediaError(
                .invalidDimensions,
                "frame is \(frame.width)x\(frame.height), \(codec.encodingName) encoder expects "
                    + "\(configuration.width)x\(configuration.height)"
            )
        }
        var flags: vpx_enc_frame_flags_t = 0
        let keyFrame = force || forceKeyFrame
        if keyFrame { flags |= rtc_vpx_eflag_force_kf() }
        forceKeyFrame = false
        let skipsEverything = idleRepeat && !keyFrame
        if skipsEverything {
            try control("VP8E_SET_STATIC_THRESHOLD \(Self.idleRepeatStaticThreshold)") {
                rtc_vpx_set_static_threshold($0, Self.idleRepeatStaticThreshold)
            }
        }
        let duration = UInt(max(1, Int(Self.timebaseDenominator) / configuration.frameRate))
        let status: vpx_codec_err_t? = frame.y.withUnsafeBufferPointer { y in
            frame.u.withUnsafeBufferPointer { u in
                frame.v.withUnsafeBufferPointer { v in
                    // libvpx only reads the planes; the `withUnsafe` scopes keep them alive
                    // across the call.
                    let yBase = UnsafeMutablePointer(mutating: y.baseAddress)
                    guard
                        vpx_img_wrap(image, VPX_IMG_FMT_I420, UInt32(frame.width), UInt32(frame.height), 1, yBase)
                            != nil
                    else { return nil }
                    image.pointee.planes = (
                        yBase,
                        UnsafeMutablePointer(mutating: u.baseAddress),
                        UnsafeMutablePointer(mutating: v.baseAddress),
                        nil
                    )
                    image.pointee.stride = (Int32(frame.strideY), Int32(frame.strideU), Int32(frame.strideV), 0)
                    defer {
                        image.pointee.planes = (nil, nil, nil, nil)
                        image.pointee.img_data = nil
                    }
                    return vpx_codec_encode(context, image, pts90k, duration, flags, rtc_vpx_deadline_realtime())
                }
            }
        }
        if skipsEverything {
            // Back to the normal threshold before anything else: left raised, every later frame
            // would be frozen.
            let normal = normalStaticThreshold
            try control("VP8E_SET_STATIC_THRESHOLD \(normal)") { rtc_vpx_set_static_threshold($0, normal) }
        }
        guard let status else {
            throw MediaError(.library, "vpx_img_wrap refused a \(frame.width)x\(frame.height) I420 picture")
        }
        guard status == VPX_CODEC_OK else {
            throw MediaError(
                .library,
                "vpx_codec_encode (\(codec.encodingName), pts \(pts90k)) failed: \(Self.describe(status, context: context))"
            )
        }
        return try collect(pts90k: pts90k, captureTime: frame.captureTime)
    }

    /// VP8's static threshold: a block whose sum of differences is 0 is skipped outright
    /// (libwebrtc's setting), so an unchanged screen area costs no motion search.
    static let staticThreshold: UInt32 = 1
    /// The static threshold of an idle repeat: above any block's sum of differences (a 16x16
    /// block's SAD is at most 65,280), so every block is skipped.
    static let idleRepeatStaticThreshold: UInt32 = 1_000_000
    /// What an idle repeat goes back to: VP8's `staticThreshold`, VP9's libvpx default (0).
    private var normalStaticThreshold: UInt32 { configuration.codec == .vp8 ? Self.staticThreshold : 0 }

    /// Copies the frame out of libvpx's packet list (valid only until the next call) into the
    /// reused output buffer.
    private func collect(pts90k: Int64, captureTime: UInt64) throws(MediaError) -> VPXEncodedFrame? {
        // Keeps the capacity; allocates only if the last frame's bytes are still held elsewhere.
        output.removeAll(keepingCapacity: true)
        var iterator: vpx_codec_iter_t?
        var frames = 0
        var isKeyFrame = false
        var isDroppable = false
        while let packet = vpx_codec_get_cx_data(context, &iterator) {
            guard packet.pointee.kind == VPX_CODEC_CX_FRAME_PKT else { continue }
            frames += 1
            guard frames == 1 else {
                // With no lag and one layer libvpx emits one frame per call; two could not be
                // told apart on the wire (one RTP timestamp, one frame per descriptor).
                throw MediaError(
                    .library,
                    "\(configuration.codec.encodingName) encoder returned more than one frame for pts \(pts90k)"
                )
            }
            let coded = packet.pointee.data.frame
            if let buffer = coded.buf, coded.sz > 0 {
                let bytes = buffer.assumingMemoryBound(to: UInt8.self)
                output.append(contentsOf: UnsafeBufferPointer(start: bytes, count: Int(coded.sz)))
            }
            isKeyFrame = coded.flags & vpx_codec_frame_flags_t(VPX_FRAME_IS_KEY) != 0
            isDroppable = coded.flags & vpx_codec_frame_flags_t(VPX_FRAME_IS_DROPPABLE) != 0
        }
        guard frames == 1, !output.isEmpty else { return nil }
        var quantizer: Int32 = -1
        lastQP =
            rtc_vpx_get_last_quantizer_64(context, &quantizer) == VPX_CODEC_OK && quantizer >= 0 ? Int(quantizer) : nil
        return VPXEncodedFrame(
            codec: configuration.codec,
            data: output,
            isKeyFrame: isKeyFrame,
            isDroppable: isDroppable,
            pts90k: pts90k,
            captureTime: captureTime,
            width: configuration.width,
            height: configuration.height,
            quantizer: lastQP
        )
    }

    /// libvpx's words for a failure: the status, the context's last error and its detail.
    static func describe(_ status: vpx_codec_err_t, context: UnsafeMutablePointer<vpx_codec_ctx_t>? = nil) -> String {
        var text = String(cString: vpx_codec_err_to_string(status))
        if let context {
            if let error = vpx_codec_error(context) {
                let last = String(cString: error)
                if last != text { text += " (\(last))" }
            }
            if let detail = vpx_codec_error_detail(context) {
                text += ": \(String(cString: detail))"
            }
        }
        return text
    }
}
