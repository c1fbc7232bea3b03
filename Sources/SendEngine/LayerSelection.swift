/// The one simulcast layer a viewer of our room watches (Docs/simulcast.md): the highest its
/// own estimate carries, moved at that layer's key frames, renumbered into the one video stream
/// the viewer negotiated (layer 0's SSRC, one continuous sequence-number space), so a browser
/// sees one stream whose picture size and rate change at an IDR, as after a resolution change.
///
/// A switch is asked for (`request`), then made at the first key frame of the layer asked for
/// (`admit`): its packets continue the viewer's sequence numbers where the old layer's stopped.
/// Until then the old layer keeps coming, so the picture never breaks. Not thread-safe: the
/// sender's task drives it.
struct LayerSelection {
    /// The layer forwarded now; nil until the first key frame of the first layer chosen.
    private(set) var current: Int?
    /// The layer it moves to at that layer's next key frame.
    private(set) var pending: Int?
    /// When `pending` was asked for (its key frame is asked again if none came).
    private var pendingSince: UInt64 = 0
    private(set) var switches = 0
    private(set) var renumbering: LayerRenumbering
    private(set) var policy: LayerPolicy

    /// The SSRC the viewer knows its video by: layer 0's.
    let ssrc: UInt32

    init(ssrc: UInt32, layerCount: Int, needs: [Int], firstSequenceNumber: UInt16) {
        self.ssrc = ssrc
        renumbering = LayerRenumbering(layerCount: layerCount, lastSent: firstSequenceNumber &- 1)
        policy = LayerPolicy(needs: needs)
    }

    /// The layers whose packets it takes now (`current`) or waits for (`pending`), bit i for
    /// layer i: what keeps a lower layer's encoder running.
    var watchedMask: UInt32 {
        (current.map { 1 << UInt32($0) } ?? 0) | (pending.map { 1 << UInt32($0) } ?? 0)
    }

    /// Asks for `layer` at `now`. True when that layer's key frame should be asked for: a new
    /// target, or the same one still waiting after `keyFrameRetry`.
    mutating func request(_ layer: Int, at now: UInt64) -> Bool {
        if layer == current {
            pending = nil
            return false
        }
        if layer == pending {
            guard now &- pendingSince >= Self.keyFrameRetry else { return false }
            pendingSince = now
            return true
        }
        pending = layer
        pendingSince = now
        return true
    }

    /// How long a switch waits for its layer's key frame before asking again.
    static let keyFrameRetry: UInt64 = 2_000_000_000

    /// The viewer's number of the last packet that left (paced destinations; `delivered`).
    private(set) var delivered: UInt16?

    /// A packet with the viewer's number `number` left for the socket (the pacer's order).
    mutating func delivered(_ number: UInt16) { delivered = number }

    /// Whether a picture of `layer` (a key frame or not) would move the viewer there.
    func moves(layer: Int, isKeyFrame: Bool) -> Bool { isKeyFrame && layer == pending }

    /// A picture of `layer` starts with sequence number `first`: whether this viewer gets it.
    /// The key frame of the layer it waits for makes the switch. `rewinding`: what was not yet
    /// delivered of the old layer is dropped (the pacer's queue), so the new layer continues
    /// from the last number delivered.
    mutating func admit(layer: Int, isKeyFrame: Bool, first: UInt16, rewinding: Bool = false) -> Bool {
        if moves(layer: layer, isKeyFrame: isKeyFrame) {
            pending = nil
            if current != nil { switches += 1 }
            current = layer
            if rewinding, let delivered { renumbering.rewind(to: delivered) }
            renumbering.begin(layer: layer, first: first)
            return true
        }
        return layer == current
    }

    /// Records that packet `sequenceNumber` of `layer`, which it gets, was cut for this
    /// viewer; its number in the viewer's stream.
    mutating func forward(layer: Int, sequenceNumber: UInt16) -> UInt16 {
        renumbering.forward(layer: layer, sequenceNumber: sequenceNumber)
    }

    /// Forwards the clear RTP packet of `layer` at `packet` (`forward`) and writes it into the
    /// viewer's stream in place: layer 0's SSRC, the viewer's number.
    mutating func renumber(_ packet: UnsafeMutableRawPointer, layer: Int) {
        let sequenceNumber = UInt16(bigEndian: packet.loadUnaligned(fromByteOffset: 2, as: UInt16.self))
        stamp(packet, number: forward(layer: layer, sequenceNumber: sequenceNumber))
    }

    /// Writes the viewer's SSRC and `number` into the clear RTP packet at `packet`.
    func stamp(_ packet: UnsafeMutableRawPointer, number: UInt16) {
        packet.storeBytes(of: number.bigEndian, toByteOffset: 2, as: UInt16.self)
        packet.storeBytes(of: ssrc.bigEndian, toByteOffset: 8, as: UInt32.self)
    }

    /// The viewer's number of packet `sequenceNumber` of `layer` if it got that packet (in a
    /// span still remembered), for probes made of packets it has.
    func sentNumber(layer: Int, sequenceNumber: UInt16) -> UInt16? {
        let number = renumbering.outgoing(layer: layer, sequenceNumber: sequenceNumber)
        guard let source = renumbering.source(of: number), source.layer == layer,
            source.sequenceNumber == sequenceNumber
        else { return nil }
        return number
    }

    /// A probe showed the path carries the next layer up: the move need not wait `upHold`.
    mutating func probePassed(at now: UInt64) { policy.holdServed(at: now) }

    /// The layer to watch with `budget` bits per second at `now` (`LayerPolicy`); nil before
    /// the first layer was chosen.
    mutating func choose(budget: Int, probed: Int, at now: UInt64) -> Int? {
        guard let watching = pending ?? current else { return nil }
        return policy.choose(current: watching, budget: budget, probed: probed, at: now)
    }
}

/// The sequence numbers of one viewer's video when it watches one simulcast layer at a time: a
/// layer's packet `s` goes out as `s + offset` of that layer, and each switch sets the new
/// layer's offset so its first packet follows the last one sent. The last few switches are
/// kept (`spanCapacity`), so a NACK for a number from before a switch finds its layer and
/// packet. Fixed storage: nothing allocates per packet.
struct LayerRenumbering {
    struct Span: Equatable {
        /// The viewer's number of the span's first packet.
        var first: UInt16
        var layer: Int
        var offset: UInt16
    }

    /// Switches remembered for NACKs: more than the history holds in any second of switching.
    static let spanCapacity = 8
    private var offsets: [UInt16]
    /// Newest last.
    private(set) var spans: [Span] = []
    /// The viewer's number of the last packet cut for it.
    private(set) var lastSent: UInt16

    init(layerCount: Int, lastSent: UInt16) {
        offsets = [UInt16](repeating: 0, count: max(layerCount, 1))
        self.lastSent = lastSent
        spans.reserveCapacity(Self.spanCapacity)
    }

    /// `layer` continues the viewer's stream from its packet `first` on.
    mutating func begin(layer: Int, first: UInt16) {
        let offset = (lastSent &+ 1) &- first
        offsets[layer] = offset
        if spans.count == Self.spanCapacity { spans.removeFirst() }
        spans.append(Span(first: lastSent &+ 1, layer: layer, offset: offset))
    }

    func outgoing(layer: Int, sequenceNumber: UInt16) -> UInt16 { sequenceNumber &+ offsets[layer] }

    mutating func forward(layer: Int, sequenceNumber: UInt16) -> UInt16 {
        lastSent = sequenceNumber &+ offsets[layer]
        return lastSent
    }

    /// The packets after the viewer's number `number` were never sent: the next span starts
    /// right after it.
    mutating func rewind(to number: UInt16) {
        guard Int16(bitPattern: lastSent &- number) > 0 else { return }
        lastSent = number
    }

    /// The layer and packet behind the viewer's number `number`, if it was sent (at most half
    /// the number space back) in a span still remembered.
    func source(of number: UInt16) -> (layer: Int, sequenceNumber: UInt16)? {
        guard Int16(bitPattern: lastSent &- number) >= 0 else { return nil }
        for span in spans.reversed() where Int16(bitPattern: number &- span.first) >= 0 {
            return (span.layer, number &- span.offset)
        }
        return nil
    }
}

/// Which simulcast layer a receiver's estimate carries, with the hysteresis an SFU needs so a
/// viewer does not flap between layers (each move costs a key frame):
///
/// - **Down at once** to the highest layer whose need fits the budget: a path that cannot carry
///   the layer loses its pictures.
/// - **Up only with room and time:** the higher layer's need × `upMargin` must fit the probed
///   budget for `upHold`; and after a move up that failed (down again within `failureWindow`),
///   the next try waits `backoff`, doubled at each failure up to `maximumBackoff`.
///
/// `needs` are bits per second, index 0 the highest layer; the last layer is the floor and is
/// never left. Times are monotonic nanoseconds.
struct LayerPolicy {
    let needs: [Int]
    static let upMargin = 1.25
    static let upHold: UInt64 = 3_000_000_000
    static let failureWindow: UInt64 = 10_000_000_000
    static let firstBackoff: UInt64 = 10_000_000_000
    static let maximumBackoff: UInt64 = 80_000_000_000

    private var upSince: UInt64?
    private var lastUp: UInt64?
    private(set) var backoff: UInt64 = 0
    private var blockedUntil: UInt64 = 0

    init(needs: [Int]) { self.needs = needs }

    /// The highest layer whose need fits `budget` (the last layer when none does).
    func fitting(_ budget: Int, margin: Double = 1) -> Int {
        needs.firstIndex { Double($0) * margin <= Double(budget) } ?? max(needs.count - 1, 0)
    }

    /// The next move up need not wait `upHold` from `now` on: a probe showed the room.
    mutating func holdServed(at now: UInt64) { upSince = now &- Self.upHold }

    /// The layer to watch, watching `current`, with `budget` (what the receiver allows) and
    /// `probed` (the part of it the path has shown it carries; moves up follow this one).
    mutating func choose(current: Int, budget: Int, probed: Int, at now: UInt64) -> Int {
        let down = fitting(budget)
        if down > current {
            if let lastUp, now &- lastUp < Self.failureWindow {
                backoff = min(max(backoff * 2, Self.firstBackoff), Self.maximumBackoff)
                blockedUntil = now &+ backoff
            }
            upSince = nil
            return down
        }
        let up = fitting(min(budget, probed), margin: Self.upMargin)
        guard up < current, now >= blockedUntil else {
            upSince = nil
            return current
        }
        guard let since = upSince else {
            upSince = now
            return current
        }
        guard now &- since >= Self.upHold else { return current }
        upSince = nil
        lastUp = now
        return up
    }
}
