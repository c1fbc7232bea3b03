import Foundation
import Testing

@testable import CongestionControl

@Suite("AIMD rate control (draft-ietf-rmcat-gcc-02 §5.5)")
struct AIMDRateControllerTests {
    static func controller(start: Int = 1_000_000) throws -> AIMDRateController {
        try AIMDRateController(configuration: .init(minimum: 100_000, maximum: 5_000_000, start: start))
    }

    @Test("over-use decreases to 0.85 × the acknowledged rate and holds; never up")
    func decrease() throws {
        var rate = try Self.controller(start: 2_000_000)
        #expect(rate.update(.overusing, acknowledgedBitrate: 1_000_000, at: 1_000_000) == 850_000)
        #expect(rate.state == .hold)
        #expect(rate.linkCapacity.estimate == 1_000_000, "the first capacity sample is the acknowledged rate")
        // Holding while normal is not yet seen: under-use changes nothing.
        #expect(rate.update(.underusing, acknowledgedBitrate: 800_000, at: 1_100_000) == 850_000)

        // 0.85 × 1 Mbit/s is above a 500 kbit/s estimate: no capacity estimate yet, so no change.
        var low = try Self.controller(start: 500_000)
        #expect(low.update(.overusing, acknowledgedBitrate: 1_000_000, at: 0) == 500_000)

        // Never below the minimum.
        var floor = try Self.controller()
        #expect(floor.update(.overusing, acknowledgedBitrate: 50_000, at: 0) == 100_000)
    }

    @Test("far from convergence: 8 % per second, at least 1 kbit/s per update")
    func multiplicativeIncrease() throws {
        var rate = try Self.controller()
        // Hold → increase at 0: no time has passed, so the 1 kbit/s minimum step.
        #expect(rate.update(.normal, acknowledgedBitrate: 1_000_000, at: 0) == 1_001_000)
        #expect(rate.state == .increase)
        // 500 ms later: × 1.08^0.5.
        let expected = 1_001_000 * pow(1.08, 0.5)
        #expect(rate.update(.normal, acknowledgedBitrate: 1_000_000, at: 500_000) == Int(expected))
        // A gap of 5 s is credited as 1 s.
        let afterGap = expected * 1.08
        #expect(rate.update(.normal, acknowledgedBitrate: 1_000_000, at: 5_500_000) == Int(afterGap))
    }

    @Test("growth stops at 1.5 × acknowledged + 10 kbit/s; a rate above it is not pulled down")
    func acknowledgedLimit() throws {
        var rate = try Self.controller(start: 700_000)
        rate.update(.normal, acknowledgedBitrate: 480_000, at: 0)
        // 1 s of 8 % would be 756 kbit/s; the limit is 1.5 × 480 + 10 = 730 kbit/s.
        #expect(rate.update(.normal, acknowledgedBitrate: 480_000, at: 1_000_000) == 730_000)
        var above = try Self.controller(start: 1_000_000)
        #expect(above.update(.normal, acknowledgedBitrate: 500_000, at: 0) == 1_000_000)
        #expect(above.update(.normal, acknowledgedBitrate: 500_000, at: 1_000_000) == 1_000_000)
    }

    @Test("near convergence: about one packet per response time (RTT + 100 ms)")
    func additiveIncrease() throws {
        var rate = try Self.controller(start: 2_000_000)
        rate.setRoundTripTime(40_000)
        rate.update(.overusing, acknowledgedBitrate: 1_000_000, at: 0)
        #expect(rate.bitrate == 850_000)
        // The capacity band is 1000 ± 3 × √(0.4 × 1000) kbit/s = 940…1060 kbit/s.
        #expect(abs(rate.linkCapacity.upperBound - 1_060_000) < 1e-6)
        #expect(abs(rate.linkCapacity.lowerBound - 940_000) < 1e-6)
        // At 850 kbit/s a 30 fps frame is 28 333 bits: 3 packets of 9 444 bits; response time
        // 140 ms: 67 460 bit/s per second.
        let perSecond = 850_000.0 / 30 / 3 / 0.14
        #expect(abs(rate.additiveIncreasePerSecond - perSecond) < 1e-6)
        rate.update(.normal, acknowledgedBitrate: 900_000, at: 100_000)
        #expect(rate.update(.normal, acknowledgedBitrate: 900_000, at: 1_100_000) == Int(850_000 + perSecond))
        // The acknowledged rate leaves the band upward: the estimate is dropped, 8 %/s again.
        let before = rate.bitrate
        rate.update(.normal, acknowledgedBitrate: 1_100_000, at: 1_600_000)
        #expect(rate.linkCapacity.estimate == nil)
        #expect(abs(rate.bitrate - before * pow(1.08, 0.5)) < 1)
    }

    @Test("near a known capacity the rate passes it only up to 1.1 × acknowledged (D31)")
    func nearCapacityLimit() throws {
        // Capacity 1 Mbit/s from one over-use; then a sender at 800 kbit/s: the additive steps
        // stop at the capacity (1.1 × 800 = 880 kbit/s is under it), and stay there.
        var under = try Self.controller(start: 2_000_000)
        under.update(.overusing, acknowledgedBitrate: 1_000_000, at: 0)
        under.update(.normal, acknowledgedBitrate: 800_000, at: 100_000)
        for second in 1...10 { under.update(.normal, acknowledgedBitrate: 800_000, at: Int64(second) * 1_000_000) }
        #expect(under.bitrate == 1_000_000)
        // A sender at 950 kbit/s passes it, up to 1.1 × 950 = 1045 kbit/s (under the band's
        // 1060, so the capacity stands and the steps stay additive).
        var filled = under
        for second in 11...20 { filled.update(.normal, acknowledgedBitrate: 950_000, at: Int64(second) * 1_000_000) }
        #expect(abs(filled.bitrate - 1_045_000) < 1e-6)
        #expect(filled.linkCapacity.estimate == 1_000_000)
        // Without a capacity estimate only GCC's limit applies: 1.5 × 800 + 10 kbit/s.
        var far = try Self.controller(start: 1_000_000)
        for second in 0...10 { far.update(.normal, acknowledgedBitrate: 800_000, at: Int64(second) * 1_000_000) }
        #expect(far.bitrate == 1_210_000)
        // Off (nil): libwebrtc's behaviour, the additive climb goes on past the capacity.
        var off = try AIMDRateController(
            configuration: .init(minimum: 100_000, maximum: 5_000_000, start: 2_000_000, nearCapacityLimitFactor: nil)
        )
        off.update(.overusing, acknowledgedBitrate: 1_000_000, at: 0)
        off.update(.normal, acknowledgedBitrate: 800_000, at: 100_000)
        for second in 1...10 { off.update(.normal, acknowledgedBitrate: 800_000, at: Int64(second) * 1_000_000) }
        #expect(off.bitrate > 1_100_000)
        // A factor under 1 is refused.
        #expect(throws: CongestionControlError.self) {
            try AIMDRateController(configuration: .init(nearCapacityLimitFactor: 0.9))
        }
    }

    @Test("a measured capacity starts the band over and holds against a lagging acknowledged rate until told")
    func measuredCapacity() throws {
        var rate = try Self.controller(start: 2_000_000)
        rate.update(.overusing, acknowledgedBitrate: 2_800_000, at: 0)
        rate.setLinkCapacity(1_000_000, heldUntilUs: 1_000_000)
        #expect(rate.linkCapacity.estimate == 1_000_000)
        #expect(abs(rate.linkCapacity.upperBound - 1_060_000) < 1e-6, "the variance starts over, too")
        // R_hat still reads the old link: the capacity stands until 1 s, and the growth is additive.
        rate.update(.normal, acknowledgedBitrate: 1_400_000, at: 100_000)
        rate.update(.normal, acknowledgedBitrate: 1_400_000, at: 900_000)
        #expect(rate.linkCapacity.estimate == 1_000_000)
        // From then on an acknowledged rate above the band drops it, as before.
        rate.update(.normal, acknowledgedBitrate: 1_100_000, at: 1_000_000)
        #expect(rate.linkCapacity.estimate == nil)
    }

    @Test("a further decrease waits one round trip (10–200 ms) unless the acknowledged rate halved")
    func reductionInterval() throws {
        var rate = try Self.controller(start: 2_000_000)
        rate.setRoundTripTime(40_000)
        #expect(rate.mayReduceFurther(at: 0, acknowledgedBitrate: 1_900_000), "nothing changed yet")
        rate.update(.overusing, acknowledgedBitrate: 1_800_000, at: 1_000_000)
        #expect(rate.bitrate == 1_530_000)
        #expect(!rate.mayReduceFurther(at: 1_039_999, acknowledgedBitrate: 1_500_000))
        #expect(rate.mayReduceFurther(at: 1_040_000, acknowledgedBitrate: 1_500_000))
        #expect(rate.mayReduceFurther(at: 1_010_000, acknowledgedBitrate: 700_000), "below half of 1.53 Mbit/s")
        rate.setRoundTripTime(1_000_000)
        #expect(
            rate.mayReduceFurther(at: 1_200_000, acknowledgedBitrate: 1_500_000),
            "the interval is capped at 200 ms"
        )
        let error = #expect(throws: CongestionControlError.self) {
            try AIMDRateController(configuration: .init(minimum: 500_000, maximum: 400_000, start: 450_000))
        }
        #expect(error?.message == "bitrate bounds need 0 < minimum ≤ start ≤ maximum; got 500000, 450000, 400000 bit/s")
    }
}
