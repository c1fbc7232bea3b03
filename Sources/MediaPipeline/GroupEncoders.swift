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
final class GroupEncoders {
    /// One group's encoder and what it was last asked.
    private final class Slot {
        let group: CodecGroup
        var encoder: VPXEncoder?
        /// The group's target, kbit/s; the encoder opens at it.
        var targetKbps: Int
        /// A key frame is owed: asked for, or the encoder is new.
        var keyFrameOwed = false
        /// The last frame's presentation time (90 kHz from the encoder's first picture): libvpx's
        /// rate control wants them increasing.
        var lastPTS: Int64 = -1
        var origin: UInt64 = 0
        var statistics: EncoderStatistics

        init(group: CodecGroup, targetKbps: Int) {
            self.group = group
            self.targetKbps = targetKbps
            statistics = EncoderStatistics(codec: group.codec.encodingName)
        }
    }

    private var slots: [Slot] = []
    /// `MediaControl.groups(into:)`'s copy, capacity kept.
    private var groups: [CodecGroup] = []
    private let control: MediaControl
    private let frameRate: Int
    /// Where a new group's encoder starts, kbit/s: H.264's start rate.
    private let startKbps: Int
    private let screenContent: Bool

    init(control: MediaControl, frameRate: Int, startKbps: Int, screenContent: Bool) {
        self.control = control
        self.frameRate = frameRate
        self.startKbps = startKbps
        self.screenContent = screenContent
        groups.reserveCapacity(4)
    }

    /// Picks up new groups and their key-frame requests before the cadence decides: true when
    /// some group with viewers owes a key frame, so the picture must be encoded even if the
    /// screen is still.
    func prepare() -> Bool {
        control.groups(into: &groups)
        if groups.count != slots.count {
            for group in groups where !slots.contains(where: { $0.group === group }) {
                slots.append(Slot(group: group, targetKbps: startKbps))
            }
        }
        var owed = false
        for slot in slots {
            if slot.group.requests.takeKeyFrameRequest() { slot.keyFrameOwed = true }
            if slot.keyFrameOwed, slot.group.sender.withLock({ !$0.destinations.isEmpty }) { owed = true }
        }
        return owed
    }

    /// Encodes `picture` for every group with viewers and sends it to them.
    func encode(_ picture: VideoFrame) {
        for slot in slots {
            if let kbps = slot.group.requests.takeBitrateRequest() {
                slot.targetKbps = kbps
                try? slot.encoder?.setBitrate(kbps: kbps)
            }
            let viewers = slot.group.sender.withLock { $0.destinations.count }
            guard viewers > 0 else {
                if slot.encoder != nil { close(slot) }
                continue
            }
            do {
                try encode(picture, in: slot)
            } catch {
                slot.statistics.failures += 1
                slot.statistics.lastError = "\(error)"
                close(slot)
            }
            slot.statistics.viewers = viewers
        }
        publish()
    }

    /// A capture of another size: every encoder reopens at the next picture.
    func sizeChanged() {
        for slot in slots where slot.encoder != nil { close(slot) }
    }

    private func encode(_ picture: VideoFrame, in slot: Slot) throws {
        let encoder: VPXEncoder
        if let open = slot.encoder, open.configuration.width == picture.width,
            open.configuration.height == picture.height
        {
            encoder = open
        } else {
            encoder = try VPXEncoder(
                VPXEncoder.Configuration(
                    codec: slot.group.codec == .vp9 ? .vp9 : .vp8,
                    width: picture.width,
                    height: picture.height,
                    frameRate: frameRate,
                    bitrateKbps: min(max(slot.targetKbps, 100), 50_000),
                    screenContent: screenContent
                )
            )
            slot.encoder = encoder
            slot.origin = picture.captureTime
            slot.lastPTS = -1
            slot.statistics.running = true
            slot.statistics.opened += 1
            slot.keyFrameOwed = false  // its first frame is one
        }
        let key = slot.keyFrameOwed
        slot.keyFrameOwed = false
        let started = MonotonicClock.now()
        let elapsed = picture.captureTime >= slot.origin ? picture.captureTime - slot.origin : 0
        let pts = max(Int64(elapsed / 100_000 * 9), slot.lastPTS + 1)
        slot.lastPTS = pts
        guard let frame = try encoder.encode(picture, pts90k: pts, forceKeyFrame: key) else { return }
        slot.statistics.encodeNanoseconds += Int(MonotonicClock.now() &- started)
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
        slot.statistics.running = false
        slot.statistics.viewers = 0
    }

    /// One lock pass for all groups' counters.
    private func publish() {
        guard !slots.isEmpty else { return }
        control.statistics.withLock { statistics in
            if statistics.encoders.count != slots.count {
                statistics.encoders = slots.map(\.statistics)
            } else {
                for index in slots.indices { statistics.encoders[index] = slots[index].statistics }
            }
        }
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
    public var targetKbps = 0
    public var failures = 0
    public var lastError: String?

    public init(codec: String) { self.codec = codec }
}
