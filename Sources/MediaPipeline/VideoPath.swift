import Cadence
import Media
import RTP

/// A picture's way on the media thread: conversion to the encoder's size (and upright), the
/// cadence (whether this picture is encoded at all: `FrameCadence`, Docs/cadence.md), the
/// requests feedback made of the encoder (key frame, bitrate), the encoder, and the hand-off
/// (`MediaControl.deliver`): packetized and fanned out here for a narrow fan-out, else by the
/// sender thread (`SenderThread`). Times the encoder call alone, and frame in → last packet out
/// for the pictures sent here (the sender thread times those it sends). Owned by the media
/// thread.
public final class VideoPath {
    private(set) var encoder: H264Encoder
    private let converter = VideoConverter()
    private let control: MediaControl
    private(set) var encodeTime = LatencyHistogram()
    /// Frame in → last packet out of the pictures this thread sent itself.
    private(set) var sendLatency = LatencyHistogram()
    private var cadence: FrameCadence
    /// For inputs that do not say what changed: compares each picture with the last.
    private let stillDetector = StillPictureDetector()
    /// A picture the cadence chose was not sent (the pacer held it back, the encoder returned
    /// nothing): the next one counts as changed, so a still screen never stops on a picture
    /// receivers lack.
    private var owesPicture = false
    /// When the next intra-refresh wave is due, if a receiver that cannot ask is there.
    private var nextWave: UInt64 = 0
    /// Between waves while the screen changes: the `--keyint` period.
    private var waveInterval: UInt64 {
        UInt64(encoder.configuration.keyFrameInterval) * 1_000_000_000 / UInt64(encoder.configuration.frameRate)
    }
    /// Between waves while the screen is still. Receivers that were watching have the picture;
    /// this bounds the wait of one that started late or lost packets, at the cost of one wave's
    /// cheap pictures (mostly skipped macroblocks) per period.
    static let stillWaveInterval: UInt64 = 10_000_000_000

    /// `--content-hint`: fewer changed pictures before coarser ones (`detail`, `text`).
    private var governor: FrameRateGovernor
    /// The bitrate the congestion controller asked for; x264 is given it times the governor's
    /// divisor, since it budgets each picture from the nominal frame rate.
    private var targetKbps: Int
    /// Layer 0 went unwatched (simulcast): it restarts with a key frame.
    private var topPaused = false
    /// VP8 and VP9 for the codec groups' viewers, from the same pictures.
    private let groupEncoders: GroupEncoders
    /// The lower simulcast layers (`--simulcast`), from the same pictures.
    private let layerEncoders: LayerEncoders

    init(
        encoder: H264Encoder,
        control: MediaControl,
        cadence: FrameCadence.Configuration? = nil,
        contentHint: FrameRateGovernor.Hint = .motion,
        simulcast: [SimulcastEncoding]? = nil
    ) {
        self.encoder = encoder
        self.control = control
        // Each hint converges at its own QP unless a test sets the cadence.
        let cadence = cadence ?? .forHint(contentHint)
        self.cadence = FrameCadence(cadence)
        self.governor = FrameRateGovernor(hint: contentHint, frameRate: encoder.configuration.frameRate)
        self.targetKbps = encoder.bitrateKbps
        self.ceilingKbps = control.sender.withLock { $0.configuration.feedback.bitrate.maximum } / 1000
        self.groupEncoders = GroupEncoders(
            control: control,
            frameRate: encoder.configuration.frameRate,
            startKbps: encoder.bitrateKbps,
            hint: contentHint,
            cadence: cadence
        )
        self.layerEncoders = LayerEncoders(control: control, layers: simulcast ?? [], cadence: cadence)
        // With more than one layer, the first layer's KBPS is layer 0's ceiling.
        topLayerCeilingKbps = (simulcast?.count ?? 0) > 1 ? simulcast?.first?.bitrateKbps : nil
        if let ceiling = topLayerCeilingKbps, targetKbps > ceiling { applyBitrate() }
        let buffer = encoder.vbvBufferKbit
        control.statistics.withLock { $0.videoVBVBufferKbit = buffer }
    }

    /// The most layer 0 is given, kbit/s (`--simulcast-layers`' first KBPS); nil: no limit.
    private let topLayerCeilingKbps: Int?
    /// The most the receivers' feedback can allow, kbit/s (the bitrate policy's maximum).
    private let ceilingKbps: Int
    /// A receiver's path allows less than `ceilingKbps`.
    private var pathLimited = false
    /// Intra-refresh waves go out (a receiver that cannot ask, `scheduleWave`). With
    /// `pathLimited`, x264 gets its shorter VBV buffer: a wave's column through text is a burst
    /// the link's queue would hold (`H264Encoder.Configuration.pathLimitedVBVBufferMs`).
    /// Decision D30 (Docs/congestion.md).
    private var refreshesByWaves = false

    /// A capture of another size: the next picture goes to `encoder` (which opens with an IDR
    /// and its own SPS/PPS); the RTP streams and their clocks are the control's, so they go on.
    func replace(_ encoder: H264Encoder) {
        self.encoder = encoder
        owesPicture = true
        groupEncoders.sizeChanged()
        layerEncoders.sizeChanged()
        if governor.divisor > 1 || pathLimited && refreshesByWaves { applyBitrate() }
    }

    var width: Int { encoder.configuration.width }
    var height: Int { encoder.configuration.height }

    /// The picture as the encoder takes it: an upright I420 picture of the right size goes
    /// straight in; anything else through libyuv (NV12 of either range, BGRA, rotation, another
    /// size, letterboxed when the shape differs). Errors here are the picture's fault.
    func prepare(_ raw: RawVideoFrame) throws -> VideoFrame {
        if raw.format == .i420, raw.rotation == .none, raw.width == width, raw.height == height,
            raw.planes.count == 3, raw.strides.count == 3
        {
            return try VideoFrame(
                width: width,
                height: height,
                y: raw.planes[0],
                strideY: raw.strides[0],
                u: raw.planes[1],
                strideU: raw.strides[1],
                v: raw.planes[2],
                strideV: raw.strides[2],
                captureTime: raw.captureTime
            )
        }
        return try converter.convert(raw, width: width, height: height)
    }

    /// Sends an upright I420 picture from an input that does not say what changed (files, the
    /// test source, a capture process): converted first if its size differs, compared with the
    /// last, and encoded if the cadence says so.
    func send(_ picture: VideoFrame, receivedAt: UInt64) throws {
        var frame = picture
        if frame.width != width || frame.height != height {
            frame = try converter.convert(RawVideoFrame(frame), width: width, height: height)
        }
        let work = nextAction(changed: !stillDetector.isUnchanged(frame), at: receivedAt)
        guard work.encodes else { return }
        try encode(frame, work: work, receivedAt: receivedAt)
    }

    /// What to do with the picture captured at `now`: counts it, takes a pending key-frame
    /// request, and asks the cadence. `.skip` means the picture need not even be converted.
    func nextAction(changed: Bool, at now: UInt64) -> PictureWork {
        if control.takeKeyFrameRequest() { cadence.requestKeyFrame() }
        scheduleWave(at: now)
        counts.framesIn += 1
        if changed || owesPicture, !governor.admits(changedPictureAt: now, force: cadence.keyFrameWanted) {
            // Held back for the frame rate (`--content-hint`): the next picture counts as
            // changed, so the change goes out at the next admitted one.
            owesPicture = true
            counts.framesGoverned += 1
            publishCounts { _ in }
            return PictureWork(h264: .skip, groups: false, layers: false)
        }
        let admitted = changed || owesPicture
        let groups = groupEncoders.prepare(changed: admitted, at: now)
        let layers = layerEncoders.prepare(changed: admitted, at: now)
        // With simulcast, layer 0 nobody watches is not encoded; it resumes with an IDR.
        if !layerEncoders.topWatched {
            topPaused = true
            owesPicture = admitted
            counts.framesStill += 1
            publishCounts { _ in }
            return PictureWork(h264: .skip, groups: groups, layers: layers)
        }
        if topPaused {
            topPaused = false
            cadence.requestKeyFrame()
        }
        let action = cadence.picture(changed: admitted, at: now, refreshing: encoder.isRefreshing)
        owesPicture = false
        switch action {
        case .skip: counts.framesStill += 1
        case .refresh: counts.refreshes += 1
        case .idleRepeat: counts.idleRepeats += 1
        case .encode, .keyFrame: break
        }
        // A picture that is encoded is counted with its result, in `encode`'s one pass.
        if !action.encodes { publishCounts { _ in } }
        return PictureWork(h264: action, groups: groups, layers: layers)
    }

    /// What is done with one captured picture: H.264's cadence action, and whether some codec
    /// group or lower simulcast layer codes it (each has its own cadence).
    struct PictureWork: Equatable {
        var h264: FrameCadence.Action
        var groups: Bool
        var layers: Bool
        /// Whether any encoder runs, so the picture must be converted.
        var encodes: Bool { h264.encodes || groups || layers }
    }

    /// Codes `picture` as `work` says (what `nextAction` returned) and hands it on.
    func encode(_ picture: VideoFrame, work: PictureWork, receivedAt: UInt64) throws {
        // After H.264, whatever became of it (held by its pacer, nothing returned).
        defer {
            if work.layers { layerEncoders.encode(picture, baseConfiguration: encoder.configuration) }
            if work.groups { groupEncoders.encode(picture) }
        }
        guard work.h264.encodes else { return }
        try encode(picture, action: work.h264, receivedAt: receivedAt)
    }

    /// Codes `picture` with x264 as the cadence's `action` says.
    private func encode(_ picture: VideoFrame, action: FrameCadence.Action, receivedAt: UInt64) throws {
        if control.sender.withLock({ $0.pacedBacklogHoldsVideo() }) {
            owesPicture = true
            publishCounts { $0.framesHeldByPacer += 1 }
            return
        }
        applyBitrateRequest()
        if action == .keyFrame { encoder.requestKeyFrame() }
        let quantizer = action == .idleRepeat ? FrameCadence.idleRepeatQP : nil
        let encodeStart = MonotonicClock.now()
        let encoded = try encoder.encode(picture, quantizer: quantizer)
        encodeTime.record(nanoseconds: MonotonicClock.now() &- encodeStart)
        guard let unit = encoded else {
            owesPicture = true
            publishCounts { _ in }
            return
        }
        if action != .idleRepeat, let qp = unit.quantizer {
            cadence.encoded(qp: qp, at: receivedAt)
            if action == .encode, governor.encoded(qp: qp, at: receivedAt) { applyBitrate() }
        }
        if try control.deliver(video: unit, receivedAt: receivedAt) {
            sendLatency.record(nanoseconds: MonotonicClock.now() &- receivedAt)
        }
        publishCounts {
            $0.framesOut += 1
            $0.videoBytes += unit.data.count
            $0.lastQuantizer = unit.quantizer
            $0.quantizerSum += unit.quantizer ?? 0
            if unit.isKeyFrame { $0.keyFrames += 1 }
        }
        // An IDR refreshed everything: the next wave is a whole period away.
        if unit.isKeyFrame, nextWave != 0 { nextWave = receivedAt &+ waveInterval }
    }

    /// Key frames only when asked (Docs/cadence.md): with an `.onRequest` encoder, a receiver that
    /// cannot ask (an SDES destination) gets an intra-refresh wave every `--keyint` period while
    /// the screen changes, and at once when one on this machine starts listening after its
    /// packets were refused (`ListenerWatch`); a still screen is refreshed every
    /// ``stillWaveInterval`` only for such receivers elsewhere, whose start nobody can see; a
    /// converging one waits. Without any, none.
    private func scheduleWave(at now: UInt64) {
        guard encoder.configuration.keyFrames == .onRequest, !encoder.isRefreshing else { return }
        let (cannotAsk, unwatched, starts) = control.sender.withLock {
            ($0.hasReceiversThatCannotAsk, $0.hasUnwatchedReceiversThatCannotAsk, $0.receiverStarts)
        }
        let started = starts != receiverStarts
        receiverStarts = starts
        if cannotAsk != refreshesByWaves {
            refreshesByWaves = cannotAsk
            if pathLimited { applyBitrate() }
        }
        let still = if case .still = cadence.state { true } else { false }
        let moving = if case .changing = cadence.state { true } else { false }
        // Never while converging: a wave's pictures start convergence over, and the next wave
        // would come due before it ends.
        let periodic = now >= nextWave && (moving || still && unwatched)
        guard cannotAsk else { return }
        if still, !unwatched, !started, nextWave != 0 {
            // No period while still: the first wave after it comes a whole period into the
            // change, so a single change (a page turned) costs none.
            nextWave = now &+ waveInterval
            return
        }
        guard started || periodic else { return }
        if nextWave != 0 || started {
            encoder.startRefreshWave()
            counts.refreshWaves += 1
        }
        nextWave = now &+ (still ? max(Self.stillWaveInterval, waveInterval) : waveInterval)
    }
    /// `MediaSender.receiverStarts` when last read.
    private var receiverStarts = 0

    /// What `nextAction` counted since the statistics were last written.
    private struct PictureCounts {
        var framesIn = 0
        var framesStill = 0
        var refreshes = 0
        var idleRepeats = 0
        var refreshWaves = 0
        var framesGoverned = 0
    }
    private var counts = PictureCounts()
    /// The cadence's stillness as last told to `control` (for the room's `stream-state`); nil
    /// until the first picture, so a new path always says where it starts.
    private var saidStill: Bool?

    /// Writes the picture counts, the cadence state and `more` into the statistics: one lock
    /// pass per picture.
    private func publishCounts(_ more: (inout MediaStatistics) -> Void) {
        let pending = counts
        counts = PictureCounts()
        let state = cadence.state.name
        let governedRate = governor.divisor > 1 ? governor.frameRate(nominal: encoder.configuration.frameRate) : nil
        // Only a change costs anything (a lock, a wake-up): the room hears it within a picture.
        let still = if case .still = cadence.state { true } else { false }
        if still != saidStill {
            saidStill = still
            control.cadenceIsStill(still)
        }
        control.statistics.withLock {
            $0.framesIn += pending.framesIn
            $0.framesStill += pending.framesStill
            $0.refreshes += pending.refreshes
            $0.idleRepeats += pending.idleRepeats
            $0.refreshWaves += pending.refreshWaves
            $0.framesGoverned += pending.framesGoverned
            $0.governedFrameRate = governedRate
            $0.cadence = state
            more(&$0)
        }
    }

    /// A new bitrate receivers' feedback asked for since the last frame (the sender thread reads
    /// the feedback; key-frame requests go through the cadence, `nextAction`).
    private func applyBitrateRequest() {
        guard let kbps = control.takeBitrateRequest() else { return }
        _ = governor.targetRose(from: targetKbps, to: kbps)
        targetKbps = kbps
        pathLimited = kbps < ceilingKbps
        applyBitrate()
    }

    /// The target into x264 (what the receivers of layer 0 allow it: an SFU's vote leaves the
    /// lower simulcast layers their rates, `MediaSender.layerZeroVote`; at most the first
    /// layer's KBPS), scaled by the governor's divisor (within x264's range).
    private func applyBitrate() {
        let kbps = min(targetKbps, topLayerCeilingKbps ?? .max)
        let scaled = min(H264Encoder.Configuration.bitrateRange.upperBound, kbps * governor.divisor)
        do {
            try encoder.setBitrate(kbps: scaled, pathLimited: pathLimited && refreshesByWaves)
            let buffer = encoder.vbvBufferKbit
            control.statistics.withLock {
                $0.videoBitrateTargetKbps = targetKbps
                $0.videoVBVBufferKbit = buffer
            }
        } catch {
            // Out of the encoder's range: the policy's bounds come from validated options,
            // so this is a bug; keep the current rate rather than stop the stream.
            control.statistics.withLock { $0.bitrateChangesRefused += 1 }
        }
    }

    /// The encoder's first IDR carries these; the SDP's `sprop-parameter-sets` too.
    public func parameterSets() throws -> (sps: [UInt8], pps: [UInt8]) { try encoder.parameterSets() }
}
