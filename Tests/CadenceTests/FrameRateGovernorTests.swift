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
