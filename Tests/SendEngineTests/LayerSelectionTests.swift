import CongestionControl
import Media
import RTP
import SRTP
import TestSupport
import Testing
import Transport

@testable import SendEngine

/// A viewer of our room that watches one simulcast layer at a time (Docs/simulcast.md): the
/// renumbering, the policy, and the whole send path in memory.
@Suite struct LayerSelectionTests {
    typealias Receiver = SimulcastSendTests.Receiver

    @Test("renumbering: each switch continues the viewer's numbers; NACKed numbers find their layer and packet")
    func renumbering() {
        var numbers = LayerRenumbering(layerCount: 3, lastSent: 99)
        numbers.begin(layer: 0, first: 5000)
        #expect((5000...5003).map { numbers.forward(layer: 0, sequenceNumber: $0) } == [100, 101, 102, 103])
        // Layer 2's key frame starts at its own 65534: the numbers run on across its wrap.
        numbers.begin(layer: 2, first: 65534)
        #expect([65534, 65535, 0, 1].map { numbers.forward(layer: 2, sequenceNumber: $0) } == [104, 105, 106, 107])
        let table: [(UInt16, (Int, UInt16)?)] = [
            (100, (0, 5000)), (103, (0, 5003)), (104, (2, 65534)), (106, (2, 0)), (107, (2, 1)),
            (108, nil),  // not sent yet
            (99, nil),  // before the first span
        ]
        for (number, expected) in table {
            let found = numbers.source(of: number)
            #expect(found?.layer == expected?.0 && found?.sequenceNumber == expected?.1, "number \(number)")
        }
        // Only the newest spans are kept.
        for round in 0..<LayerRenumbering.spanCapacity {
            numbers.begin(layer: round % 2, first: UInt16(round * 10))
            _ = numbers.forward(layer: round % 2, sequenceNumber: UInt16(round * 10))
        }
        #expect(numbers.spans.count == LayerRenumbering.spanCapacity)
        #expect(numbers.source(of: 100) == nil)
    }

    @Test(
        "renumbering, random walks: numbers never skip or repeat, and every number still remembered maps back to its packet"
    )
    func renumberingWalks() {
        var generator = SplitMix64(seed: 0x5EED_1A7E)
        for walk in 0..<200 {
            var numbers = LayerRenumbering(layerCount: 3, lastSent: UInt16.random(in: .min ... .max, using: &generator))
            var next = (0..<3).map { _ in UInt16.random(in: .min ... .max, using: &generator) }
            // What each number sent carried, newest last, and where each span began.
            var sent: [(number: UInt16, layer: Int, sequenceNumber: UInt16)] = []
            var spanStarts: [Int] = []
            var layer = 0
            for _ in 0..<60 {
                if Int.random(in: 0..<4, using: &generator) == 0 || spanStarts.isEmpty {
                    layer = Int.random(in: 0..<3, using: &generator)
                    // Packets of the old layer still queued are dropped at a move: rewind.
                    if !sent.isEmpty, Bool.random(using: &generator) {
                        let keep = Int.random(in: max(spanStarts.last ?? 0, 0)..<sent.count, using: &generator) + 1
                        sent.removeLast(sent.count - keep)
                        numbers.rewind(to: sent[keep - 1].number)
                    }
                    numbers.begin(layer: layer, first: next[layer])
                    spanStarts.append(sent.count)
                }
                // Other layers run on meanwhile; this one's packets are forwarded.
                for other in 0..<3 where other != layer { next[other] &+= UInt16.random(in: 0...5, using: &generator) }
                let number = numbers.forward(layer: layer, sequenceNumber: next[layer])
                if let last = sent.last { #expect(number == last.number &+ 1, "walk \(walk)") }
                sent.append((number, layer, next[layer]))
                next[layer] &+= 1
            }
            // Every number since the oldest span still remembered maps back to what it carried.
            let remembered = spanStarts.suffix(LayerRenumbering.spanCapacity).first ?? 0
            for entry in sent[remembered...] {
                let found = numbers.source(of: entry.number)
                #expect(found?.layer == entry.layer && found?.sequenceNumber == entry.sequenceNumber, "walk \(walk)")
            }
            #expect(numbers.source(of: numbers.lastSent &+ 1) == nil)
        }
    }

    @Test("policy: down at once, up after the hold with margin, and a failed move up backs off")
    func policy() {
        let second: UInt64 = 1_000_000_000
        var policy = LayerPolicy(needs: [500_000, 250_000])
        #expect(policy.fitting(600_000) == 0 && policy.fitting(400_000) == 1 && policy.fitting(10) == 1)
        #expect(policy.choose(current: 0, budget: 400_000, probed: 400_000, at: 1 * second) == 1)
        // 600 k fits 500 k but not with the 1.25 margin; 700 k does, after the hold.
        #expect(policy.choose(current: 1, budget: 600_000, probed: 600_000, at: 2 * second) == 1)
        #expect(policy.choose(current: 1, budget: 700_000, probed: 700_000, at: 3 * second) == 1)
        #expect(policy.choose(current: 1, budget: 700_000, probed: 700_000, at: 5 * second) == 1)
        #expect(policy.choose(current: 1, budget: 700_000, probed: 700_000, at: 6 * second) == 0)
        // Down within the failure window: the next move up waits the backoff.
        #expect(policy.choose(current: 0, budget: 300_000, probed: 300_000, at: 8 * second) == 1)
        #expect(policy.backoff == LayerPolicy.firstBackoff)
        for time in stride(from: 9, through: 17, by: 1) {
            #expect(policy.choose(current: 1, budget: 900_000, probed: 900_000, at: UInt64(time) * second) == 1)
        }
        #expect(policy.choose(current: 1, budget: 900_000, probed: 900_000, at: 18 * second) == 1)
        #expect(policy.choose(current: 1, budget: 900_000, probed: 900_000, at: 21 * second) == 0)
        // A budget the path has not shown (a loss-only receiver's probed rate) holds it down.
        #expect(policy.choose(current: 1, budget: 900_000, probed: 300_000, at: 60 * second) == 1)
        #expect(policy.choose(current: 1, budget: 900_000, probed: 300_000, at: 70 * second) == 1)
    }

    static func sender(paced: Bool) throws -> MediaSender {
        var configuration = MediaSender.Configuration(cname: "layers")
        configuration.simulcast = MediaSender.Simulcast(rids: ["f", "l"], mid: "0", needs: [500_000, 250_000])
        configuration.congestion = paced ? .enabled : CongestionConfiguration()
        configuration.feedback.bitrate.start = 1_000_000
        return try MediaSender(configuration: configuration, origin: 1_000_000_000)
    }

    static func frame(_ captureTime: UInt64, key: Bool) -> Media.H264AccessUnit {
        var unit = InMemorySendPathTests.keyFrame(captureTime: captureTime)
        unit.isKeyFrame = key
        return unit
    }

    /// Lets the pacer drain: its clock (`clock`, one per test) runs ahead of the sends' real
    /// time, further at each call, so a pacer never sees its time go back.
    static func flush(_ sender: MediaSender, _ clock: inout UInt64) {
        clock = max(clock, MonotonicClock.now()) + 1_000_000_000
        for step in 0..<50 where sender.hasPacedBacklog {
            sender.sendPaced(now: clock + UInt64(step) * 100_000_000)
        }
        clock += 5_000_000_000
    }

    @Test(
        "a viewer moves to the low layer at its key frame: one SSRC, numbers without a gap, NACKs repaired from the right layer",
        arguments: [false, true]
    )
    func viewerSwitchesLayers(paced: Bool) throws {
        let sender = try Self.sender(paced: paced)
        var clock: UInt64 = 0
        let viewer = try Receiver()
        try SimulcastSendTests.add(viewer, id: "viewer", layers: .adaptive, to: sender)
        let top = sender.layers[0]
        let low = sender.layers[1]
        // Nothing until the key frame of the layer it starts on (layer 0 at the start rate).
        try sender.send(video: Self.frame(1_010_000_000, key: false), layer: 0)
        try sender.send(video: Self.frame(1_010_000_000, key: false), layer: 1)
        Self.flush(sender, &clock)
        #expect(try viewer.received().isEmpty)
        try sender.send(video: Self.frame(1_020_000_000, key: true), layer: 0)
        try sender.send(video: Self.frame(1_020_000_000, key: false), layer: 1)
        Self.flush(sender, &clock)
        #expect(try viewer.received().count == 4)

        // Its REMB says 200 kbit/s: it should watch the low layer, whose key frame is asked for.
        let feedback = try SRTPSession(keys: viewer.feedbackKeys, direction: .outbound)
        func send(_ packets: [RTCPPacket]) throws {
            let datagram = try feedback.protectRTCP(try RTCPPacket.serialize(packets))
            #expect(datagram.withUnsafeBytes { viewer.inbox.put($0) })
        }
        try send([
            .receiverEstimatedMaximumBitrate(
                RTCPReceiverEstimatedMaximumBitrate(senderSSRC: 7, bitrate: 200_000, ssrcs: [top.stream.ssrc])
            )
        ])
        let actions = sender.pollFeedback(now: MonotonicClock.now())
        #expect(actions.keyFrameLayers & 0b10 != 0)
        #expect(sender.destination(id: "viewer")?.feedbackStatistics.nextLayer == "l")
        #expect(sender.watchedLayers == 0b11)
        // Until that key frame comes, layer 0 goes on; the low layer's deltas do not.
        try sender.send(video: Self.frame(1_030_000_000, key: false), layer: 0)
        try sender.send(video: Self.frame(1_030_000_000, key: false), layer: 1)
        Self.flush(sender, &clock)
        try sender.send(video: Self.frame(1_040_000_000, key: true), layer: 1)
        try sender.send(video: Self.frame(1_040_000_000, key: false), layer: 0)
        try sender.send(video: Self.frame(1_050_000_000, key: false), layer: 1)
        Self.flush(sender, &clock)
        let got = try viewer.received().filter { $0.packet.header.payloadType == 96 }
        // Paced, what of layer 0's second picture still waited in the pacer at the move is
        // dropped (how much depends on the pacer's real-time budget); unpaced, all of it left.
        #expect(paced ? (12...16).contains(got.count) : got.count == 16, "\(got.count)")
        #expect(got.allSatisfy { $0.packet.header.ssrc == top.stream.ssrc })
        let numbers = got.map(\.packet.header.sequenceNumber)
        #expect(zip(numbers, numbers.dropFirst()).allSatisfy { $1 == $0 &+ 1 }, "\(numbers)")
        // Layer 0's key frame first, the low layer's key frame and delta last, by timestamp.
        let rtpClock = top.clock
        let stamps = got.map(\.packet.header.timestamp)
        #expect(stamps.prefix(4).allSatisfy { $0 == rtpClock.timestamp(at: 1_020_000_000) }, "\(stamps)")
        #expect(stamps.suffix(8).prefix(4).allSatisfy { $0 == rtpClock.timestamp(at: 1_040_000_000) }, "\(stamps)")
        #expect(stamps.suffix(4).allSatisfy { $0 == rtpClock.timestamp(at: 1_050_000_000) }, "\(stamps)")
        let statistics = try #require(sender.destination(id: "viewer")?.feedbackStatistics)
        #expect(statistics.layer == "l" && statistics.nextLayer == nil && statistics.layerSwitches == 1)
        #expect(sender.watchedLayers == 0b10 && sender.layerViewers == [0, 1])

        // NACK one number from before the switch and one after: each comes back as RTX on
        // layer 0's RTX SSRC with the viewer's number, holding that layer's payload.
        let before = viewer.sink.datagrams.count
        try send([
            .genericNACK(
                RTCPGenericNACK(
                    senderSSRC: 7,
                    mediaSSRC: top.stream.ssrc,
                    lostSequenceNumbers: [numbers[1], numbers[got.count - 7]]
                )
            )
        ])
        _ = sender.pollFeedback(now: MonotonicClock.now())
        Self.flush(sender, &clock)
        let repairs = try viewer.received().suffix(from: got.count).filter { $0.packet.header.ssrc == top.rtxSSRC }
        #expect(viewer.sink.datagrams.count == before + 2)
        #expect(repairs.count == 2)
        for (repair, index) in zip(repairs, [1, got.count - 7]) {
            let osn = UInt16(repair.packet.payload[0]) << 8 | UInt16(repair.packet.payload[1])
            #expect(osn == numbers[index])
            #expect(Array(repair.packet.payload.dropFirst(2)) == got[index].packet.payload)
        }
        #expect(sender.destination(id: "viewer")?.feedbackStatistics.repairsByLayer == [1, 1])
        _ = low
    }

    @Test("an SFU's estimate: layer 0's vote leaves the lower layers their rates; too low, the top layer is dropped")
    func sfuDropsTheTopLayer() throws {
        let sender = try Self.sender(paced: false)
        let sfu = try Receiver()
        try SimulcastSendTests.add(sfu, id: "sfu", layers: .all, to: sender)
        let feedback = try SRTPSession(keys: sfu.feedbackKeys, direction: .outbound)
        func remb(_ bitrate: UInt64) throws {
            let packet = RTCPReceiverEstimatedMaximumBitrate(senderSSRC: 7, bitrate: bitrate, ssrcs: [])
            let datagram = try feedback.protectRTCP(
                try RTCPPacket.serialize([.receiverEstimatedMaximumBitrate(packet)])
            )
            #expect(datagram.withUnsafeBytes { sfu.inbox.put($0) })
        }
        let start = MonotonicClock.now()
        try remb(2_000_000)
        _ = sender.pollFeedback(now: start)
        let allowed = try #require(sender.destination(id: "sfu")?.feedbackStatistics.bitrateEstimate)
        let vote = try #require(sender.destination(id: "sfu")).congestion.encoderVote(allowed: allowed)
        #expect(sender.targetBitrate == vote - 250_000, "\(sender.targetBitrate) \(vote)")
        #expect(sender.watchedLayers == 0b11)

        // 400 kbit/s cannot carry f (500 k) beside l (250 k): f is dropped at once.
        try remb(400_000)
        _ = sender.pollFeedback(now: start + 1_000_000_000)
        #expect(sender.destination(id: "sfu")?.feedbackStatistics.droppedLayers == ["f"])
        #expect(sender.watchedLayers == 0b10)
        let before = try sfu.received().count
        try sender.send(video: Self.frame(1_100_000_000, key: false), layer: 0)
        try sender.send(video: Self.frame(1_100_000_000, key: false), layer: 1)
        let got = try sfu.received().dropFirst(before).filter { $0.packet.header.payloadType == 96 }
        #expect(got.count == 4 && got.allSatisfy { $0.packet.header.ssrc == sender.layers[1].stream.ssrc })
    }
}
