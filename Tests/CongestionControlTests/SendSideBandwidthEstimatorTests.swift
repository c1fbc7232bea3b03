import RTP
import Testing

@testable import CongestionControl

/// One destination's congestion state near a known link capacity (Docs/congestion.md): the burst
/// allowance, the probe's base rate and the early back-off, fed with transport feedback as a
/// receiver behind a 1 Mbit/s bottleneck would send it.
@Suite("Send-side bandwidth estimator near a known capacity")
struct SendSideBandwidthEstimatorTests {
    static func congestion() throws -> SendSideBandwidthEstimator {
        var configuration = CongestionConfiguration()
        configuration.pacing = .init(burstAllowanceUs: 40_000)
        configuration.backoffFactor = 0.9
        // A path the estimate has found already: D33's start for unknown paths is tested on its own.
        configuration.unknownPathStart = nil
        return try SendSideBandwidthEstimator(
            configuration: configuration,
            bitrate: .init(minimum: 150_000, maximum: 4_000_000, start: 1_000_000),
            transportWideID: 5,
            stampsAudio: false
        )
    }

    /// A 1 Mbit/s path: 1200-byte packets every 9.6 ms, 20 ms one way, plus `queueUs(sendUs)` of
    /// queue; transport feedback every 50 ms about what arrived by then.
    struct Path {
        var number: UInt16 = 1
        var sendUs: Int64 = 0
        var feedbackCount: UInt8 = 0
        var sent: [(number: UInt16, sendUs: Int64, arrivalUs: Int64)] = []

        mutating func run(
            _ congestion: SendSideBandwidthEstimator,
            untilUs endUs: Int64,
            everyUs intervalUs: Int64 = 9_600,
            queueUs: (Int64) -> Int64
        ) throws {
            while sendUs < endUs {
                let feedbackUs = (sendUs / 50_000 + 1) * 50_000
                while sendUs < feedbackUs {
                    congestion.recordSent(number, size: 1200, at: UInt64(sendUs) * 1000)
                    sent.append((number, sendUs, sendUs + 20_000 + queueUs(sendUs)))
                    number &+= 1
                    sendUs += intervalUs
                }
                let arrived = sent.filter { $0.arrivalUs <= feedbackUs }
                sent.removeAll { $0.arrivalUs <= feedbackUs }
                try SendSideBandwidthEstimatorTests.report(
                    arrived.map { ($0.number, $0.arrivalUs) },
                    count: &feedbackCount,
                    to: congestion,
                    atUs: feedbackUs
                )
            }
        }
    }

    /// One transport-wide feedback message of what `arrived` (number, arrival µs) by `atUs`, which
    /// reaches the sender 20 ms later with a 40 ms round trip; nothing when nothing arrived.
    static func report(
        _ arrived: [(number: UInt16, arrivalUs: Int64)],
        count: inout UInt8,
        to congestion: SendSideBandwidthEstimator,
        atUs: Int64
    ) throws {
        guard !arrived.isEmpty else { return }
        let feedback = try RTCPTransportFeedback(
            senderSSRC: 1,
            mediaSSRC: 2,
            feedbackPacketCount: count,
            packets: arrived.map { .init(sequenceNumber: $0.number, arrivalTime: 5_000_000 + $0.arrivalUs) }
        )
        count &+= 1
        congestion.receive(feedback, roundTripUs: 40_000, at: UInt64(atUs + 20_000) * 1000)
    }

    @Test("bursts while the path has room; spread, and probes at twice the capacity, once a 30 ms queue stood")
    func burstsAndProbesNearCapacity() throws {
        let congestion = try Self.congestion()
        var path = Path()
        try path.run(congestion, untilUs: 2_000_000) { _ in 0 }
        #expect(congestion.allowsBursts)
        #expect(congestion.delayBased.rateControl.linkCapacity.estimate == nil)
        #expect(congestion.probeBase(700_000) == 700_000)
        let before = congestion.delayBased.bitrate
        // A queue that grows by 15 ms a second stays under the trend detector's threshold; at
        // 25 ms the early back-off takes the estimate to 0.95 × the link's arrival rate.
        try path.run(congestion, untilUs: 4_500_000) { max(0, ($0 - 2_000_000) * 15 / 1000) }
        #expect(congestion.statistics.overuseEvents == 0)
        #expect(congestion.statistics.queueBackoffs == 1)
        let capacity = try #require(congestion.delayBased.rateControl.linkCapacity.estimate)
        #expect(capacity > 900_000 && capacity < 1_100_000, "\(capacity)")
        #expect(congestion.delayBased.bitrate < before)
        #expect(!congestion.allowsBursts)
        #expect(congestion.probeBase(700_000) == Int(capacity))
        // During a probe no bursts either.
        congestion.beginProbe(id: 1, rate: 2_000_000, packets: 5, bytes: 6000)
        #expect(!congestion.allowsBursts)
        congestion.endProbe(at: 4_500_000)
    }

    @Test("within 300 ms of a probe its queue lowers nothing; a queue still standing after that does")
    func probesQueue() throws {
        let congestion = try Self.congestion()
        var path = Path()
        try path.run(congestion, untilUs: 2_000_000) { _ in 0 }
        congestion.beginProbe(id: 1, rate: 2_000_000, packets: 5, bytes: 6000)
        congestion.endProbe(at: 2_000_000)
        let before = congestion.delayBased.bitrate
        // The probe's queue: 40 ms at once (the trend detector sees the jump as over-use),
        // drained by 2.15 s.
        try path.run(congestion, untilUs: 2_550_000) { (2_000_000..<2_150_000).contains($0) ? 40_000 : 0 }
        #expect(congestion.delayBased.bitrate >= before)
        #expect(congestion.delayBased.rateControl.linkCapacity.estimate == nil)
        #expect(congestion.statistics.queueBackoffs == 0 && congestion.statistics.overuseEvents == 0)
        try path.run(congestion, untilUs: 3_000_000) { _ in 0 }
        // A queue that creeps past 25 ms long after the probe: one early back-off (a decrease
        // near the link's capacity, which it records).
        var untilUs: Int64 = 3_050_000
        while congestion.statistics.queueBackoffs == 0, untilUs <= 5_500_000 {
            try path.run(congestion, untilUs: untilUs) { max(0, ($0 - 3_000_000) * 15 / 1000) }
            untilUs += 50_000
        }
        #expect(congestion.statistics.queueBackoffs == 1)
        #expect(congestion.delayBased.rateControl.linkCapacity.estimate != nil)
        #expect(congestion.delayBased.bitrate < before)
    }

    @Test("a queue over 25 ms paces at the allowed rate; the early back-off from a deeper queue goes lower")
    func standingQueuePacesAtTheAllowedRate() throws {
        let congestion = try Self.congestion()
        var path = Path()
        try path.run(congestion, untilUs: 2_000_000) { _ in 0 }
        congestion.updateDrainPacing()
        #expect(!congestion.pacesAtAllowedRate)
        let before = congestion.delayBased.bitrate
        // A 60 ms queue at once, standing: over the back-off limit, under the drain's 100 ms.
        try path.run(congestion, untilUs: 2_300_000) { _ in 60_000 }
        congestion.updateDrainPacing()
        #expect(congestion.delayBased.drainCap == nil)
        #expect(congestion.pacesAtAllowedRate)
        // One decrease, to about 0.88 × the link's rate (1 − 60 ms / 500 ms), not 0.95 ×.
        let after = congestion.delayBased.bitrate
        #expect(congestion.statistics.queueBackoffs + congestion.statistics.overuseEvents >= 1)
        #expect(after < before && after <= 925_000, "\(before) → \(after)")
        // Gone: paced at 2.5 × again once the pacer holds nothing back.
        try path.run(congestion, untilUs: 2_600_000) { _ in 0 }
        congestion.updateDrainPacing()
        #expect(!congestion.pacesAtAllowedRate)
    }

    @Test("held at the allowed rate, a backlog leaves on top of it within a second once no queue stands")
    func backlogLeavesOnceNoQueueStands() throws {
        let congestion = try Self.congestion()
        var path = Path()
        try path.run(congestion, untilUs: 2_000_000) { _ in 0 }
        try path.run(congestion, untilUs: 2_300_000) { _ in 60_000 }
        congestion.updateDrainPacing()
        #expect(congestion.pacesAtAllowedRate)
        // 50 kB of pictures made at the old rate wait in the pacer.
        for handle in 0..<50 {
            #expect(congestion.pacer?.enqueue(handle: handle, size: 1000, kind: .video, at: 2_300_000) == true)
        }
        #expect(congestion.pacingRate(allowed: 800_000) == 800_000, "a queue stands: the allowed rate alone")
        try path.run(congestion, untilUs: 2_600_000) { _ in 0 }
        congestion.updateDrainPacing()
        #expect(congestion.pacesAtAllowedRate, "the backlog is still there")
        // 400 kbit over a second on top of 800 kbit/s; 500 kB would be capped at 2.5 ×.
        #expect(congestion.pacingRate(allowed: 800_000) == 1_200_000)
        for handle in 50..<500 {
            _ = congestion.pacer?.enqueue(handle: handle, size: 1000, kind: .video, at: 2_600_000)
        }
        #expect(congestion.pacingRate(allowed: 800_000) == 2_000_000)
    }

    /// Sends at the times `sendsUs` (1200-byte packets) through a 1 Mbit/s link (9.6 ms a
    /// packet, 20 ms one way, an unbounded FIFO), transport feedback every 50 ms about what
    /// arrived by then.
    struct Link {
        var number: UInt16 = 1
        var lastArrivalUs: Int64 = 0
        var feedbackCount: UInt8 = 0
        var inFlight: [(number: UInt16, arrivalUs: Int64)] = []
        var nextFeedbackUs: Int64 = 50_000

        mutating func send(_ congestion: SendSideBandwidthEstimator, at sendUs: Int64) throws {
            try feedback(congestion, until: sendUs)
            congestion.recordSent(number, size: 1200, at: UInt64(sendUs) * 1000)
            lastArrivalUs = max(sendUs + 20_000, lastArrivalUs + 9_600)
            inFlight.append((number, lastArrivalUs))
            number &+= 1
        }

        mutating func feedback(_ congestion: SendSideBandwidthEstimator, until nowUs: Int64) throws {
            while nextFeedbackUs <= nowUs {
                let arrived = inFlight.filter { $0.arrivalUs <= nextFeedbackUs }
                inFlight.removeAll { $0.arrivalUs <= nextFeedbackUs }
                try SendSideBandwidthEstimatorTests.report(
                    arrived,
                    count: &feedbackCount,
                    to: congestion,
                    atUs: nextFeedbackUs
                )
                nextFeedbackUs += 50_000
            }
        }
    }

    @Test(
        "after a still period, the first large picture's queue backs off from the link's arrival rate, not R_hat",
        arguments: [20, 30]
    )
    func earlyBackoffAfterAStillPeriod(packets: Int) throws {
        let congestion = try Self.congestion()
        var link = Link()
        // Moving at the link's rate for 2 s, then still for 10 s (a packet a second), then a small
        // change at 400 kbit/s for 2 s: R_hat follows the sender down (application-limited).
        var sends = Array(stride(from: Int64(0), to: 2_000_000, by: 9_600))
        sends += Array(stride(from: Int64(2_000_000), to: 12_000_000, by: 1_000_000))
        sends += Array(stride(from: Int64(12_000_000), to: 14_000_000, by: 24_000))
        for sendUs in sends { try link.send(congestion, at: sendUs) }
        try link.feedback(congestion, until: 14_000_000)
        let before = congestion.delayBased.bitrate
        let acknowledged = try #require(congestion.delayBased.acknowledged.bitrate)
        #expect(Double(acknowledged) < 0.5 * Double(before), "R_hat \(acknowledged), estimate \(before)")
        // A large picture: 20 packets paced 3.84 ms apart, queued up to 115 ms at the link; then
        // the small change goes on.
        sends = (0..<packets).map { 14_000_000 + Int64($0) * 3_840 }
        sends += Array(stride(from: Int64(14_100_000), to: 15_500_000, by: 24_000))
        for sendUs in sends { try link.send(congestion, at: sendUs) }
        try link.feedback(congestion, until: 15_500_000)
        let after = congestion.delayBased.bitrate
        print(
            "still, then a picture of \(packets) packets: \(before) → \(after), queue back-offs \(congestion.statistics.queueBackoffs), over-uses \(congestion.statistics.overuseEvents), R_hat \(acknowledged)"
        )
        #expect(congestion.statistics.queueBackoffs + congestion.statistics.overuseEvents >= 1)
        // Down to about the link's 1 Mbit/s (the estimate had grown over it while nothing
        // queued), not to a fraction of R_hat's 400 kbit/s.
        #expect(after < before && after >= 750_000, "\(before) → \(after) (R_hat \(acknowledged))")
    }
}
