import Media
import RTP

/// One video stream the sender cuts packets for: the only one, or one simulcast layer (RFC 8853)
/// of several, each its own encode. A layer has everything RTP gives a stream of its own: SSRC
/// and sequence numbers, an RTX stream (RFC 4588) with its own SSRC, a NACK history, and a
/// key-frame limiter, so a loss or a PLI on one layer costs that layer alone (OBS's WHIP
/// simulcast keeps one history for all its layers, and its low layers freeze under loss).
///
/// All layers share one RTP timestamp base and clock origin: a picture captured at one instant
/// has the same timestamp on every layer, so a viewer moved from one layer to another sees its
/// clock run on.
public final class VideoLayer {
    /// Its place in `MediaSender.layers`: 0 is the highest (full resolution, full rate).
    public let index: Int
    /// RFC 8851 `rid`; nil when the sender does not simulcast.
    public let rid: String?
    public internal(set) var stream: RTPStreamState
    /// The SSRC of its RTX stream (RFC 4588).
    public let rtxSSRC: UInt32
    let clock: RTPClock
    var h264: H264Payloader
    /// Its clear packets as sent, for NACKs and the pacers.
    let history: RTPPacketHistory
    var keyFrames: KeyFrameRequestLimiter
    var lastTimestamp: UInt32?

    init(
        index: Int,
        rid: String?,
        stream: RTPStreamState,
        origin: UInt64,
        budget: RTPPayloadBudget,
        historyCapacity: Int,
        keyFrameInterval: UInt64
    ) throws {
        self.index = index
        self.rid = rid
        self.stream = stream
        clock = stream.clock(origin: origin)
        h264 = H264Payloader(budget: budget)
        history = try RTPPacketHistory(capacity: historyCapacity, slotSize: budget.mtu)
        var generator = SystemRandomNumberGenerator()
        rtxSSRC = UInt32.random(in: .min ... .max, using: &generator)
        keyFrames = KeyFrameRequestLimiter(minimumInterval: keyFrameInterval)
    }

    /// A pacer handle: the layer in the high bits, the sequence number in the low 16, so one
    /// pacer queue holds every layer's packets in the order they were cut.
    func handle(_ sequenceNumber: UInt16) -> Int { index << 16 | Int(sequenceNumber) }

    /// The handle of a packet renumbered for one viewer (`LayerSelection`): its number in the
    /// viewer's stream above the layer and sequence number, and a flag.
    func handle(_ sequenceNumber: UInt16, renumberedAs number: UInt16) -> Int {
        Self.renumberedFlag | Int(number) << 32 | handle(sequenceNumber)
    }

    private static let renumberedFlag = 1 << 48

    /// The layer, sequence number and (for a renumbered packet) the viewer's number a pacer
    /// handle names.
    static func split(handle: Int) -> (layer: Int, sequenceNumber: UInt16, renumbered: UInt16?) {
        (
            handle >> 16 & 0xFFFF,
            UInt16(truncatingIfNeeded: handle),
            handle & renumberedFlag != 0 ? UInt16(truncatingIfNeeded: handle >> 32) : nil
        )
    }
}

/// Which of the sender's video layers a destination gets.
public enum DestinationLayers: Sendable, Equatable {
    /// Layer 0 alone: every receiver of a sender without simulcast, and a viewer of our room.
    case first
    /// Every layer, each under its own SSRC with its `rid` (RFC 8852) on every packet: an SFU
    /// that took our simulcast offer (WHIP). Layers its estimate cannot carry are dropped from
    /// the top (`Destination.keptFrom`).
    case all
    /// One layer at a time, the highest its own estimate carries, renumbered into layer 0's
    /// stream (`LayerSelection`): a viewer of our room when the sender simulcasts.
    case adaptive

    /// Whether feedback about `layer`'s own SSRC concerns this destination.
    func takes(_ layer: Int) -> Bool {
        switch self {
        case .first, .adaptive: layer == 0
        case .all: true
        }
    }
}
