import CongestionControl
import Media
import RTP
import SRTP
import TestSupport
import Testing
import Transport

@testable import SendEngine

/// A viewer that reports only loss moves up a simulcast layer only after a probe of its path
/// (Docs/simulcast.md, "Moving up without transport-cc"): the probe's state machine, and the
/// whole send path in memory.
@Suite struct LayerProbeTests {
    typealias Receiver = SimulcastSendTests.Receiver
    static let second: UInt64 = 1_000_000_000
    static let millisecond: UInt64 = 1_000_000

    /// A report block's view of a round trip: `roundTrip` milliseconds after the report named.
    static func report(
        _ probe: inout LayerProbe,
        lsr: UInt32,
        rtt: Int64?,
        loss: Double = 0,
        at now: UInt64
    )
        -> LayerProbe.Outcome?
    {
        probe.report(lastSenderReport: lsr, roundTripUs: rtt.map { $0 * 1000 }, fractionLost: loss, at: now)
    }

    @Test("the state machine: a baseline first, a report behind the padding, judged by its round trip and loss")
    func stateMachine() {
        var probe = LayerProbe()
        // No baseline yet: nothing to compare a probe's round trip with.
        #expect(!probe.mayBegin(at: 0))
        #expect(Self.report(&probe, lsr: 1, rtt: 30, at: 1 * Self.second) == nil)
        #expect(!probe.mayBegin(at: 1 * Self.second))
        #expect(Self.report(&probe, lsr: 2, rtt: 20, at: 2 * Self.second) == nil)
        #expect(probe.mayBegin(at: 2 * Self.second) && probe.baselineRoundTripUs == 20_000)
        // Lost packets lately: no probe.
        #expect(Self.report(&probe, lsr: 3, rtt: 25, loss: 0.05, at: 3 * Self.second) == nil)
        #expect(!probe.mayBegin(at: 3 * Self.second))
        #expect(Self.report(&probe, lsr: 4, rtt: 25, at: 4 * Self.second) == nil)

        probe.begin(rate: 625_000, at: 4 * Self.second)
        #expect(probe.state == .sending(rate: 625_000, since: 4 * Self.second))
        #expect(!probe.holdsReports && !probe.mayBegin(at: 4 * Self.second))
        probe.sentReport(0xABCD, at: 4 * Self.second + 500 * Self.millisecond)
        #expect(probe.holdsReports)
        // A report naming an older sender report neither judges nor makes the baseline.
        #expect(Self.report(&probe, lsr: 4, rtt: 5, at: 5 * Self.second) == nil)
        #expect(probe.baselineRoundTripUs == 20_000)
        // 60 ms above the least round trip, no loss: passed.
        #expect(Self.report(&probe, lsr: 0xABCD, rtt: 80, at: 5 * Self.second) == .passed(rate: 625_000))
        #expect(probe.state == .idle && probe.statistics.passed == 1 && probe.statistics.lastDelayMilliseconds == 60)
        #expect(probe.provenRate(at: 15 * Self.second) == 625_000)
        #expect(probe.provenRate(at: 15 * Self.second + 1) == 0)

        // 61 ms: failed, and the next probe waits 10 s, then 20 s, up to 80 s.
        probe.begin(rate: 625_000, at: 6 * Self.second)
        probe.sentReport(0x1111, at: 6 * Self.second)
        #expect(Self.report(&probe, lsr: 0x1111, rtt: 81, at: 7 * Self.second) == .failed)
        #expect(probe.backoff == LayerProbe.firstBackoff)
        #expect(!probe.mayBegin(at: 7 * Self.second + LayerProbe.firstBackoff - 1))
        #expect(probe.mayBegin(at: 7 * Self.second + LayerProbe.firstBackoff))
        var now = 20 * Self.second
        for expected in [20, 40, 80, 80] {
            probe.begin(rate: 625_000, at: now)
            probe.sentReport(0x2222, at: now)
            // Loss in the report that names it fails it too, whatever the round trip.
            #expect(Self.report(&probe, lsr: 0x2222, rtt: 20, loss: 0.03, at: now + Self.second) == .failed)
            #expect(probe.backoff == UInt64(expected) * Self.second)
            now += Self.second + probe.backoff
            #expect(Self.report(&probe, lsr: 9, rtt: 20, at: now) == nil)
        }
        #expect(probe.statistics.failed == 5)
        // A pass resets the backoff.
        probe.begin(rate: 625_000, at: now)
        probe.sentReport(0x3333, at: now)
        #expect(Self.report(&probe, lsr: 0x3333, rtt: 21, at: now + Self.second) == .passed(rate: 625_000))
        #expect(probe.backoff == 0)
    }

    @Test("a probe whose padding or report never comes back fails; the baseline forgets old round trips")
    func expiryAndBaseline() {
        var probe = LayerProbe()
        _ = Self.report(&probe, lsr: 1, rtt: 10, at: 0)
        _ = Self.report(&probe, lsr: 2, rtt: 40, at: 1 * Self.second)
        probe.begin(rate: 1, at: 2 * Self.second)
        #expect(probe.expire(at: 2 * Self.second + LayerProbe.sendTimeout) == nil)
        #expect(probe.expire(at: 2 * Self.second + LayerProbe.sendTimeout + 1) == .failed)
        now(after: &probe)
        // The report the probe's was lost: no receiver report names it.
        probe.begin(rate: 1, at: 100 * Self.second)
        probe.sentReport(7, at: 100 * Self.second)
        #expect(probe.expire(at: 100 * Self.second + LayerProbe.reportTimeout) == nil)
        #expect(probe.expire(at: 100 * Self.second + LayerProbe.reportTimeout + 1) == .failed)
        #expect(probe.statistics.failed == 2)
        // A report without a round trip (LSR 0) at the probe's time judges it failed.
        probe.begin(rate: 1, at: 200 * Self.second)
        probe.sentReport(8, at: 200 * Self.second)
        #expect(Self.report(&probe, lsr: 8, rtt: nil, at: 201 * Self.second) == .failed)

        // The least round trip of the last 15–30 s: 10 ms at 0 s is gone 30 s later.
        var fresh = LayerProbe()
        _ = Self.report(&fresh, lsr: 1, rtt: 10, at: 0)
        _ = Self.report(&fresh, lsr: 1, rtt: 50, at: 16 * Self.second)
        #expect(fresh.baselineRoundTripUs == 10_000)
        _ = Self.report(&fresh, lsr: 1, rtt: 60, at: 31 * Self.second)
        #expect(fresh.baselineRoundTripUs == 50_000)
    }

    private func now(after probe: inout LayerProbe) {
        // Past the first backoff, with a fresh baseline report.
        _ = Self.report(&probe, lsr: 3, rtt: 10, at: 50 * Self.second)
    }

    // MARK: - In memory

    static func sender() throws -> MediaSender {
        var configuration = MediaSender.Configuration(cname: "probe")
        configuration.simulcast = MediaSender.Simulcast(rids: ["f", "l"], mid: "0", needs: [500_000, 250_000])
        configuration.congestion = .enabled
        configuration.feedback.bitrate.start = 1_000_000
        return try MediaSender(configuration: configuration, origin: 1_000_000_000)
    }

    /// A viewer without transport-wide feedback: it reports only loss (aiortc).
    /// A loss-only viewer: RTX and key-frame requests, no transport-wide numbers.
    static func add(_ receiver: Receiver, to sender: MediaSender) throws {
        try SimulcastSendTests.add(
            receiver,
            id: "viewer",
            options: DestinationOptions(retransmission: .rtx, asksForKeyFrames: true, layers: .adaptive),
            to: sender
        )
    }

    /// The sender reports among what `receiver` got, in order: (LSR it would echo, datagram index).
    static func senderReports(_ receiver: Receiver) throws -> [(lsr: UInt32, index: Int)] {
        let session = try SRTPSession(keys: receiver.keys, direction: .inbound)
        var reports: [(UInt32, Int)] = []
        for (index, datagram) in receiver.sink.datagrams.map(\.bytes).enumerated() where datagram.count > 1 {
            guard datagram[1] == 200 else { continue }
            for case .senderReport(let report) in try RTCPPacket.parseCompound(try session.unprotectRTCP(datagram)) {
                reports.append((report.ntpTimestamp.middle32, index))
            }
        }
        return reports
    }

    @Test(
        "a loss-only viewer starts on the low layer; a probe at the top layer's rate, then a report behind it; its round trip decides",
        arguments: [false, true]
    )
    func probeBeforeMovingUp(queueBuilt: Bool) throws {
        let sender = try Self.sender()
        let viewer = try Receiver()
        try Self.add(viewer, to: sender)
        let top = sender.layers[0]
        var clock: UInt64 = 0
        // It waits for the low layer's key frame, not the top layer's.
        #expect(sender.destination(id: "viewer")?.feedbackStatistics.nextLayer == "l")
        #expect(sender.watchedLayers == 0b10)
        try sender.send(video: LayerSelectionTests.frame(1_010_000_000, key: true), layer: 0)
        try sender.send(video: LayerSelectionTests.frame(1_010_000_000, key: true), layer: 1)
        for index in 1...3 {
            try sender.send(
                video: LayerSelectionTests.frame(1_010_000_000 + UInt64(index) * 200_000_000, key: false),
                layer: 1
            )
        }
        LayerSelectionTests.flush(sender, &clock)
        let video = try viewer.received().filter { $0.packet.header.payloadType == 96 }
        #expect(video.count == 16 && video.allSatisfy { $0.packet.header.ssrc == top.stream.ssrc })
        #expect(sender.destination(id: "viewer")?.feedbackStatistics.layer == "l")

        let feedback = try SRTPSession(keys: viewer.feedbackKeys, direction: .outbound)
        /// A receiver report at `now` naming sender report `lsr` with a round trip of `rtt` ms.
        func receiverReport(lsr: UInt32, rtt: UInt64, at now: UInt64) throws {
            let arrival = sender.ntpClock.timestamp(atMonotonic: now).middle32
            let block = RTCPReceptionReport(
                ssrc: top.stream.ssrc,
                lastSenderReport: lsr,
                delaySinceLastSenderReport: arrival &- lsr &- UInt32(rtt * 65_536 / 1000)
            )
            let datagram = try feedback.protectRTCP(
                try RTCPPacket.serialize([.receiverReport(RTCPReceiverReport(ssrc: 7, reports: [block]))])
            )
            #expect(datagram.withUnsafeBytes { viewer.inbox.put($0) })
            _ = sender.pollFeedback(now: now)
        }
        // Two reports of 10 and 12 ms make the baseline; the second starts the probe (its
        // estimate, 1 Mbit/s at the start, allows 625 kbit/s: 500 × 1.25).
        for rtt in [10, 12] {
            clock += Self.second
            sender.sendReportsIfDue(now: clock)
            let lsr = try #require(try Self.senderReports(viewer).last).lsr
            try receiverReport(lsr: lsr, rtt: UInt64(rtt), at: clock + 20 * Self.millisecond)
        }
        let destination = try #require(sender.destination(id: "viewer"))
        guard case .sending(let rate, _) = destination.layerProbe?.state else {
            Issue.record("no probe: \(String(describing: destination.layerProbe?.state))")
            return
        }
        #expect(rate == 625_000)
        let before = viewer.sink.datagrams.count
        LayerSelectionTests.flush(sender, &clock)
        // Padding: RTX copies of low-layer packets the viewer has, on layer 0's RTX SSRC; then
        // the sender report, last.
        let sent = Array(viewer.sink.datagrams.dropFirst(before))
        let padding = try viewer.received().suffix(from: video.count).filter { $0.packet.header.ssrc == top.rtxSSRC }
        let bytes = sent.dropLast().reduce(0) { $0 + $1.bytes.count }
        #expect(padding.count == sent.count - 1, "\(padding.count) of \(sent.count)")
        // Half a second of 625 kbit/s less the video it was sent (under 100 kbit/s here).
        #expect(bytes >= 32_000, "\(bytes) bytes")
        let reports = try Self.senderReports(viewer)
        let probeReport = try #require(reports.last)
        #expect(probeReport.index == viewer.sink.datagrams.count - 1)
        #expect(destination.layerProbe?.holdsReports == true)
        // Regular reports wait while the probe's is the one to answer.
        sender.sendReportsIfDue(now: clock + 10 * Self.second)
        #expect(try Self.senderReports(viewer).count == reports.count)

        // The receiver's report names it: 12 ms above the least round trip passes, 300 ms fails.
        clock += Self.second
        try receiverReport(lsr: probeReport.lsr, rtt: queueBuilt ? 310 : 22, at: clock)
        let statistics = destination.feedbackStatistics
        // Round trips count 1/65536 s: a millisecond either way.
        let delay = statistics.layerProbeDelayMilliseconds ?? -1
        if queueBuilt {
            #expect(statistics.layerProbesFailed == 1 && (299...300).contains(delay))
            #expect(statistics.nextLayer == nil && sender.watchedLayers == 0b10)
            // No new probe during the backoff.
            clock += Self.second
            _ = sender.pollFeedback(now: clock)
            #expect(destination.layerProbe?.state == .idle)
        } else {
            #expect(statistics.layerProbesPassed == 1 && (11...12).contains(delay))
            // It moves up at once: the top layer's key frame is asked for.
            #expect(statistics.nextLayer == "f" && sender.watchedLayers == 0b11, "\(statistics.statusText)")
        }
        #expect(statistics.statusText.contains("up probes \(queueBuilt ? 0 : 1)/1"), "\(statistics.statusText)")
    }
}
