import Testing

@testable import CongestionControl

@Suite("Delay-based estimator: the pieces wired together")
struct DelayBasedEstimatorTests {
    static func estimator(start: Int = 1_000_000) throws -> DelayBasedEstimator {
        try DelayBasedEstimator(
            configuration: .init(rateControl: .init(minimum: 100_000, maximum: 5_000_000, start: start))
        )
    }

    /// Packets of 1200 bytes every 5 ms, `extraDelayUs(i)` added to a 20 ms path.
    static func packets(
        from first: Int,
        count: Int,
        extraDelayUs: (Int) -> Int64 = { _ in 0 }
    ) -> [PacketResult] {
        (first..<first + count).map { index in
            let send = Int64(index) * 5_000
            return PacketResult(
                sequenceNumber: UInt64(index),
                sendTimeUs: send,
                arrivalTimeUs: send + 20_000 + extraDelayUs(index),
                size: 1_200
            )
        }
    }

    @Test("feedback with only lost packets changes nothing; lost packets in a message are skipped")
    func lostPackets() throws {
        var estimator = try Self.estimator()
        let lost = (0..<10).map {
            PacketResult(sequenceNumber: UInt64($0), sendTimeUs: 0, arrivalTimeUs: nil, size: 1_200)
        }
        let update = estimator.update(with: lost, at: 50_000)
        #expect(
            update == .init(bitrate: 1_000_000, state: .normal, trend: 0, threshold: 12.5, acknowledgedBitrate: nil)
        )

        // A queue growing 0.5 ms per 10 ms. Every other packet reported lost leaves the same
        // groups' timing (a group is two packets 5 ms apart, or the one of them left), so the
        // trend and verdicts are the same.
        var clean = try Self.estimator()
        var lossy = try Self.estimator()
        var overuses = 0
        for message in 0..<40 {
            let packets = Self.packets(from: message * 10, count: 10) { index in Int64(index / 2) * 500 }
            let now = Int64(message + 1) * 50_000 + 20_000
            let withLoss = packets.enumerated().map { index, packet in
                var copy = packet
                if index % 2 == 1 { copy.arrivalTimeUs = nil }
                return copy
            }
            let a = clean.update(with: packets, at: now)
            let b = lossy.update(with: withLoss, at: now)
            #expect(a.state == b.state && a.trend == b.trend)
            overuses += a.state == .overusing ? 1 : 0
        }
        #expect(overuses > 0)
    }

    @Test("feedback out of arrival order is sorted before grouping")
    func sortsByArrival() throws {
        var ordered = try Self.estimator()
        var shuffled = try Self.estimator()
        for message in 0..<20 {
            let packets = Self.packets(from: message * 10, count: 10) { index in Int64(index % 3) * 1_000 }
            let now = Int64(message + 1) * 50_000 + 20_000
            let byArrival = packets.sorted {
                ($0.arrivalTimeUs!, $0.sequenceNumber) < ($1.arrivalTimeUs!, $1.sequenceNumber)
            }
            #expect(ordered.update(with: byArrival, at: now) == shuffled.update(with: packets.reversed(), at: now))
        }
    }

    @Test("sending under 80 % of the estimate for 3 s: a probe that found no room lowers it to its result")
    func applicationLimitedProbeLowers() throws {
        // 1.92 Mbit/s of packets against an estimate of 4 Mbit/s: the encoder makes less than it
        // may, and nothing it sends tests the estimate.
        var estimator = try Self.estimator(start: 4_000_000)
        var nowUs: Int64 = 0
        func feed(untilMessage end: Int, from start: Int) {
            for message in start..<end {
                nowUs = Int64(message + 1) * 50_000 + 20_000
                estimator.update(with: Self.packets(from: message * 10, count: 10), at: nowUs)
            }
        }
        feed(untilMessage: 30, from: 0)
        let since = try #require(estimator.applicationLimitedSinceUs)
        #expect(nowUs - since < DelayBasedEstimator.applicationLimitedUs)
        // Within the first 3 s (x264 may still be ramping up to a new target): not lowered.
        let held = estimator.bitrate
        #expect(held > 3_000_000)
        estimator.applyProbeResult(2_500_000, foundRoom: false, at: nowUs)
        #expect(estimator.bitrate == held)
        feed(untilMessage: 90, from: 30)
        #expect(nowUs - since >= DelayBasedEstimator.applicationLimitedUs)
        estimator.applyProbeResult(2_200_000, foundRoom: false, at: nowUs)
        #expect(estimator.bitrate == 2_200_000)
        // Once the acknowledged rate (1.92 Mbit/s) is within 80 % of the estimate again, that ends.
        feed(untilMessage: 100, from: 90)
        #expect(estimator.applicationLimitedSinceUs == nil)
    }

    @Test("a growing queue is over-use: the rate drops to 0.85 × the acknowledged rate")
    func queueBuildsUp() throws {
        var estimator = try Self.estimator(start: 2_000_000)
        estimator.setRoundTripTime(40_000)
        var updates: [DelayBasedEstimator.Update] = []
        // 2 s steady, then each packet 1 ms later than the one before (a queue filling).
        for message in 0..<60 {
            let packets = Self.packets(from: message * 10, count: 10) { index in
                index < 400 ? 0 : Int64(index - 400) * 1_000
            }
            updates.append(estimator.update(with: packets, at: Int64(message + 1) * 50_000 + 20_000))
        }
        let firstOveruse = try #require(updates.firstIndex { $0.state == .overusing })
        let last = updates[firstOveruse]
        print(
            "queue build-up: over-use at message \(firstOveruse) (queue starts at message 40), trend \(last.trend), "
                + "threshold \(last.threshold), bitrate \(last.bitrate), acknowledged \(last.acknowledgedBitrate ?? -1)"
        )
        #expect(firstOveruse >= 40 && firstOveruse <= 46)
        let atOveruse = updates[firstOveruse]
        let acknowledged = try #require(atOveruse.acknowledgedBitrate)
        #expect(atOveruse.bitrate == Int(0.85 * Double(acknowledged)))
    }

    @Test("a queue before R_hat exists takes no early back-off and sets no capacity; once R_hat exists it does")
    func noBackoffBeforeAcknowledgedRate() throws {
        var estimator = try Self.estimator(start: 1_500_000)
        estimator.standingQueue = StandingQueueDetector()
        var nowUs: Int64 = 0
        // 1.92 Mbit/s sent; the first message crosses an empty path (20 ms), then a 34 ms queue
        // stands (the first key frame's) and a receiver short of CPU stamps each message's
        // packets 1.5 ms apart: 6.4 Mbit/s read off one message.
        for message in 0..<4 {
            nowUs = Int64(message + 1) * 50_000 + 20_000
            let packets = Self.packets(from: message * 10, count: 10).enumerated().map { index, packet in
                var stamped = packet
                if message > 0 { stamped.arrivalTimeUs = Int64(message * 10) * 5_000 + 90_000 + Int64(index) * 1_500 }
                return stamped
            }
            estimator.update(with: packets, at: nowUs)
        }
        #expect(estimator.acknowledged.bitrate == nil)
        #expect((estimator.standingQueue?.delayUs ?? 0) > 25_000)
        #expect(estimator.queueBackoffs == 0)
        #expect(estimator.rateControl.linkCapacity.estimate == nil)
        // The queue still stands once half a second of arrivals gave R_hat: the back-off, armed
        // all along, goes from the link's rate.
        var message = 4
        while estimator.queueBackoffs == 0, message < 16 {
            nowUs = Int64(message + 1) * 50_000 + 20_000
            estimator.update(with: Self.packets(from: message * 10, count: 10) { _ in 34_000 }, at: nowUs)
            message += 1
        }
        let acknowledged = try #require(estimator.acknowledged.bitrate)
        #expect(estimator.queueBackoffs == 1)
        let capacity = try #require(estimator.rateControl.linkCapacity.estimate)
        #expect(capacity <= Double(acknowledged) && capacity > 1_500_000, "\(capacity) \(acknowledged)")
    }

    @Test("configuration is validated")
    func validation() {
        #expect(throws: CongestionControlError.self) {
            try DelayBasedEstimator(configuration: .init(streamTimeoutUs: 0))
        }
    }
}
