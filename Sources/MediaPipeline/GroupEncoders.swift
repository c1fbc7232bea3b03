import Cadence
import Media
import ProcessSupport
import SDP
import SendEngine
import VPX

/// The second encoders, one per codec group with viewers (`CodecGroup`): each takes the same
/// converted picture as H.264, on the media thread, right after it. A group's encoder opens
/// when the group has a destination (its first frame is a key frame) and closes when the last
/// one leaves, so a codec nobody watches costs nothing; a new capture size reopens it. A
/// failure closes that encoder and is counted; H.264 goes on.
///
/// Each encoder has its own `FrameCadence` (Docs/cadence.md), converged at its codec's floor for
/// the content hint (`finestQuantizer`) rather than x264's QP: a changed picture is coded when H.264 codes it,
/// a still one is refreshed until *this* encoder converged (it may need longer than x264, or
/// less), then repeated once a second with every block skipped (`VPXEncoder.encode`'s
/// `idleRepeat`). A viewer's key-frame request on a still screen is coded for this group
/// alone: the H.264 viewers get nothing extra.
final class GroupEncoders {
    /// One group's encoder and what it was last asked.
    private final class Slot {
        let group: CodecGroup
        var encoder: VPXEncoder?
        /// The group's target, kbit/s; the encoder opens at it.
        var targetKbps: Int
        /// What this encoder does with the picture being decided (`prepare`).
        var cadence: FrameCadence
        var action: FrameCadence.Action = .skip
        /// The last frame's presentation time (90 kHz from the encoder's first picture): libvpx's
        /// rate control wants them increasing.
        var lastPTS: Int64 = -1
        var origin: UInt64 = 0
        var statistics: EncoderStatistics

        init(group: CodecGroup, targetKbps: Int, cadence: FrameCadence.Configuration) {
            self.group = group
            self.targetKbps = targetKbps
            self.cadence = FrameCadence(cadence)
            statistics = EncoderStatistics(codec: group.codec.encodingName)
        }
    }

    private var slots: [Slot] = []
    /// `MediaControl.groups(into:)`'s copy, capacity kept.
    private var groups: [CodecGroup] = []
    /// When the picture `prepare` decided on was captured: the cadences' clock.
    private var decidedAt: UInt64 = 0
    private let control: MediaControl
    private let frameRate: Int
    /// Where a new group's encoder starts, kbit/s: H.264's start rate.
    private let startKbps: Int
    private let hint: FrameRateGovernor.Hint
    /// Every group's cadence: H.264's limits and repeat interval; each converges at its codec's
    /// floor.
    private let cadence: FrameCadence.Configuration

    init(
        control: MediaControl,
        frameRate: Int,
        startKbps: Int,
        hint: FrameRateGovernor.Hint,
        cadence: FrameCadence.Configuration
    ) {
        self.control = control
        self.frameRate = frameRate
        self.startKbps = startKbps
        self.hint = hint
        self.cadence = cadence
        groups.reserveCapacity(4)
    }

    /// The finest quantizer `codec` codes a screen at, which is also where a still picture has
    /// converged: libwebrtc's 2 for `motion`, libvpx's screen-content floor for `text` (x264's
    /// QP 12), the codec's counterpart of x264's QP 24 for `detail` (Docs/codecs.md).
    static func finestQuantizer(for codec: VPXEncoder.Codec, hint: FrameRateGovernor.Hint) -> Int {
        switch hint {
        case .motion: VPXEncoder.quantizerRange.lowerBound
        case .text: VPXEncoder.screenContentMinimumQuantizer
        case .detail: VPXEncoder.detailMinimumQuantizer(for: codec)
        }
    }

    private static func codec(of group: CodecGroup) -> VPXEncoder.Codec { group.codec == .vp9 ? .vp9 : .vp8 }

    /// Decides, for every group with viewers, what its encoder does with the picture captured
    /// at `now` (`changed`: as H.264's cadence was told, after the frame-rate governor). True
    /// when some group codes it, so it must be converted even if H.264 skips it.
    func prepare(changed: Bool, at now: UInt64) -> Bool {
        decidedAt = now
        control.groups(into: &groups)
        if groups.count != slots.count {
            for group in groups where !slots.contains(where: { $0.group === group }) {
                var own = cadence
                own.convergedQP = Self.finestQuantizer(for: Self.codec(of: group), hint: hint)
                slots.append(Slot(group: group, targetKbps: startKbps, cadence: own))
            }
        }
        var wanted = false
        var closed = false
        for slot in slots {
            if slot.group.requests.takeKeyFrameRequest() { slot.cadence.requestKeyFrame() }
            let viewers = slot.group.sender.withLock { $0.destinations.count }
            slot.statistics.viewers = viewers
            guard viewers > 0 else {
                // Nobody watches: the encoder closes now, not at the next coded picture.
                slot.action = .skip
                if slot.encoder != nil {
                    close(slot)
                    closed = true
                }
                continue
            }
            // A new encoder's first frame is a key frame, whatever the screen does.
            if slot.encoder == nil { slot.cadence.requestKeyFrame() }
            slot.action = slot.cadence.picture(changed: changed, at: now)
            switch slot.action {
            case .skip: slot.statistics.stillPictures += 1
            case .refresh: slot.statistics.refreshes += 1
            case .idleRepeat: slot.statistics.idleRepeats += 1
            case .encode, .keyFrame: break
            }
            if slot.action.encodes { wanted = true }
        }
        // A picture some group codes publishes in `encode`; a close must show now.
        if closed, !wanted { publish() }
        return wanted
    }

    /// Codes `picture` as each group's cadence decided in `prepare` and sends it to its viewers.
    func encode(_ picture: VideoFrame) {
        for slot in slots {
            if let kbps = slot.group.requests.takeBitrateRequest() {
                slot.targetKbps = kbps
                try? slot.encoder?.setBitrate(kbps: kbps)
            }
            let action = slot.action
            slot.action = .skip
            guard action.encodes else { continue }
            do {
                try encode(picture, action: action, in: slot)
            } catch {
                slot.statistics.failures += 1
                slot.statistics.lastError = "\(error)"
                close(slot)
            }
        }
        publish()
    }

    /// A capture of another size: every encoder reopens at the next picture.
    func sizeChanged() {
        for slot in slots where slot.encoder != nil { close(slot) }
    }

    private func encode(_ picture: VideoFrame, action: FrameCadence.Action, in slot: Slot) throws {
        let encoder: VPXEncoder
        if let open = slot.encoder, open.configuration.width == picture.width,
            open.configuration.height == picture.height
        {
            encoder = open
        } else {
            encoder = try VPXEncoder(
                VPXEncoder.Configuration(
                    codec: Self.codec(of: slot.group),
                    width: picture.width,
                    height: picture.height,
                    frameRate: frameRate,
                    bitrateKbps: min(max(slot.targetKbps, 100), 50_000),
                    screenContent: hint != .motion,
                    // Where this group's cadence converges (set with the slot).
                    finestQuantizer: slot.cadence.configuration.convergedQP
                )
            )
            slot.encoder = encoder
            slot.origin = picture.captureTime
            slot.lastPTS = -1
            slot.statistics.running = true
            slot.statistics.opened += 1
        }
        let started = MonotonicClock.now()
        let elapsed = picture.captureTime >= slot.origin ? picture.captureTime - slot.origin : 0
        let pts = max(Int64(elapsed / 100_000 * 9), slot.lastPTS + 1)
        slot.lastPTS = pts
        guard
            let frame = try encoder.encode(
                picture,
                pts90k: pts,
                forceKeyFrame: action == .keyFrame,
                idleRepeat: action == .idleRepeat
            )
        else { return }
        slot.statistics.encodeNanoseconds += Int(MonotonicClock.now() &- started)
        if action != .idleRepeat, let quantizer = frame.quantizer {
            slot.cadence.encoded(qp: quantizer, at: decidedAt)
        }
        slot.statistics.cadence = slot.cadence.state.name
        try slot.group.sender.withLock { sender in
            try sender.send(
                vpxFrame: frame.data[...],
                captureTime: frame.captureTime,
                isKeyFrame: frame.isKeyFrame,
                width: frame.width,
                height: frame.height
            )
        }
        slot.statistics.frames += 1
        slot.statistics.bytes += frame.data.count
        if frame.isKeyFrame { slot.statistics.keyFrames += 1 }
        slot.statistics.lastQuantizer = frame.quantizer
        slot.statistics.targetKbps = slot.targetKbps
    }

    private func close(_ slot: Slot) {
        slot.encoder = nil
        slot.cadence = FrameCadence(cadence)
        slot.statistics.running = false
        slot.statistics.cadence = nil
    }

    /// One lock pass for all groups' counters.
    private func publish() {
        guard !slots.isEmpty else { return }
        control.statistics.withLock { $0.encoders.overwrite(from: slots, \.statistics) }
    }
}

/// A second encoder's counters (`--stats-json` `encoders`, the status line).
public struct EncoderStatistics: Sendable, Codable, Equatable {
    public var codec: String
    /// Open now (it has viewers), and how many times it was opened.
    public var running = false
    public var opened = 0
    public var viewers = 0
    public var frames = 0
    public var keyFrames = 0
    public var bytes = 0
    public var encodeNanoseconds = 0
    public var lastQuantizer: Int?
    /// Its own cadence (Docs/cadence.md): the state, and the pictures it did not code, refreshed
    /// and repeated.
    public var cadence: String?
    public var stillPictures = 0
    public var refreshes = 0
    public var idleRepeats = 0
    public var targetKbps = 0
    public var failures = 0
    public var lastError: String?

    public init(codec: String) { self.codec = codec }
}
