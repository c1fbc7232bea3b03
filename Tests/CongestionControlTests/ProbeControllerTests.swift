import Testing

@testable import CongestionControl

@Suite("Probe controller: when to probe, and at what rate")
struct ProbeControllerTests {
    /// One step of a scenario at `atMs`: ask for a probe with `estimate`, or report a result or
    /// a decrease.
    enum Step: Sendable {
        /// `probe(at:estimate:)` must give `expected` (cluster id, rate) or nil.
        case probe(atMs: Int64, estimate: Int, expected: Probe?)
        case result(atMs: Int64, rate: Int, cluster: Int)
        case decrease(atMs: Int64)
    }

    struct Probe: Sendable, Equatable {
        var id: Int
        var rate: Int
    }

    struct Scenario: Sendable, CustomTestStringConvertible {
        var name: String
        var maximum = 4_000_000
        var steps: [Step]
        var testDescription: String { name }
    }

    static let scenarios: [Scenario] = [
        Scenario(
            name: "the first probe goes at once, at twice the estimate",
            steps: [.probe(atMs: 0, estimate: 1_000_000, expected: Probe(id: 1, rate: 2_000_000))]
        ),
        Scenario(
            name: "none while one is in flight; after 1 s without a result, the interval from then",
            steps: [
                .probe(atMs: 0, estimate: 1_000_000, expected: Probe(id: 1, rate: 2_000_000)),
                .probe(atMs: 1, estimate: 1_000_000, expected: nil),
                .probe(atMs: 999, estimate: 1_000_000, expected: nil),
                // 1 s: the flight times out, and the next probe waits 3 s from now.
                .probe(atMs: 1_000, estimate: 1_000_000, expected: nil),
                .probe(atMs: 3_999, estimate: 1_000_000, expected: nil),
                .probe(atMs: 4_000, estimate: 1_000_000, expected: Probe(id: 2, rate: 2_000_000)),
            ]
        ),
        Scenario(
            name: "a result at 80 % of the rate found room: the next probe at once, at twice the new estimate",
            steps: [
                .probe(atMs: 0, estimate: 1_000_000, expected: Probe(id: 1, rate: 2_000_000)),
                .result(atMs: 40, rate: 1_600_000, cluster: 1),
                .probe(atMs: 40, estimate: 1_600_000, expected: Probe(id: 2, rate: 3_200_000)),
            ]
        ),
        Scenario(
            name: "repeated success climbs to the maximum, then stops within 5 % of it",
            steps: [
                .probe(atMs: 0, estimate: 900_000, expected: Probe(id: 1, rate: 1_800_000)),
                .result(atMs: 30, rate: 1_800_000, cluster: 1),
                .probe(atMs: 31, estimate: 1_800_000, expected: Probe(id: 2, rate: 3_600_000)),
                .result(atMs: 60, rate: 3_000_000, cluster: 2),
                // min(2 × 3 Mbit/s, 4 Mbit/s).
                .probe(atMs: 61, estimate: 3_000_000, expected: Probe(id: 3, rate: 4_000_000)),
                .result(atMs: 90, rate: 3_850_000, cluster: 3),
                .probe(atMs: 91, estimate: 3_850_000, expected: nil),
                .probe(atMs: 60_000, estimate: 3_850_000, expected: nil),
                // Once the estimate falls back under 95 %, the next probe (it succeeded at 91 ms).
                .probe(atMs: 60_001, estimate: 3_790_000, expected: Probe(id: 4, rate: 4_000_000)),
            ]
        ),
        Scenario(
            name: "the first probe is capped at the maximum",
            maximum: 2_500_000,
            steps: [.probe(atMs: 0, estimate: 2_000_000, expected: Probe(id: 1, rate: 2_500_000))]
        ),
        Scenario(
            name: "no probe at all while the estimate is within 5 % of the maximum",
            maximum: 2_000_000,
            steps: [
                .probe(atMs: 0, estimate: 1_901_000, expected: nil),
                .probe(atMs: 10_000, estimate: 2_000_000, expected: nil),
                .probe(atMs: 10_001, estimate: 1_899_000, expected: Probe(id: 1, rate: 2_000_000)),
            ]
        ),
        Scenario(
            name: "a result under 80 % of the rate: the next probe only after the interval",
            steps: [
                .probe(atMs: 0, estimate: 1_000_000, expected: Probe(id: 1, rate: 2_000_000)),
                .result(atMs: 50, rate: 1_590_000, cluster: 1),
                .probe(atMs: 51, estimate: 1_590_000, expected: nil),
                .probe(atMs: 3_049, estimate: 1_590_000, expected: nil),
                .probe(atMs: 3_050, estimate: 1_590_000, expected: Probe(id: 2, rate: 3_180_000)),
            ]
        ),
        Scenario(
            name: "a result for another cluster is ignored: the probe stays in flight",
            steps: [
                .probe(atMs: 0, estimate: 1_000_000, expected: Probe(id: 1, rate: 2_000_000)),
                .result(atMs: 50, rate: 2_000_000, cluster: 7),
                .probe(atMs: 51, estimate: 1_000_000, expected: nil),
            ]
        ),
        Scenario(
            name: "a decrease holds probing for an interval from the decrease",
            steps: [
                .decrease(atMs: 500),
                .probe(atMs: 501, estimate: 1_000_000, expected: nil),
                .probe(atMs: 3_499, estimate: 1_000_000, expected: nil),
                .probe(atMs: 3_500, estimate: 1_000_000, expected: Probe(id: 1, rate: 2_000_000)),
            ]
        ),
        Scenario(
            name: "a decrease after a successful probe cancels the immediate next one",
            steps: [
                .probe(atMs: 0, estimate: 1_000_000, expected: Probe(id: 1, rate: 2_000_000)),
                .result(atMs: 40, rate: 2_000_000, cluster: 1),
                .decrease(atMs: 45),
                .probe(atMs: 46, estimate: 850_000, expected: nil),
                .probe(atMs: 3_045, estimate: 850_000, expected: Probe(id: 2, rate: 1_700_000)),
            ]
        ),
        Scenario(
            name: "an earlier decrease does not shorten a longer wait",
            steps: [
                .probe(atMs: 0, estimate: 1_000_000, expected: Probe(id: 1, rate: 2_000_000)),
                .result(atMs: 2_000, rate: 100_000, cluster: 1),
                // Next probe at 5 s; a decrease at 1.9 s (reported late) would say 4.9 s.
                .decrease(atMs: 1_900),
                .probe(atMs: 4_950, estimate: 1_000_000, expected: nil),
                .probe(atMs: 5_000, estimate: 1_000_000, expected: Probe(id: 2, rate: 2_000_000)),
            ]
        ),
    ]

    @Test("a probe doubles the larger of the estimate and the capacity; the ceiling is checked on the estimate")
    func capacityBase() {
        var controller = ProbeController(maximum: 4_000_000)
        // One over-use's reading set a capacity of 4.18 Mbit/s while the estimate was 1.5: the
        // probe goes at the ceiling rather than not at all.
        #expect(controller.probe(at: 0, estimate: 1_500_000, base: 4_180_000)?.rate == 4_000_000)
        controller = ProbeController(maximum: 4_000_000)
        #expect(controller.probe(at: 0, estimate: 700_000, base: 1_000_000)?.rate == 2_000_000)
        controller = ProbeController(maximum: 4_000_000)
        #expect(controller.probe(at: 0, estimate: 1_500_000, base: 1_000_000)?.rate == 3_000_000)
        controller = ProbeController(maximum: 4_000_000)
        #expect(controller.probe(at: 0, estimate: 3_850_000, base: 1_000_000) == nil)
    }

    @Test(arguments: scenarios)
    func scenario(_ scenario: Scenario) {
        // The tables were written for one 3 s interval after a failure and after a decrease.
        var controller = ProbeController(maximum: scenario.maximum, intervalUs: 3_000_000, afterDecreaseUs: 3_000_000)
        for (index, step) in scenario.steps.enumerated() {
            switch step {
            case .probe(let atMs, let estimate, let expected):
                let probe = controller.probe(at: atMs * 1_000, estimate: estimate).map {
                    Probe(id: $0.id, rate: $0.rate)
                }
                #expect(probe == expected, "step \(index) at \(atMs) ms")
            case .result(let atMs, let rate, let cluster):
                controller.record(result: rate, cluster: cluster, at: atMs * 1_000)
            case .decrease(let atMs):
                controller.recordDecrease(at: atMs * 1_000)
            }
        }
    }

    @Test("defaults: 2 s after a probe that found no room, 1 s after a decrease")
    func defaults() {
        var controller = ProbeController(maximum: 4_000_000)
        #expect(controller.intervalUs == 2_000_000 && controller.afterDecreaseUs == 1_000_000)
        controller.recordDecrease(at: 100_000)
        #expect(controller.probe(at: 1_099_999, estimate: 1_000_000) == nil)
        #expect(controller.probe(at: 1_100_000, estimate: 1_000_000)?.id == 1)
        controller.record(result: 1_000_000, cluster: 1, at: 1_150_000)
        #expect(controller.probe(at: 3_149_999, estimate: 1_000_000) == nil)
        #expect(controller.probe(at: 3_150_000, estimate: 1_000_000)?.id == 2)
    }

    @Test("the interval is configurable, and nextProbeUs says when")
    func interval() {
        var controller = ProbeController(maximum: 4_000_000, intervalUs: 500_000)
        #expect(controller.nextProbeUs == 0)
        let first = controller.probe(at: 10_000, estimate: 1_000_000)
        #expect(first?.id == 1 && first?.rate == 2_000_000)
        controller.record(result: 1_000_000, cluster: 1, at: 20_000)
        #expect(controller.nextProbeUs == 520_000)
        #expect(controller.probe(at: 519_999, estimate: 1_000_000) == nil)
        #expect(controller.probe(at: 520_000, estimate: 1_000_000)?.id == 2)
    }
}
