import Foundation
import Testing

@testable import CongestionControl

@Suite("Loss-based bitrate control (GCC §6) and the multi-receiver policy")
struct LossBasedBitrateControllerTests {
    static let second: UInt64 = 1_000_000_000

    static func controller(start: Int = 2_000_000, maximum: Int = 4_000_000) throws -> LossBasedBitrateController {
        try LossBasedBitrateController(
            configuration: .init(minimum: 200_000, maximum: maximum, start: start)
        )
    }

    @Test("15% loss brings the rate down within seconds, and it recovers once the loss ends")
    func downAndUp() throws {
        var rate = try Self.controller()
        // A report every 500 ms; each above 10% loss multiplies by 1 − 0.5 × 0.15 = 0.925.
        rate.reportLoss(0.15, at: 10 * Self.second)
        #expect(rate.target == 1_850_000)
        for step in 1...6 { rate.reportLoss(0.15, at: 10 * Self.second + UInt64(step) * Self.second / 2) }
        // 2 Mbit/s × 0.925⁷ after 3 s of loss.
        #expect(rate.target == Int(2_000_000 * pow(0.925, 7)))
        #expect(rate.target < 1_200_000)
        let low = rate.target
        // Clean reports for 8 s: 8 %/s compounded.
        for step in 1...16 { rate.reportLoss(0, at: 13 * Self.second + UInt64(step) * Self.second / 2) }
        #expect(abs(Double(rate.target) - Double(low) * pow(1.08, 8)) < 2)
        for step in 17...30 { rate.reportLoss(0, at: 13 * Self.second + UInt64(step) * Self.second / 2) }
        #expect(rate.target >= 2_000_000, "back to the start rate within 15 s")
    }

    @Test("2–10% loss holds the rate; reports about one burst decrease it once per interval")
    func holdAndInterval() throws {
        var rate = try Self.controller()
        rate.reportLoss(0.05, at: Self.second)
        rate.reportLoss(0.10, at: 2 * Self.second)
        #expect(rate.target == 2_000_000)
        rate.reportLoss(0.5, at: 3 * Self.second)
        rate.reportLoss(0.5, at: 3 * Self.second + 100_000_000)
        #expect(rate.target == 1_500_000, "the second report 100 ms later is inside the 300 ms interval")
        rate.reportLoss(0.5, at: 3 * Self.second + 300_000_000)
        #expect(rate.target == 1_125_000)
    }

    @Test("growth is credited for at most 2 s of silence; bounds hold")
    func boundsAndSilence() throws {
        var rate = try Self.controller(start: 1_000_000, maximum: 1_500_000)
        rate.reportLoss(0, at: 0)
        rate.reportLoss(0, at: 60 * Self.second)
        #expect(rate.target == Int(1_000_000 * pow(1.08, 2)))
        for step in 1...5 { rate.reportLoss(0, at: 60 * Self.second + UInt64(step) * 2 * Self.second) }
        #expect(rate.target == 1_500_000, "1.166 Mbit/s × 1.08¹⁰ would be 2.5; the maximum holds it")
        for step in 1...40 { rate.reportLoss(1, at: 80 * Self.second + UInt64(step) * Self.second) }
        #expect(rate.target == 200_000)
        let error = #expect(throws: CongestionControlError.self) {
            try LossBasedBitrateController(configuration: .init(minimum: 500_000, maximum: 400_000, start: 450_000))
        }
        #expect(error?.message == "bitrate bounds need 0 < minimum ≤ start ≤ maximum; got 500000, 450000, 400000 bit/s")
    }

    @Test("a REMB caps the estimate, which climbs from the cap when it lifts")
    func receiverCap() throws {
        var rate = try Self.controller()
        rate.reportReceiverEstimate(800_000)
        #expect(rate.target == 800_000 && rate.estimate == 800_000)
        rate.reportLoss(0, at: Self.second)
        rate.reportReceiverEstimate(3_000_000)
        rate.reportLoss(0, at: 2 * Self.second)
        #expect(abs(Double(rate.target) - 864_000) < 1, "8 % above the old cap, not a jump to 3 Mbit/s")
        rate.reportReceiverEstimate(100_000)
        #expect(rate.target == 200_000, "never below the minimum")
    }

    @Test("several receivers: the worst one sets the rate, never below the floor")
    func policy() throws {
        let policy = try ReceiverBitratePolicy(floor: 500_000, ceiling: 3_000_000, idle: 1_800_000)
        #expect(policy.target([]) == 1_800_000)
        #expect(policy.target([2_500_000, 1_200_000, 2_000_000]) == 1_200_000)
        #expect(policy.target([2_500_000, 150_000]) == 500_000, "one hopeless receiver does not starve the rest")
        #expect(policy.target([9_000_000]) == 3_000_000)
        #expect(throws: CongestionControlError.self) { try ReceiverBitratePolicy(floor: 0, ceiling: 1, idle: 1) }
    }

    struct OutlierCase: Sendable, CustomTestStringConvertible {
        var name: String
        var targets: [Int]
        var expected: Int
        var testDescription: String { name }
    }

    /// Floor 500 kbit/s, ceiling 3 Mbit/s, idle 1.8 Mbit/s; outliers are under ½ the median
    /// (`targets[count / 2]` once sorted), and only with three receivers or more.
    static let outlierCases: [OutlierCase] = [
        OutlierCase(name: "no receiver: the idle rate", targets: [], expected: 1_800_000),
        OutlierCase(name: "one receiver: its rate", targets: [1_200_000], expected: 1_200_000),
        OutlierCase(
            name: "two receivers: the worse, however far down",
            targets: [2_500_000, 1_000_000],
            expected: 1_000_000
        ),
        OutlierCase(
            name: "two receivers, the worse under the floor: the floor",
            targets: [2_500_000, 400_000],
            expected: 500_000
        ),
        OutlierCase(
            name: "three, one at 0.3 × the median: ignored",
            targets: [2_000_000, 600_000, 2_200_000],
            expected: 2_000_000
        ),
        OutlierCase(
            name: "three, one at exactly 0.5 × the median: followed",
            targets: [2_000_000, 1_000_000, 2_200_000],
            expected: 1_000_000
        ),
        OutlierCase(
            name: "three, one just under 0.5 × the median: ignored",
            targets: [2_000_000, 999_999, 2_200_000],
            expected: 2_000_000
        ),
        OutlierCase(
            name: "three, two low ones: the median is low, the lowest is followed (to the floor)",
            targets: [3_000_000, 200_000, 100_000],
            expected: 500_000
        ),
        OutlierCase(
            name: "four, one at 0.3 × the median: ignored",
            targets: [2_000_000, 2_000_000, 600_000, 2_400_000],
            expected: 2_000_000
        ),
        OutlierCase(
            name: "five, two low ones under half the median: both ignored",
            targets: [2_000_000, 500_000, 1_800_000, 2_200_000, 600_000],
            expected: 1_800_000
        ),
        OutlierCase(
            name: "five, two low ones, one of them above half the median: that one is followed",
            targets: [2_000_000, 700_000, 1_800_000, 2_200_000, 1_000_000],
            expected: 1_000_000
        ),
        OutlierCase(
            name: "three all under the floor: the floor",
            targets: [300_000, 400_000, 450_000],
            expected: 500_000
        ),
        OutlierCase(
            name: "three all over the ceiling: the ceiling",
            targets: [9_000_000, 4_000_000, 8_000_000],
            expected: 3_000_000
        ),
    ]

    @Test("outliers: with 3+ receivers one under ½ the median does not set the rate", arguments: outlierCases)
    func outliers(_ scenario: OutlierCase) throws {
        let policy = try ReceiverBitratePolicy(floor: 500_000, ceiling: 3_000_000, idle: 1_800_000)
        var votes = scenario.targets
        #expect(policy.target(&votes) == scenario.expected)
        #expect(votes == scenario.targets.sorted(), "sorted in place")
    }

    @Test("the outlier ratio is a setting; the sequence form still follows the worst")
    func outlierRatio() throws {
        var policy = try ReceiverBitratePolicy(floor: 500_000, ceiling: 3_000_000, idle: 1_800_000)
        #expect(policy.outlierRatio == 0.5)
        var votes = [2_000_000, 600_000, 2_200_000]
        #expect(policy.target(&votes) == 2_000_000)
        policy.outlierRatio = 0.25
        votes = [2_000_000, 600_000, 2_200_000]
        #expect(policy.target(&votes) == 600_000, "600 kbit/s ≥ 0.25 × 2 Mbit/s")
        #expect(policy.target([2_000_000, 600_000, 2_200_000].lazy.map { $0 }) == 600_000)
    }

    @Test("raise(to:) lifts the estimate at once, never lowers it, and keeps under the REMB cap and the maximum")
    func raise() throws {
        var rate = try Self.controller(start: 1_000_000, maximum: 4_000_000)
        rate.raise(to: 2_600_000)
        #expect(rate.estimate == 2_600_000 && rate.target == 2_600_000)
        rate.raise(to: 1_500_000)
        #expect(rate.target == 2_600_000, "a lower probe result does not lower the estimate")
        rate.raise(to: 0)
        #expect(rate.target == 2_600_000)
        rate.raise(to: 9_000_000)
        #expect(rate.estimate == 4_000_000, "the configured maximum")

        var capped = try Self.controller(start: 1_000_000)
        capped.reportReceiverEstimate(2_000_000)
        capped.raise(to: 3_500_000)
        #expect(capped.estimate == 2_000_000 && capped.target == 2_000_000, "the REMB caps the raise")
        capped.reportReceiverEstimate(5_000_000)
        #expect(capped.target == 2_000_000, "lifting the cap does not jump")
        capped.raise(to: 3_500_000)
        #expect(capped.target == 3_500_000)
        // Growth continues from the raised value: 1 s clean is 8 %.
        capped.reportLoss(0, at: Self.second)
        capped.reportLoss(0, at: 2 * Self.second)
        #expect(abs(Double(capped.target) - 3_500_000 * 1.08) < 1)
    }
}
