import Foundation
import Testing

@testable import CongestionControl

/// The estimator closing the loop over `BottleneckSimulator`: the sender sends at whatever the
/// estimator says, the bottleneck queues it, feedback comes back every 50 ms. Simulated time
/// only, so the assertions are exact for these seeds and the printed numbers repeat.
@Suite("Delay-based estimator against a simulated bottleneck")
struct SimulationTests {
    static let second: Int64 = 1_000_000

    static func estimator(start: Int) throws -> DelayBasedEstimator {
        try DelayBasedEstimator(
            configuration: .init(rateControl: .init(minimum: 100_000, maximum: 10_000_000, start: start))
        )
    }

    static func seconds(_ us: Int64) -> String {
        let ms = us / 1000
        return "\(ms / 1000).\(String(ms % 1000).leftPadded(to: 3)) s"
    }

    @Test("3 Mbit/s from a 1 Mbit/s start: rises and settles within 15 % below capacity")
    func steadyCapacity() throws {
        let capacity = 3_000_000.0
        var simulator = BottleneckSimulator(estimator: try Self.estimator(start: 1_000_000)) { _ in capacity }
        simulator.run(untilUs: 60 * Self.second)
        let samples = simulator.samples
        let reached = try #require(samples.first { Double($0.update.bitrate) >= 0.85 * capacity })
        let settled = samples.between(40 * Self.second, 60 * Self.second)
        let utilisation = settled.deliveredRate / capacity
        let lowest = settled.map(\.update.bitrate).min() ?? 0
        let highest = settled.map(\.update.bitrate).max() ?? 0
        let maximumQueue = settled.map(\.queueDelayUs).max() ?? 0
        print(
            "steady 3 Mbit/s: 85 % of capacity at \(Self.seconds(reached.timeUs)); last 20 s: mean estimate "
                + "\(Int(settled.meanBitrate)) bit/s, range \(lowest)–\(highest), delivered \(Int(settled.deliveredRate)) "
                + "bit/s = \(Int(utilisation * 1000)) ‰ of capacity, over-using \(settled.overusingFraction * 100) % of "
                + "updates (longest run \(settled.longestOveruseRun) × 50 ms), queue ≤ \(maximumQueue / 1000) ms"
        )
        #expect(settled.meanBitrate >= 0.85 * capacity && settled.meanBitrate <= 1.05 * capacity)
        #expect(utilisation >= 0.85)
        // Over-use comes in episodes: the additive increase creeps past capacity, the queue
        // grows until the trend crosses γ, one decrease, and the verdict stays "over-using"
        // while the smoothed trend catches up with the draining queue. Each must stay brief.
        #expect(settled.overusingFraction <= 0.1)
        #expect(settled.longestOveruseRun < 20, "no over-use episode lasts 1 s")
    }

    /// Capacity 3 Mbit/s until 10 s, 1 Mbit/s until 30 s, then 3 Mbit/s again.
    static func steps(_ time: Int64) -> Double {
        time < 10 * second || time >= 30 * second ? 3_000_000 : 1_000_000
    }

    /// The steps of `steps` from a 2.5 Mbit/s start, with the standing-queue drain on.
    static func stepsWithDrain() throws -> BottleneckSimulator {
        var estimator = try estimator(start: 2_500_000)
        estimator.standingQueue = StandingQueueDetector()
        return BottleneckSimulator(estimator: estimator, capacity: steps)
    }

    @Test("capacity 3 → 1 Mbit/s at 10 s and back to 3 Mbit/s at 30 s, from a 1 Mbit/s start")
    func capacitySteps() throws {
        var simulator = BottleneckSimulator(estimator: try Self.estimator(start: 1_000_000), capacity: Self.steps)
        simulator.run(untilUs: 45 * Self.second)
        let down = try StepDown(simulator.samples)
        print("step 3 → 1 Mbit/s at 10 s (1 Mbit/s start): \(down)")
        #expect(down.reactionUs <= 2 * Self.second)
        #expect(down.drainUs <= 5 * Self.second)
        #expect(down.lowPhase.allSatisfy { $0.queueDelayUs < 50_000 }, "the queue stays drained at 1 Mbit/s")

        let samples = simulator.samples
        let atStepUp = try #require(samples.last { $0.timeUs < 30 * Self.second })
        let recovered = try #require(samples.first(after: 30 * Self.second) { $0.update.bitrate >= 2_000_000 })
        let recoveryUs = recovered.timeUs - 30 * Self.second
        // The issue asked for 10 s. The delay-based half alone grows at most 8 %/s (draft §5.5,
        // libwebrtc): from the estimate it held on the 1 Mbit/s link that takes
        // ln(2 Mbit/s / estimate) / ln(1.08) s even if it grew multiplicatively from the first
        // instant, and it first grows additively until the acknowledged rate leaves the
        // capacity band of the 1 Mbit/s phase. libwebrtc gets up faster by probing, which this
        // module does not do. So the bound is relative to that fastest ramp.
        let fastestUs = Int64(log(2_000_000 / Double(atStepUp.update.bitrate)) / log(1.08) * 1e6)
        print(
            "step 1 → 3 Mbit/s at 30 s: estimate \(atStepUp.update.bitrate) bit/s at the step, ≥ 2 Mbit/s "
                + "\(Self.seconds(recoveryUs)) after it (8 %/s from the step would take \(Self.seconds(fastestUs))); "
                + "\(samples.last?.update.bitrate ?? 0) bit/s at 45 s"
        )
        #expect(recoveryUs <= fastestUs + 1_500_000)
    }

    @Test("the step from a converged 3 Mbit/s estimate: reaction within 2 s, the queue it built drains slower")
    func capacityStepFromConvergedEstimate() throws {
        // Started near capacity, so the estimate is ~2.8 Mbit/s, not still ramping, at the step.
        var simulator = BottleneckSimulator(estimator: try Self.estimator(start: 2_500_000), capacity: Self.steps)
        simulator.run(untilUs: 30 * Self.second)
        let down = try StepDown(simulator.samples)
        print("step 3 → 1 Mbit/s at 10 s (2.5 Mbit/s start): \(down)")
        #expect(down.reactionUs <= 2 * Self.second)
        // Over 5 s: the acknowledged rate takes about 1 s to follow the step (each decrease is
        // to 0.85 × a rate still above 1 Mbit/s), the queue reaches ~850 ms, and after the last
        // decrease it drains at only 15 % of the capacity (β = 0.85).
        #expect(down.drainUs <= 6 * Self.second)
        #expect(down.lowPhase.allSatisfy { $0.queueDelayUs < 50_000 })
    }

    @Test("with the drain: after a 3 → 1 Mbit/s step the queue clears sooner, the estimate resumes near the link")
    func capacityStepWithStandingQueueDrain() throws {
        var simulator = try Self.stepsWithDrain()
        simulator.run(untilUs: 30 * Self.second)
        let down = try StepDown(simulator.samples)
        let step = 10 * Self.second
        // Resumed: the first estimate at 85 % of the link or more after the queue's peak.
        let resumed = try #require(simulator.samples.first(after: down.peak.timeUs) { $0.update.bitrate >= 850_000 })
        let after = simulator.samples.between(resumed.timeUs, resumed.timeUs + 2 * Self.second)
        let lowest = after.map(\.update.bitrate).min() ?? 0
        print(
            "step 3 → 1 Mbit/s at 10 s with the drain: \(down); ≥ 85 % of the link again "
                + "\(Self.seconds(resumed.timeUs - step)) after the step (\(resumed.update.bitrate) bit/s), lowest "
                + "\(lowest) bit/s in the 2 s after"
        )
        // The same step without the drain (the test above): the queue peaks at 855 ms, clears
        // 5.7 s after the step, and the estimate sits at 0.85 × the acknowledged rate. With it
        // (measured: ≤ 1.2 Mbit/s after 0.2 s, peak 414 ms, clear after 1.2 s, resumed at
        // 1.1 s): capped (and over-use decreased) from the arrival rate, not the lagging R_hat,
        // the queue stays under a 750 ms bottleneck buffer; resumed at 0.9 × the rate the link carried, in the band.
        #expect(down.reactionUs <= 500_000)
        #expect(down.peak.queueDelayUs <= 600_000)
        #expect(down.drainUs <= 2_000_000)
        #expect(resumed.timeUs - step <= 2_000_000)
        #expect(resumed.update.bitrate <= 1_000_000)
        #expect(lowest >= 850_000)
        #expect(down.lowPhase.allSatisfy { $0.queueDelayUs < 50_000 })
    }

    @Test("near a known capacity a probe lifts the estimate at most to the capacity, unless two in a row find room")
    func probeResultNearKnownCapacity() throws {
        var simulator = BottleneckSimulator(estimator: try Self.estimator(start: 2_500_000)) { _ in 1_000_000 }
        simulator.run(untilUs: 20 * Self.second)
        while simulator.estimator.detector.state == .overusing { simulator.run(untilUs: simulator.nowUs + 50_000) }
        let capacity = try #require(simulator.estimator.rateControl.linkCapacity.estimate)
        let upper = simulator.estimator.rateControl.linkCapacity.upperBound
        print("1 Mbit/s link: capacity estimate \(Int(capacity)) bit/s, upper bound \(Int(upper)) bit/s")
        // A full link read fast over a few packets (a token bucket's burst): 1.4 Mbit/s.
        var full = simulator.estimator
        full.applyProbeResult(1_400_000, foundRoom: false, at: simulator.nowUs)
        #expect(full.bitrate <= max(Int(capacity) + 1, simulator.estimator.bitrate) && upper < 1_400_000)
        #expect(full.rateControl.linkCapacity.estimate != nil)
        // The same rate from a probe that came back at its own rate: the link may have grown, or
        // the receiver stamped the probe as one batch. Alone, it lifts the estimate only to the
        // capacity estimate; a second probe finding room within a second confirms it.
        var grown = simulator.estimator
        grown.applyProbeResult(1_400_000, foundRoom: true, at: simulator.nowUs)
        #expect(grown.bitrate <= max(Int(capacity) + 1, simulator.estimator.bitrate))
        #expect(grown.rateControl.linkCapacity.estimate != nil)
        var batched = grown
        grown.applyProbeResult(2_200_000, foundRoom: true, at: simulator.nowUs + 200_000)
        #expect(grown.bitrate == 2_200_000)
        #expect(grown.rateControl.linkCapacity.estimate == nil)
        // Not confirmed: the second probe found the link full, or came too late.
        batched.applyProbeResult(1_100_000, foundRoom: false, at: simulator.nowUs + 200_000)
        batched.applyProbeResult(2_200_000, foundRoom: true, at: simulator.nowUs + 400_000)
        #expect(batched.rateControl.linkCapacity.estimate != nil)
        var late = simulator.estimator
        late.applyProbeResult(1_400_000, foundRoom: true, at: simulator.nowUs)
        late.applyProbeResult(1_400_000, foundRoom: true, at: simulator.nowUs + 1_500_000)
        #expect(late.rateControl.linkCapacity.estimate != nil)
    }

    /// A sender that uses 75 % of its estimate but, half a second in every 5, all of it (x264
    /// under a short VBV buffer on a simple screen, then a harder stretch), behind 1 Mbit/s,
    /// from 20 s to 60 s; `factor` the near-capacity limit (nil: libwebrtc's 1.5 × acknowledged alone).
    static func underusingSender(nearCapacityLimit factor: Double?) throws -> [BottleneckSimulator.Sample] {
        let estimator = try DelayBasedEstimator(
            configuration: .init(
                rateControl: .init(
                    minimum: 100_000,
                    maximum: 10_000_000,
                    start: 1_000_000,
                    nearCapacityLimitFactor: factor
                )
            )
        )
        var simulator = BottleneckSimulator(estimator: estimator) { _ in 1_000_000 }
        simulator.utilisation = { now in now % (5 * second) < 4_500_000 ? 0.75 : 1 }
        simulator.run(untilUs: 60 * second)
        return simulator.samples.between(20 * second, 60 * second)
    }

    @Test("near a known capacity a sender under its estimate does not lift it past the link")
    func underusingSenderNearCapacity() throws {
        let limited = try Self.underusingSender(nearCapacityLimit: 1.1)
        let unlimited = try Self.underusingSender(nearCapacityLimit: nil)
        func line(_ name: String, _ samples: [BottleneckSimulator.Sample]) -> String {
            let highest = samples.map(\.update.bitrate).max() ?? 0
            let queue = samples.map(\.queueDelayUs).max() ?? 0
            return "\(name): estimate ≤ \(highest) bit/s, queue ≤ \(queue / 1000) ms, delivered "
                + "\(Int(samples.deliveredRate)) bit/s, over-using \(samples.overusingFraction * 100) % of updates"
        }
        print(
            "75 % / 100 % sender behind 1 Mbit/s, 20–60 s: \(line("1.1 × R_hat", limited)); \(line("1.5 × R_hat", unlimited))"
        )
        let highest = limited.map(\.update.bitrate).max() ?? 0
        let queue = limited.map(\.queueDelayUs).max() ?? 0
        let unlimitedQueue = unlimited.map(\.queueDelayUs).max() ?? 0
        // The estimate stays near the link, and the full-rate half seconds queue little.
        #expect(highest <= 1_050_000, "\(line("1.1 × R_hat", limited))")
        #expect(
            queue <= 40_000 && 2 * queue <= unlimitedQueue,
            "\(line("1.1 × R_hat", limited)); \(line("1.5 × R_hat", unlimited))"
        )
        // At no cost in what the link carries.
        #expect(limited.deliveredRate >= 0.97 * unlimited.deliveredRate)
    }

    @Test("a drained queue measured the link: it is the capacity, and a probe right after must be confirmed")
    func drainSetsTheLinkCapacity() throws {
        var simulator = try Self.stepsWithDrain()
        simulator.run(untilUs: 10 * Self.second)
        while simulator.estimator.drainCap == nil, simulator.nowUs < 13 * Self.second {
            simulator.run(untilUs: simulator.nowUs + 50_000)
        }
        while simulator.estimator.drainCap != nil, simulator.nowUs < 15 * Self.second {
            simulator.run(untilUs: simulator.nowUs + 50_000)
        }
        let drainedUs = simulator.nowUs
        // R_hat still reads the old link for a while; the capacity stays the measured one.
        simulator.run(untilUs: drainedUs + 500_000)
        let acknowledged = simulator.estimator.acknowledged.bitrate ?? 0
        let capacity = try #require(simulator.estimator.rateControl.linkCapacity.estimate)
        let upper = simulator.estimator.rateControl.linkCapacity.upperBound
        print(
            "drained \(Self.seconds(drainedUs - 10 * Self.second)) after the step; 0.5 s later R_hat \(acknowledged) bit/s, "
                + "capacity \(Int(capacity)) bit/s (upper bound \(Int(upper)))"
        )
        // The drain's measure of the link (1.000 Mbit/s here), not the over-uses' samples of R_hat
        // (1.049 Mbit/s, upper bound 1.20 Mbit/s).
        #expect(capacity >= 950_000 && capacity <= 1_030_000)
        // A probe that came back at its 1.74 Mbit/s (a token bucket's burst let its few packets
        // through): alone it lifts the estimate only to the capacity estimate.
        var probed = simulator.estimator
        probed.applyProbeResult(1_740_000, foundRoom: true, at: simulator.nowUs)
        #expect(probed.bitrate <= max(Int(capacity) + 1, simulator.estimator.bitrate))
        #expect(probed.rateControl.linkCapacity.estimate != nil)
    }

    @Test("a rate creeping 1.5 % over the link: the early back-off acts at a 25 ms queue, GCC's trend not at all")
    func earlyBackoffOnACreepingQueue() throws {
        /// 1200-byte packets at 1.015 Mbit/s through a 1 Mbit/s link from 5 s on (before: at the
        /// link's rate, no queue); feedback every 50 ms. The queue grows 15 ms a second: a slope
        /// of 0.015, a modified trend of at most 0.015 × 60 deltas × gain 4 = 3.6 ms, under γ's
        /// 6 ms floor, so the detector never calls it over-use (near capacity, the additive
        /// increase creeps past the link like this; on a real path picture bursts also lift γ).
        /// Returns the first time the estimate fell and the queue then.
        func firstDecrease(backoffLimitUs: Int64) throws -> (timeUs: Int64, queueUs: Int64)? {
            var estimator = try Self.estimator(start: 1_000_000)
            estimator.standingQueue = StandingQueueDetector(backoffLimitUs: backoffLimitUs)
            var sequence: UInt64 = 0
            var sendUs: Int64 = 0
            var previous = estimator.bitrate
            for feedbackUs in stride(from: Int64(50_000), through: 15 * Self.second, by: 50_000) {
                var results: [PacketResult] = []
                var queueUs: Int64 = 0
                while sendUs < feedbackUs - 30_000 {
                    queueUs = max(0, (sendUs - 5 * Self.second) * 15 / 1000)
                    let arrivalUs = sendUs + 20_000 + queueUs
                    results.append(
                        .init(sequenceNumber: sequence, sendTimeUs: sendUs, arrivalTimeUs: arrivalUs, size: 1200)
                    )
                    sequence += 1
                    sendUs += sendUs < 5 * Self.second ? 9_600 : 9_458
                }
                let update = estimator.update(with: results, at: feedbackUs)
                #expect(update.state != .overusing, "at \(feedbackUs) µs")
                if update.bitrate < previous { return (feedbackUs, queueUs) }
                previous = update.bitrate
            }
            return nil
        }
        let early = try #require(try firstDecrease(backoffLimitUs: 25_000))
        let gcc = try #require(try firstDecrease(backoffLimitUs: 0))
        print(
            "creeping 1.5 % over a 1 Mbit/s link from 5 s: early back-off at \(Self.seconds(early.timeUs)) "
                + "(queue \(early.queueUs / 1000) ms); without it the first decrease at \(Self.seconds(gcc.timeUs)) "
                + "(queue \(gcc.queueUs / 1000) ms, the standing-queue drain)"
        )
        #expect(early.queueUs > 25_000 && early.queueUs <= 35_000)
        #expect(gcc.queueUs > 100_000)
    }

    /// What happened after the 3 → 1 Mbit/s step at 10 s.
    struct StepDown: CustomStringConvertible {
        var atStep: BottleneckSimulator.Sample
        var firstOveruse: BottleneckSimulator.Sample
        var reacted: BottleneckSimulator.Sample
        var peak: BottleneckSimulator.Sample
        var drained: BottleneckSimulator.Sample
        var lowPhase: [BottleneckSimulator.Sample]

        init(_ samples: [BottleneckSimulator.Sample]) throws {
            let step = 10 * SimulationTests.second
            atStep = try #require(samples.last { $0.timeUs < step })
            firstOveruse = try #require(samples.first(after: step) { $0.update.state == .overusing })
            reacted = try #require(samples.first(after: step) { $0.update.bitrate <= 1_200_000 })
            peak = try #require(samples.between(step, 3 * step).max { $0.queueDelayUs < $1.queueDelayUs })
            drained = try #require(samples.first(after: peak.timeUs) { $0.queueDelayUs < 50_000 })
            lowPhase = samples.between(2 * step, 3 * step)
        }

        var reactionUs: Int64 { reacted.timeUs - 10 * SimulationTests.second }
        var drainUs: Int64 { drained.timeUs - 10 * SimulationTests.second }

        var description: String {
            let step = 10 * SimulationTests.second
            return "estimate \(atStep.update.bitrate) bit/s at the step; first over-use "
                + "\(SimulationTests.seconds(firstOveruse.timeUs - step)) after it; ≤ 1.2 Mbit/s "
                + "\(SimulationTests.seconds(reactionUs)) after it (\(reacted.update.bitrate) bit/s); queue peak "
                + "\(peak.queueDelayUs / 1000) ms at \(SimulationTests.seconds(peak.timeUs)), below 50 ms "
                + "\(SimulationTests.seconds(drainUs)) after the step; 20–30 s: mean estimate "
                + "\(Int(lowPhase.meanBitrate)) bit/s, delivered \(Int(lowPhase.deliveredRate)) bit/s, queue ≤ "
                + "\((lowPhase.map(\.queueDelayUs).max() ?? 0) / 1000) ms"
        }
    }

    @Test("±5 ms random arrival jitter on an uncongested path is not over-use")
    func jitterOnly() throws {
        let start = 1_000_000
        var simulator = BottleneckSimulator(estimator: try Self.estimator(start: start), jitterUs: 5_000, seed: 7) {
            _ in
            50_000_000
        }
        simulator.run(untilUs: 60 * Self.second)
        let samples = simulator.samples
        let lowest = samples.map(\.update.bitrate).min() ?? 0
        print(
            "jitter ±5 ms, 50 Mbit/s path: over-using \(samples.overusingFraction * 100) % of \(samples.count) updates, "
                + "lowest estimate \(lowest) bit/s, final \(samples.last?.update.bitrate ?? 0) bit/s, threshold "
                + "\(samples.last?.update.threshold ?? 0)"
        )
        #expect(samples.overusingFraction <= 0.01)
        #expect(lowest >= start)
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: Swift.max(0, width - count)) + self
    }
}
