import Cadence
import Testing

/// `FrameRateGovernor` walked at a 30 fps capture: QPs in, divisors and admissions out.
@Suite struct FrameRateGovernorTests {
    static let period: UInt64 = 33_333_333

    /// Feeds `seconds` of changed pictures, each encoded at `qp` when admitted; returns the
    /// pictures admitted and the divisor after.
    static func run(
        _ governor: inout FrameRateGovernor,
        from start: Int,
        seconds: Int,
        qp: Int
    ) -> (admitted: Int, divisor: Int) {
        var admitted = 0
        for index in start..<(start + seconds * 30) {
            let t = UInt64(index) * period
            if governor.admits(changedPictureAt: t) {
                admitted += 1
                _ = governor.encoded(qp: qp, at: t)
            }
        }
        return (admitted, governor.divisor)
    }

    @Test("motion sends every picture whatever the QP")
    func motionIsNotGoverned() {
        var governor = FrameRateGovernor(hint: .motion, frameRate: 30)
        let run = Self.run(&governor, from: 0, seconds: 5, qp: 45)
        #expect(run.admitted == 150 && run.divisor == 1)
    }

    @Test("detail: coarse pictures step the rate down, a window at a time with one to settle, to 5 fps")
    func detailStepsDownThenUp() {
        var governor = FrameRateGovernor(hint: .detail, frameRate: 30)
        // 1 s at QP 40: one step (to 15 fps); the next window settles.
        var run = Self.run(&governor, from: 0, seconds: 1, qp: 40)
        #expect(run.admitted == 30)
        run = Self.run(&governor, from: 30, seconds: 3, qp: 40)
        #expect(run.divisor == 3, "one step per two windows while coarse")
        run = Self.run(&governor, from: 120, seconds: 20, qp: 40)
        #expect(run.divisor == 6, "no lower than 5 fps")
        run = Self.run(&governor, from: 720, seconds: 10, qp: 40)
        #expect((48...52).contains(run.admitted), "\(run.admitted) pictures in 10 s at 5 fps")
        #expect(governor.frameRate(nominal: 30) == 5)
        // Between the thresholds: it stays.
        run = Self.run(&governor, from: 1020, seconds: 5, qp: 30)
        #expect(run.divisor == 6)
        // Pictures at detail's finest QP (its converged 24, x264's floor for it): back up,
        // two low windows per step.
        run = Self.run(&governor, from: 1170, seconds: 40, qp: 24)
        #expect(run.divisor == 1)
    }

    @Test("text holds a lower QP, down to 3 fps")
    func textGoesLower() {
        var governor = FrameRateGovernor(hint: .text, frameRate: 30)
        var run = Self.run(&governor, from: 0, seconds: 30, qp: 33)
        #expect(run.divisor == 10)
        var detail = FrameRateGovernor(hint: .detail, frameRate: 30)
        run = Self.run(&detail, from: 0, seconds: 30, qp: 33)
        #expect(run.divisor == 1, "QP 33 is fine for detail")
    }

    @Test("a key frame someone asked for is never held back")
    func forcedPicturesAreAdmitted() {
        var governor = FrameRateGovernor(hint: .detail, frameRate: 30)
        _ = Self.run(&governor, from: 0, seconds: 10, qp: 45)
        #expect(governor.divisor == 6)
        let t = UInt64(400) * Self.period
        let first = governor.admits(changedPictureAt: t)
        let next = governor.admits(changedPictureAt: t + Self.period)
        let forced = governor.admits(changedPictureAt: t + 2 * Self.period, force: true)
        #expect(first && !next && forced)
    }
}

extension FrameRateGovernorTests {
    /// Coarse windows whose QP falls fast are x264's rate control catching up with a new budget
    /// (after a rise it follows over seconds), not a rate too short for the screen: the rate
    /// stays. A coarse window that fell 3 or less, or rose, steps down as before; a window under
    /// 37 never steps whatever it fell.
    @Test(arguments: [
        (first: 53, second: 40, divisor: 1),
        (first: 44, second: 40, divisor: 1),
        (first: 43, second: 40, divisor: 2),
        (first: 41, second: 40, divisor: 2),
        (first: 38, second: 45, divisor: 2),
        (first: 60, second: 36, divisor: 1),
    ])
    func aFastFallingQPKeepsTheRate(_ row: (first: Int, second: Int, divisor: Int)) {
        // A rise: its first window (at `first`) settles; the next (at `second`) may step.
        var governor = FrameRateGovernor(hint: .detail, frameRate: 30)
        _ = Self.run(&governor, from: 0, seconds: 2, qp: 30)
        _ = governor.targetRose(from: 165, to: 1041)
        _ = Self.run(&governor, from: 60, seconds: 1, qp: row.first)
        _ = Self.run(&governor, from: 90, seconds: 2, qp: row.second)
        #expect(governor.divisor == row.divisor, "\(row)")
        // Once it stops falling, a coarse window steps down after all.
        _ = Self.run(&governor, from: 150, seconds: 1, qp: row.second)
        #expect(governor.divisor == (row.second > 37 ? 2 : 1), "\(row), then level")
    }

    /// A target that rises by half again or more gives the pictures back at once, as many as
    /// the new rate gives the per-picture budget the divisor gave at the old one: from 5 fps
    /// (divisor 6) at 200 kbit/s, 1200 keeps 6 × 200 / 1200 = 1, 600 → 2, 400 → 3, 300 → 4; a
    /// smaller rise, the same or a fall changes nothing (coarse windows do that); `motion` has
    /// no divisor to change.
    @Test(arguments: [
        (old: 200, new: 1200, divisor: 1, changed: true),
        (old: 200, new: 600, divisor: 2, changed: true),
        (old: 200, new: 400, divisor: 3, changed: true),
        (old: 200, new: 300, divisor: 4, changed: true),
        (old: 200, new: 290, divisor: 6, changed: false),
        (old: 200, new: 200, divisor: 6, changed: false),
        (old: 200, new: 100, divisor: 6, changed: false),
    ])
    func aRisingTargetGivesPicturesBack(_ row: (old: Int, new: Int, divisor: Int, changed: Bool)) {
        var governor = FrameRateGovernor(hint: .detail, frameRate: 30)
        let run = Self.run(&governor, from: 0, seconds: 30, qp: 40)
        #expect(run.divisor == 6)
        #expect(governor.targetRose(from: row.old, to: row.new) == row.changed)
        #expect(governor.divisor == row.divisor)
        var motion = FrameRateGovernor(hint: .motion, frameRate: 30)
        #expect(!motion.targetRose(from: row.old, to: row.new) && motion.divisor == 1)
    }

    /// Coarse pictures coded at a start's rate do not step the rate down once the target has
    /// risen: the window starts over at the rise and the next one settles; only a full coarse
    /// window at the new rate steps down. A rise under half again leaves the window alone.
    @Test func aRiseStartsTheWindowOver() {
        func feed(_ governor: inout FrameRateGovernor, _ range: Range<Int>) -> Int {
            var admitted = 0
            for index in range {
                let t = UInt64(index) * Self.period
                if governor.admits(changedPictureAt: t) {
                    admitted += 1
                    _ = governor.encoded(qp: 40, at: t)
                }
            }
            return admitted
        }
        var governor = FrameRateGovernor(hint: .detail, frameRate: 30)
        _ = feed(&governor, 0..<24)
        let rose = governor.targetRose(from: 165, to: 866)
        #expect(!rose && governor.divisor == 1, "no divisor to give back")
        #expect(feed(&governor, 24..<84) == 60 && governor.divisor == 1, "the window after the rise settles")
        _ = feed(&governor, 84..<90)
        #expect(governor.divisor == 2, "a coarse window at the new rate steps down")

        var small = FrameRateGovernor(hint: .detail, frameRate: 30)
        _ = feed(&small, 0..<24)
        let smallRise = small.targetRose(from: 1000, to: 1400)
        #expect(!smallRise)
        _ = feed(&small, 24..<32)
        #expect(small.divisor == 2, "a rise under half again leaves the coarse window counting")
    }
}
