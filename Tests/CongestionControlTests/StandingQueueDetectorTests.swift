import Testing

@testable import CongestionControl

@Suite("Standing-queue detector")
struct StandingQueueDetectorTests {
    @Test("the delay is the offset above the window's minimum; the drain rate follows it")
    func delayAndDrain() {
        var detector = StandingQueueDetector()
        detector.update(minimumOffsetUs: 5_000_000, at: 0)
        #expect(detector.delayUs == 0)
        #expect(detector.drainRate(linkRate: 1_000_000) == nil)
        detector.update(minimumOffsetUs: 5_080_000, at: 4_000_000)
        #expect(detector.delayUs == 80_000)
        #expect(detector.drainRate(linkRate: 1_000_000) == nil)  // under the 100 ms limit
        detector.update(minimumOffsetUs: 5_150_000, at: 8_000_000)
        #expect(detector.delayUs == 150_000)
        #expect(detector.drainRate(linkRate: 1_000_000) == 700_000)  // 1 − 150 / 500 ms
        detector.update(minimumOffsetUs: 5_300_000, at: 9_000_000)
        #expect(detector.drainRate(linkRate: 1_000_000) == 500_000)  // at least half
        // A longer span asks for less: 1 − 300 / 1000 ms.
        var gentle = StandingQueueDetector(drainSpanUs: 1_000_000)
        gentle.update(minimumOffsetUs: 5_000_000, at: 0)
        gentle.update(minimumOffsetUs: 5_300_000, at: 1_000_000)
        #expect(gentle.drainRate(linkRate: 1_000_000) == 700_000)
    }

    @Test("the minimum ages out after the window, and a long silence forgets it")
    func window() {
        var detector = StandingQueueDetector(windowUs: 10_000_000, buckets: 10)
        detector.update(minimumOffsetUs: 1_000, at: 0)
        detector.update(minimumOffsetUs: 201_000, at: 5_000_000)
        #expect(detector.delayUs == 200_000)
        // 0 s's bucket leaves the window once ten 1 s buckets have passed.
        detector.update(minimumOffsetUs: 201_000, at: 10_500_000)
        #expect(detector.delayUs == 0)
        // After a silence longer than the window, the next offset is the new base.
        detector.update(minimumOffsetUs: 900_000, at: 40_000_000)
        #expect(detector.delayUs == 0)
    }

    @Test("a queue over the back-off limit in two messages calls for one decrease, again only once it fell under half")
    func backoffOncePerQueue() {
        var detector = StandingQueueDetector(backoffLimitUs: 25_000)
        /// Feeds one feedback message's least offset (ms above a 1 s base) and asks for a back-off.
        func backoff(_ delayMs: Int64, at ms: Int64) -> Bool {
            detector.update(minimumOffsetUs: 1_000_000 + delayMs * 1000, at: ms * 1000)
            return detector.takeBackoff()
        }
        let calls = [
            backoff(0, at: 0),
            backoff(20, at: 50),  // under the limit
            backoff(30, at: 100),  // over it once: a large picture's queue, perhaps
            backoff(10, at: 150),
            backoff(30, at: 200),
            backoff(35, at: 250),  // over it twice in a row: one decrease
            backoff(45, at: 300),  // the same queue, growing or draining
            backoff(15, at: 350),
            backoff(30, at: 400),
            backoff(30, at: 450),  // 15 ms was not under half the limit
            backoff(10, at: 500),
            backoff(30, at: 550),
            backoff(30, at: 600),  // 10 ms was: a new queue
        ]
        #expect(calls == [false, false, false, false, false, true, false, false, false, false, false, false, true])
        var off = StandingQueueDetector(backoffLimitUs: 0)
        off.update(minimumOffsetUs: 0, at: 0)
        off.update(minimumOffsetUs: 90_000, at: 50_000)
        let offCalls = off.takeBackoff()
        #expect(!offCalls)
    }

    @Test(
        "the early back-off's β: 0.95 just over the limit, 1 − delay / 500 ms deeper, at least 0.85",
        arguments: [
            (0, 0.95), (26, 0.948), (40, 0.92), (50, 0.90), (75, 0.85), (99, 0.85), (400, 0.85),
        ] as [(Int64, Double)]
    )
    func backoffFactorFollowsTheQueue(delayMs: Int64, factor: Double) {
        var detector = StandingQueueDetector(drainSpanUs: 500_000, backoffLimitUs: 25_000)
        detector.update(minimumOffsetUs: 1_000_000, at: 0)
        detector.update(minimumOffsetUs: 1_000_000 + delayMs * 1000, at: 50_000)
        #expect(abs(detector.backoffFactor(gentlest: 0.95) - factor) < 1e-9)
        #expect(detector.isOverBackoffLimit == (delayMs > 25))
    }
}
