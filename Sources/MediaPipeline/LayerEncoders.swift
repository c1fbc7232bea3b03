import Cadence
import Media
import ProcessSupport
import SendEngine

/// Simulcast's lower layers (Docs/simulcast.md): one x264 encode each, on the media thread right
/// after the main encoder (layer 0), from the same converted picture (scaled down for a smaller
/// layer, into planes kept between pictures). Each has its own `FrameCadence`, so a still screen
/// costs nothing on any layer, and its own frame-rate cap: a change is coded once the layer's
/// next picture is due (a period after the last was due), else at the next picture that may (a
/// key frame asked for goes at once). A layer is coded only while some destination gets it or
/// waits for it (`MediaSender.watchedLayers`); nobody watching it, it costs nothing and reopens
/// with an IDR.
final class LayerEncoders {
    private final class Slot {
        let layer: SimulcastEncoding
        /// Its index among the sender's layers.
        let index: Int
        var encoder: H264Encoder?
        var cadence: FrameCadence
        var action: FrameCadence.Action = .skip
        /// When its next picture is due (its frame-rate cap): one period after the last one was
        /// due, not after it was coded, so a picture handled late does not push every later
        /// one back and cost a picture at the full rate.
        var nextDue: UInt64?
        /// A change came while the cap held it: the next picture it codes counts as changed.
        var owesChange = false
        let scaler = PictureScaler()
        var statistics: LayerStatistics
        /// What its encoder is to make, kbit/s: its configured rate, or less for its viewers.
        var targetKbps: Int

        init(layer: SimulcastEncoding, index: Int, cadence: FrameCadence.Configuration) {
            self.layer = layer
            self.index = index
            self.cadence = FrameCadence(cadence)
            statistics = LayerStatistics(rid: layer.rid)
            targetKbps = layer.bitrateKbps
            statistics.targetKbps = layer.bitrateKbps
        }

        /// One frame period of the layer.
        var period: UInt64 { 1_000_000_000 / UInt64(layer.frameRate) }
        /// How early a picture may come and still count as due: capture jitter.
        static let earliness: UInt64 = 2_000_000

        /// Whether a picture captured at `now` may be coded (the cap allows it).
        func isDue(at now: UInt64) -> Bool { nextDue.map { now &+ Self.earliness >= $0 } ?? true }

        /// A picture captured at `now` was coded: the next is due a period after this one was
        /// due; counted from `now` after a key frame out of turn or a long gap (a still screen).
        func coded(at now: UInt64) {
            let late = nextDue.map { Int64(bitPattern: now &- $0) } ?? .max
            let onTime = -Int64(Self.earliness)...Int64(period)
            nextDue = onTime.contains(late) ? nextDue.map { $0 &+ period } : now &+ period
        }
    }

    private var slots: [Slot]
    private let control: MediaControl
    private let cadence: FrameCadence.Configuration
    /// When the picture `prepare` decided on was captured.
    private var decidedAt: UInt64 = 0

    /// `layers` as configured, layer 0 (the main encoder's) first.
    init(control: MediaControl, layers: [SimulcastEncoding], cadence: FrameCadence.Configuration) {
        self.control = control
        self.cadence = cadence
        slots = layers.enumerated().dropFirst().map { Slot(layer: $1, index: $0, cadence: cadence) }
    }

    var isEmpty: Bool { slots.isEmpty }

    /// Whether layer 0 (the main encoder) is to be coded, as of the last `prepare`: with
    /// simulcast, not while every destination watches a lower layer.
    private(set) var topWatched = true

    /// Decides what each layer does with the picture captured at `now` (`changed` as layer 0's
    /// cadence was told). True when some layer codes it.
    func prepare(changed: Bool, at now: UInt64) -> Bool {
        guard !slots.isEmpty else { return false }
        decidedAt = now
        let requested = control.takeLayerKeyFrameRequests()
        let (watchedMask, viewers, targets) = control.sender.withLock { sender in
            (sender.watchedLayers, sender.layerViewers, sender.layerTargets)
        }
        // Paused only while others watch lower layers: with nobody at all it runs as without
        // simulcast (the room's first answer needs its parameter sets).
        topWatched = watchedMask & 1 != 0 || watchedMask == 0
        var wanted = false
        var republish = !published || (viewers.first ?? 0) != topViewers
        topViewers = viewers.first ?? 0
        for slot in slots {
            let watched = watchedMask & (1 << UInt32(slot.index)) != 0
            let count = slot.index < viewers.count ? viewers[slot.index] : 0
            if count != slot.statistics.viewers || watched == slot.statistics.paused { republish = true }
            slot.statistics.viewers = count
        }
        // Paused, resumed or watched by others: shown now, not at the next coded picture.
        defer { if republish { publish() } }
        for slot in slots {
            slot.action = .skip
            guard watchedMask & (1 << UInt32(slot.index)) != 0 else {
                if slot.encoder != nil { close(slot) }
                slot.statistics.paused = true
                continue
            }
            slot.statistics.paused = false
            if slot.index < targets.count, targets[slot.index] > 0 { follow(targets[slot.index] / 1000, in: slot) }
            if requested & (1 << slot.index) != 0 || slot.encoder == nil { slot.cadence.requestKeyFrame() }
            if !slot.cadence.keyFrameWanted, !slot.isDue(at: now) {
                if changed { slot.owesChange = true }
                continue
            }
            slot.action = slot.cadence.picture(changed: changed || slot.owesChange, at: now)
            slot.owesChange = false
            if slot.action.encodes {
                slot.coded(at: now)
                wanted = true
            }
        }
        return wanted
    }

    /// Sets the layer's rate to `kbps` (what its viewers allow, `MediaSender.layerTargets`)
    /// when it moved by a tenth or more: x264 reconfigures at the next picture.
    private func follow(_ kbps: Int, in slot: Slot) {
        guard kbps != slot.targetKbps else { return }
        if let encoder = slot.encoder, abs(kbps - encoder.bitrateKbps) * 10 >= encoder.bitrateKbps {
            do {
                try encoder.setBitrate(kbps: kbps)
            } catch {
                slot.statistics.lastError = "\(error)"
                return
            }
        }
        slot.targetKbps = kbps
        slot.statistics.targetKbps = kbps
    }

    /// Codes `picture` on each layer as `prepare` decided and sends it on that layer.
    func encode(_ picture: VideoFrame, baseConfiguration: H264Encoder.Configuration) {
        for slot in slots {
            let action = slot.action
            slot.action = .skip
            guard action.encodes else { continue }
            do {
                try encode(picture, action: action, in: slot, base: baseConfiguration)
            } catch {
                slot.statistics.failures += 1
                slot.statistics.lastError = "\(error)"
                close(slot)
            }
        }
        publish()
    }

    /// A capture of another size: every layer reopens at the next picture it codes.
    func sizeChanged() {
        for slot in slots where slot.encoder != nil { close(slot) }
    }

    private func encode(
        _ picture: VideoFrame,
        action: FrameCadence.Action,
        in slot: Slot,
        base: H264Encoder.Configuration
    ) throws {
        let width = max(2, picture.width / slot.layer.scaleDown) & ~1
        let height = max(2, picture.height / slot.layer.scaleDown) & ~1
        let encoder: H264Encoder
        if let open = slot.encoder, open.configuration.width == width, open.configuration.height == height {
            encoder = open
        } else {
            var configuration = base
            configuration.width = width
            configuration.height = height
            configuration.frameRate = slot.layer.frameRate
            configuration.bitrateKbps = slot.targetKbps
            configuration.keyFrames = .onRequest
            encoder = try H264Encoder(configuration)
            slot.encoder = encoder
            slot.statistics.opened += 1
            encoder.requestKeyFrame()
        }
        let input = slot.layer.scaleDown == 1 ? picture : try slot.scaler.scale(picture, width: width, height: height)
        if action == .keyFrame { encoder.requestKeyFrame() }
        let started = MonotonicClock.now()
        let quantizer = action == .idleRepeat ? FrameCadence.idleRepeatQP : nil
        guard let unit = try encoder.encode(input, quantizer: quantizer) else { return }
        slot.statistics.encodeNanoseconds += Int(MonotonicClock.now() &- started)
        if action != .idleRepeat, let qp = unit.quantizer { slot.cadence.encoded(qp: qp, at: decidedAt) }
        try control.sender.withLock { try $0.send(video: unit, layer: slot.index) }
        slot.statistics.frames += 1
        slot.statistics.bytes += unit.data.count
        if unit.isKeyFrame { slot.statistics.keyFrames += 1 }
        slot.statistics.lastQuantizer = unit.quantizer
        slot.statistics.width = width
        slot.statistics.height = height
        slot.statistics.cadence = slot.cadence.state.name
    }

    private func close(_ slot: Slot) {
        slot.encoder = nil
        slot.cadence = FrameCadence(cadence)
        slot.nextDue = nil
        slot.owesChange = false
        slot.statistics.cadence = nil
    }

    /// Whether the counters were written once (a layer nobody takes shows as paused).
    private var published = false
    /// Viewers of our room on layer 0 (the main encoder's).
    private var topViewers = 0

    /// One lock pass for all layers' counters.
    private func publish() {
        published = true
        let top = topViewers
        control.statistics.withLock {
            $0.layers.overwrite(from: slots, \.statistics)
            $0.topLayerViewers = top
        }
    }
}

/// A lower simulcast layer's counters (`--stats-json` `layers`, the status line).
public struct LayerStatistics: Sendable, Codable, Equatable {
    public var rid: String
    /// Not coded: no destination gets or waits for it.
    public var paused = true
    /// Viewers of our room that watch it (`DestinationLayers.adaptive`).
    public var viewers = 0
    /// The rate its encoder is asked for, kbit/s (below the configured one while a viewer of
    /// it allows less).
    public var targetKbps = 0
    public var opened = 0
    public var frames = 0
    public var keyFrames = 0
    public var bytes = 0
    public var encodeNanoseconds = 0
    public var lastQuantizer: Int?
    public var width = 0
    public var height = 0
    public var cadence: String?
    public var failures = 0
    public var lastError: String?

    public init(rid: String) { self.rid = rid }
}
