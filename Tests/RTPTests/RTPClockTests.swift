import Testing

@testable import RTP

@Suite("RTP clock")
struct RTPClockTests {
    /// The nearest tick by 128-bit arithmetic, as a reference for the split computation.
    static func reference(elapsed: UInt64, rate: UInt32) -> UInt64 {
        let product = elapsed.multipliedFullWidth(by: UInt64(rate))
        precondition(product.high < 1_000_000_000)
        let (q, r) = UInt64(1_000_000_000).dividingFullWidth(product)
        return r >= 500_000_000 ? q + 1 : q
    }

    @Test("maps capture time to the nearest tick")
    func exact() throws {
        let clock = try RTPClock(clockRate: 90_000, origin: 5_000, timestampBase: 1000)
        #expect(clock.timestamp(at: 5_000) == 1000)
        #expect(clock.timestamp(at: 5_000 + 1_000_000_000) == 91_000)
        // 30 fps in whole nanoseconds: 2999.99997 ticks rounds to 3000, so every frame steps 3000.
        #expect(clock.timestamp(at: 5_000 + 33_333_333) == 1000 + 3000)
        #expect(clock.timestamp(at: 5_000 + 66_666_666) == 1000 + 6000)
        #expect(clock.timestamp(at: 5_000 + 5_555) == 1000)  // 0.49995 tick
        #expect(clock.timestamp(at: 5_000 + 5_556) == 1001)  // 0.50004 tick
        #expect(clock.nanosecondsPerTick == 11_112)
    }

    @Test("long sessions neither overflow nor drift", arguments: [UInt32(90_000), 48_000, 8_000, 1_000_000_000])
    func longElapsed(rate: UInt32) throws {
        let clock = try RTPClock(clockRate: rate, origin: 0, timestampBase: 0x89AB_CDEF)
        var generator = SeededGenerator(seed: UInt64(rate))
        // Up to ~5.8 years in nanoseconds, far past where elapsed × 90000 overflows 64 bits.
        for _ in 0..<500 {
            let elapsed = UInt64.random(in: 0...(1 << 62), using: &generator)
            let expected =
                UInt32(0x89AB_CDEF) &+ UInt32(truncatingIfNeeded: Self.reference(elapsed: elapsed, rate: rate))
            #expect(clock.timestamp(at: elapsed) == expected)
        }
    }

    @Test("wraps modulo 2^32")
    func wraps() throws {
        let clock = try RTPClock(clockRate: 90_000, origin: 0, timestampBase: 0xFFFF_FFFF)
        #expect(clock.timestamp(at: 11_112) == 0)
        #expect(clock.timestamp(at: 1_000_000_000) == 89_999)
    }

    @Test("audio and video built from one origin share the timeline")
    func sharedTimeline() throws {
        let origin: UInt64 = 123_456_789_000
        let video = try makeStream(clockRate: 90_000).clock(origin: origin)
        let audio = try makeStream(payloadType: 111, clockRate: 48_000).clock(origin: origin)
        let capture = origin + 2_500_000_000
        #expect(video.timestamp(at: capture) &- video.timestampBase == 225_000)
        #expect(audio.timestamp(at: capture) &- audio.timestampBase == 120_000)
    }

    @Test("captures before the origin count back symmetrically, staying monotonic")
    func beforeOrigin() throws {
        let clock = try RTPClock(clockRate: 90_000, origin: 1_000_000, timestampBase: 10)
        #expect(clock.timestamp(at: 1_000_000 - 11_111) == 9)  // −0.99999 tick rounds to −1
        #expect(clock.timestamp(at: 1_000_000 - 11_112) == 9)  // −1.00008 rounds to −1
        #expect(clock.timestamp(at: 1_000_000 - 16_667) == 8)  // −1.50003 rounds to −2
        #expect(clock.timestamp(at: 1_000_000 - 22_223) == 8)
        var previous = clock.timestamp(at: 0)
        for capture in stride(from: UInt64(11_112), through: 3_000_000, by: 11_112) {
            let current = clock.timestamp(at: capture)
            #expect(current &- previous >= 1 && current &- previous <= 2)
            previous = current
        }
    }

    @Test("rejects a zero clock rate")
    func rejects() {
        #expect(throws: RTPError.self) { try RTPClock(clockRate: 0, origin: 0, timestampBase: 0) }
    }
}
