import CX264

/// H.264 encoding through libx264, set up for real-time screen sharing.
///
/// Settings follow what RTC receivers (browsers, SFUs, ffplay) need and what keeps latency at one
/// frame: `tune=zerolatency` (no lookahead, no frame threads, so each frame's NAL units come out of
/// the same call that took it), no B-frames, constrained baseline by default, SPS and PPS in front
/// of every IDR, no access unit delimiters or filler, and ABR with a VBV cap so a burst of
/// detail cannot exceed what the path carries.
public final class H264Encoder {
    public struct Configuration: Sendable, Equatable {
        public enum Profile: String, Sendable, CaseIterable {
            /// profile_idc 66 with constraint_set1: what every WebRTC endpoint decodes.
            case baseline
            case main
            case high
        }

        public var width: Int
        public var height: Int
        public var frameRate: Int
        /// Target bitrate in kbit/s. Default 1800: seed 004's ceiling for 720p screen share,
        /// plenty for text and UI, which compress far better than camera video.
        public var bitrateKbps: Int
        /// VBV buffer in milliseconds of the target bitrate. 600 ms matches the peers' settings
        /// (2500k with a 1500k buffer) so benchmarks compare like with like; smaller values cut
        /// frame-size spikes at some cost to quality on scene changes.
        public var vbvBufferMs: Int
        /// VBV buffer while a receiver's path holds the rate under its ceiling
        /// (`setBitrate(kbps:pathLimited:)`): there a burst waits in the link's queue, and a
        /// picture late by that much counts as a freeze. Never under `pathLimitedVBVFloorKbit`
        /// (nor over `vbvBufferMs`): at low rates a key frame is many times 150 ms, and x264
        /// pays a buffer's overdraft back with seconds of empty pictures.
        /// Decision D30 (Docs/congestion.md).
        public var pathLimitedVBVBufferMs: Int
        /// The least path-limited buffer, kbit.
        public var pathLimitedVBVFloorKbit: Int
        /// How key frames come about.
        public enum KeyFrames: Sendable, Equatable {
            /// An IDR every `keyFrameInterval` frames, x264's own GOP (the encoder benchmarks
            /// compare like with like with FFmpeg and GStreamer this way).
            case periodic
            /// An IDR only when asked (`requestKeyFrame`). x264 is opened with periodic intra
            /// refresh and an infinite key-frame interval, so a refresh for receivers that cannot
            /// ask is a wave of intra macroblock columns across the next pictures
            /// (`startRefreshWave`), not one large picture; the caller decides when.
            case onRequest
        }

        /// Longest distance between IDRs, in frames (`.periodic`); with `.onRequest`, the caller's
        /// refresh period. Default 2 s: a receiver that joins or loses packets recovers within that
        /// even if it cannot ask for a key frame.
        public var keyFrameInterval: Int
        public var keyFrames: KeyFrames
        /// x264 preset. `veryfast` by default: about 6 ms/frame at 720p on one core here, with
        /// visibly better text than `ultrafast` at the same bitrate.
        public var preset: String
        public var profile: Profile
        /// Encoder threads (slice threads under zerolatency). 1 leaves the other core of a small
        /// host to audio, SRTP and sending.
        public var threads: Int
        /// Screen content (text, UI): no adaptive quantization and no psychovisual tuning. Both
        /// are made for camera video: variance AQ raises the QP of exactly the busy blocks text
        /// is made of, and psy-rd trades fidelity for grain; on a still screen they cap how sharp
        /// refreshes can make it (Docs/cadence.md). And a QP floor, `finestQP`.
        public var screenContent: Bool
        /// The finest QP x264 may pick for screen content: the cadence's converged QP
        /// (`FrameCadence.Configuration.forHint`). With bits to spare x264 otherwise goes down to
        /// QP 0–4 on a few typed characters or a scrolled line (measured: mean QP 0.4 while
        /// typing), near-lossless text that costs several times what QP 12 does and looks the
        /// same.
        public var finestQP: Int

        public init(
            width: Int = 1280,
            height: Int = 720,
            frameRate: Int = 30,
            bitrateKbps: Int = 1800,
            vbvBufferMs: Int = 600,
            pathLimitedVBVBufferMs: Int = 150,
            pathLimitedVBVFloorKbit: Int = 90,
            keyFrameInterval: Int? = nil,
            keyFrames: KeyFrames = .periodic,
            preset: String = "veryfast",
            profile: Profile = .baseline,
            threads: Int = 1,
            screenContent: Bool = false,
            finestQP: Int = 12
        ) {
            self.width = width
            self.height = height
            self.frameRate = frameRate
            self.bitrateKbps = bitrateKbps
            self.vbvBufferMs = vbvBufferMs
            self.pathLimitedVBVBufferMs = pathLimitedVBVBufferMs
            self.pathLimitedVBVFloorKbit = pathLimitedVBVFloorKbit
            self.keyFrameInterval = keyFrameInterval ?? 2 * frameRate
            self.keyFrames = keyFrames
            self.preset = preset
            self.profile = profile
            self.threads = threads
            self.screenContent = screenContent
            self.finestQP = finestQP
        }

        public static let presets = [
            "ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow", "slower", "veryslow",
        ]
        public static let bitrateRange = 50...50_000

        /// x264's VBV buffer at `kbps`, kbit (`pathLimitedVBVBufferMs`).
        public func vbvBufferKbit(at kbps: Int, pathLimited: Bool) -> Int {
            let full = kbps * vbvBufferMs / 1000
            guard pathLimited else { return full }
            return min(full, max(kbps * pathLimitedVBVBufferMs / 1000, pathLimitedVBVFloorKbit))
        }

        func validate() throws(MediaError) {
            try VideoFrame.validate(width: width, height: height)
            guard width % 2 == 0, height % 2 == 0 else {
                throw MediaError(.invalidDimensions, "encoder size \(width)x\(height) must be even for 4:2:0")
            }
            guard (1...240).contains(frameRate) else {
                throw MediaError(.invalidSetting, "frame rate \(frameRate) is outside 1...240")
            }
            guard Self.bitrateRange.contains(bitrateKbps) else {
                throw MediaError(.invalidSetting, "video bitrate \(bitrateKbps) kbit/s is outside \(Self.bitrateRange)")
            }
            for (name, ms) in [("VBV buffer", vbvBufferMs), ("path-limited VBV buffer", pathLimitedVBVBufferMs)] {
                guard (50...10_000).contains(ms) else {
                    throw MediaError(.invalidSetting, "\(name) \(ms) ms is outside 50...10000")
                }
            }
            guard (1...100_000).contains(pathLimitedVBVFloorKbit) else {
                throw MediaError(
                    .invalidSetting,
                    "path-limited VBV floor \(pathLimitedVBVFloorKbit) kbit is outside 1...100000"
                )
            }
            guard (1...3600).contains(keyFrameInterval) else {
                throw MediaError(.invalidSetting, "key-frame interval \(keyFrameInterval) frames is outside 1...3600")
            }
            guard Self.presets.contains(preset) else {
                throw MediaError(
                    .invalidSetting,
                    "unknown x264 preset '\(preset)'; one of \(Self.presets.joined(separator: ", "))"
                )
            }
            guard (1...16).contains(threads) else {
                throw MediaError(.invalidSetting, "encoder threads \(threads) is outside 1...16")
            }
            guard (0...51).contains(finestQP) else {
                throw MediaError(.invalidSetting, "finest QP \(finestQP) is outside 0...51")
            }
        }
    }

    public let configuration: Configuration
    private let handle: OpaquePointer
    private var forceKeyFrame = false
    /// A wave was asked for and has not started yet (x264 starts it at the next P picture).
    private var waveQueued = false
    /// Pictures the running wave still needs before its columns reach the right edge.
    private var wavePicturesLeft = 0
    private var picture = x264_picture_t()
    private var bitrate: Int

    public init(_ configuration: Configuration) throws(MediaError) {
        try configuration.validate()
        var param = x264_param_t()
        guard x264_param_default_preset(&param, configuration.preset, "zerolatency") == 0 else {
            throw MediaError(.library, "x264 rejected preset '\(configuration.preset)'")
        }
        param.i_csp = X264_CSP_I420
        param.i_width = Int32(configuration.width)
        param.i_height = Int32(configuration.height)
        param.i_fps_num = UInt32(configuration.frameRate)
        param.i_fps_den = 1
        param.i_timebase_num = 1
        param.i_timebase_den = UInt32(configuration.frameRate)
        // Rate control follows the nominal frame rate, not input timestamps: capture jitter must
        // not move the bitrate.
        param.b_vfr_input = 0
        param.i_threads = Int32(configuration.threads)
        switch configuration.keyFrames {
        case .periodic:
            param.i_keyint_max = Int32(configuration.keyFrameInterval)
        case .onRequest:
            // x264 starts a wave only when asked (x264_encoder_intra_refresh); with an infinite
            // interval each wave moves one macroblock column per picture, and its recovery-point
            // SEI counts the picture's width in columns, which decoders accept (FFmpeg: ≤ 65535).
            param.i_keyint_max = X264_KEYINT_MAX_INFINITE
            param.b_intra_refresh = 1
        }
        // No scene-cut IDRs: a slide change would otherwise cost a burst of key-frame size at
        // random moments; receivers ask for key frames (PLI) when they need one.
        param.i_scenecut_threshold = 0
        param.i_bframe = 0
        param.b_repeat_headers = 1
        param.b_annexb = 0  // 4-byte length prefixes, stripped below: no start-code scanning.
        param.b_aud = 0
        param.i_log_level = X264_LOG_WARNING
        param.rc.i_rc_method = X264_RC_ABR
        param.rc.i_bitrate = Int32(configuration.bitrateKbps)
        param.rc.i_vbv_max_bitrate = Int32(configuration.bitrateKbps)
        let buffer = configuration.vbvBufferKbit(at: configuration.bitrateKbps, pathLimited: false)
        param.rc.i_vbv_buffer_size = Int32(buffer)
        param.rc.b_filler = 0
        if configuration.screenContent {
            param.rc.i_aq_mode = X264_AQ_NONE
            param.analyse.b_psy = 0
            param.rc.i_qp_min = Int32(configuration.finestQP)
        }
        // Video range BT.601, as the converter produces; say so in the VUI.
        param.vui.b_fullrange = 0
        guard x264_param_apply_profile(&param, configuration.profile.rawValue) == 0 else {
            throw MediaError(.library, "x264 rejected profile '\(configuration.profile.rawValue)'")
        }
        guard let encoder = rtc_x264_encoder_open(&param) else {
            throw MediaError(
                .library,
                "x264_encoder_open failed for \(configuration.width)x\(configuration.height)@\(configuration.frameRate)"
            )
        }
        self.handle = encoder
        self.configuration = configuration
        self.bitrate = configuration.bitrateKbps
        self.vbvBufferKbit = buffer
        x264_picture_init(&picture)
        picture.img.i_csp = X264_CSP_I420
        picture.img.i_plane = 3
    }

    deinit { x264_encoder_close(handle) }

    /// The current target bitrate in kbit/s.
    public var bitrateKbps: Int { bitrate }
    /// The VBV buffer x264 was last given, kbit (`setBitrate(kbps:pathLimited:)`).
    public private(set) var vbvBufferKbit: Int

    /// The SPS and PPS this encoder puts in front of every IDR, available before any frame is
    /// encoded (x264_encoder_headers), so SDP files can be written before the first packet.
    public func parameterSets() throws(MediaError) -> (sps: [UInt8], pps: [UInt8]) {
        var nals: UnsafeMutablePointer<x264_nal_t>?
        var count: Int32 = 0
        guard x264_encoder_headers(handle, &nals, &count) >= 0, let nals else {
            throw MediaError(.library, "x264_encoder_headers failed")
        }
        var sps: [UInt8]?
        var pps: [UInt8]?
        for i in 0..<Int(count) {
            let nal = nals[i]
            let size = Int(nal.i_payload)
            guard size > 5, let base = nal.p_payload else { continue }
            let bytes = Array(UnsafeBufferPointer(start: base + 4, count: size - 4))
            switch bytes[0] & 0x1F {
            case 7: sps = bytes
            case 8: pps = bytes
            default: continue
            }
        }
        guard let sps, let pps else { throw MediaError(.library, "x264 produced no SPS/PPS") }
        return (sps, pps)
    }

    /// Makes the next encoded frame an IDR (with SPS and PPS in front). A receiver's picture-loss
    /// request and a new subscriber call this.
    public func requestKeyFrame() { forceKeyFrame = true }

    /// Starts an intra-refresh wave at the next picture (`.onRequest` only; ignored otherwise): one
    /// column of intra macroblocks per picture, left to right, so a receiver that joined or lost
    /// packets has the whole picture after ``wavePictures`` pictures, without the burst of an IDR.
    public func startRefreshWave() {
        guard configuration.keyFrames == .onRequest, !waveQueued, wavePicturesLeft == 0 else { return }
        x264_encoder_intra_refresh(handle)
        waveQueued = true
    }

    /// A wave is queued or under way: the caller keeps encoding pictures until it ends, and
    /// does not force their QP (a forced QP 51 would code the wave's intra column at 51 too).
    public var isRefreshing: Bool { waveQueued || wavePicturesLeft > 0 }

    /// Pictures one wave takes: the picture's width in macroblock columns.
    public var wavePictures: Int { (configuration.width + 15) / 16 }

    /// Changes the target bitrate (and the VBV cap with it) without re-creating the encoder, so
    /// there is no IDR and no gap. `pathLimited`: a receiver's path allows less than the
    /// ceiling, so the buffer is `pathLimitedVBVBufferMs`'.
    public func setBitrate(kbps: Int, pathLimited: Bool = false) throws(MediaError) {
        guard Configuration.bitrateRange.contains(kbps) else {
            throw MediaError(.invalidSetting, "video bitrate \(kbps) kbit/s is outside \(Configuration.bitrateRange)")
        }
        var param = x264_param_t()
        x264_encoder_parameters(handle, &param)
        param.rc.i_bitrate = Int32(kbps)
        param.rc.i_vbv_max_bitrate = Int32(kbps)
        let buffer = configuration.vbvBufferKbit(at: kbps, pathLimited: pathLimited)
        param.rc.i_vbv_buffer_size = Int32(buffer)
        guard x264_encoder_reconfig(handle, &param) == 0 else {
            throw MediaError(.library, "x264_encoder_reconfig refused bitrate \(kbps) kbit/s")
        }
        bitrate = kbps
        vbvBufferKbit = buffer
    }

    /// Encodes one frame. Under zerolatency x264 returns the frame's NAL units from this same
    /// call; `nil` only if it ever holds a frame back (it does not with these settings).
    /// `quantizer` forces the frame's QP (0–51) instead of the rate control's: a still picture's
    /// idle repeat goes at 51, where every macroblock is skipped. The unit carries the QP used.
    public func encode(_ frame: VideoFrame, quantizer: Int? = nil) throws(MediaError) -> H264AccessUnit? {
        guard frame.width == configuration.width, frame.height == configuration.height else {
            throw MediaError(
                .invalidDimensions,
                "frame is \(frame.width)x\(frame.height), encoder expects \(configuration.width)x\(configuration.height)"
            )
        }
        picture.i_type = forceKeyFrame ? X264_TYPE_IDR : X264_TYPE_AUTO
        forceKeyFrame = false
        // x264 takes the QP plus one, 0 meaning its own choice.
        picture.i_qpplus1 = quantizer.map { Int32(min(51, max(0, $0)) + 1) } ?? X264_QP_AUTO
        picture.i_pts = Int64(bitPattern: frame.captureTime)
        picture.img.i_stride = (Int32(frame.strideY), Int32(frame.strideU), Int32(frame.strideV), 0)
        var nals: UnsafeMutablePointer<x264_nal_t>?
        var nalCount: Int32 = 0
        var output = x264_picture_t()
        // x264 only reads the planes; the `withUnsafe` scopes keep them alive across the call.
        let size = frame.y.withUnsafeBufferPointer { y in
            frame.u.withUnsafeBufferPointer { u in
                frame.v.withUnsafeBufferPointer { v in
                    picture.img.plane = (
                        UnsafeMutablePointer(mutating: y.baseAddress),
                        UnsafeMutablePointer(mutating: u.baseAddress),
                        UnsafeMutablePointer(mutating: v.baseAddress),
                        nil
                    )
                    defer { picture.img.plane = (nil, nil, nil, nil) }
                    return x264_encoder_encode(handle, &nals, &nalCount, &picture, &output)
                }
            }
        }
        guard size >= 0 else { throw MediaError(.library, "x264_encoder_encode failed (\(size))") }
        guard size > 0, let nals else { return nil }
        return collect(nals: nals, count: Int(nalCount), output: output, captureTime: frame.captureTime)
    }

    /// x264 puts one SEI of type user_data_unregistered (H.264 §D.1.7, payloadType 5) in the first
    /// access unit: its version and full option string, about 700 bytes that no decoder needs and
    /// that would cost a key frame several extra packets. Other SEI messages are kept.
    private static func isEncoderVersionSEI(_ nal: UnsafePointer<UInt8>, _ count: Int) -> Bool {
        count >= 2 && nal[0] & 0x1F == 6 && nal[1] == 5
    }

    /// Copies the NAL payloads out of x264's buffer (valid only until the next call), dropping
    /// the 4-byte length prefix of each: one allocation and one copy per frame, sized exactly.
    private func collect(
        nals: UnsafeMutablePointer<x264_nal_t>,
        count: Int,
        output: x264_picture_t,
        captureTime: UInt64
    ) -> H264AccessUnit {
        var total = 0
        for i in 0..<count { total += max(0, Int(nals[i].i_payload) - 4) }
        var bytes = [UInt8]()
        bytes.reserveCapacity(total)
        var ranges: [Range<Int>] = []
        ranges.reserveCapacity(count)
        for i in 0..<count {
            let nal = nals[i]
            let size = Int(nal.i_payload)
            guard size > 4, let base = nal.p_payload, !Self.isEncoderVersionSEI(base + 4, size - 4) else { continue }
            let start = bytes.count
            bytes.append(contentsOf: UnsafeBufferPointer(start: base + 4, count: size - 4))
            ranges.append(start..<bytes.count)
        }
        let keyFrame = output.b_keyframe != 0 && ranges.contains { bytes[$0.lowerBound] & 0x1F == 5 }
        if keyFrame {
            // An IDR refreshes everything; x264 drops a queued wave then too.
            waveQueued = false
            wavePicturesLeft = 0
        } else if output.b_keyframe != 0, configuration.keyFrames == .onRequest {
            // x264 marks the first picture of a wave as a key frame (it carries the recovery point).
            waveQueued = false
            wavePicturesLeft = wavePictures - 1
        } else if wavePicturesLeft > 0 {
            wavePicturesLeft -= 1
        }
        // On output x264 reports the frame's QP the same way it takes one: plus one.
        let quantizer = output.i_qpplus1 > 0 ? Int(output.i_qpplus1) - 1 : nil
        return H264AccessUnit(
            data: bytes,
            nalRanges: ranges,
            captureTime: captureTime,
            isKeyFrame: keyFrame,
            quantizer: quantizer
        )
    }
}
