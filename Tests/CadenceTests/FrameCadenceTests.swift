import Cadence
import Testing

/// Every transition of `FrameCadence`, walked at a 30 fps capture (33 ms apart) with no encoder:
/// each row is an event and the action and state that must follow.
@Suite struct FrameCadenceTests {
    /// A 30 fps frame period, rounded up so that 30 of them make a whole second.
    static let frame: UInt64 = 33_333_334
    static let second: UInt64 = 1_000_000_000

    enum Event {
        /// A picture captured at `t` (frames), changed or not.
        case picture(changed: Bool, at: UInt64)
        /// The encoder's QP for the last picture it encoded, at `t`.
        case encoded(qp: Int, at: UInt64)
        case keyFrameRequest
        /// An unchanged picture at `t` while the encoder runs a refresh wave.
        case refreshing(at: UInt64)
    }

    /// The thresholds the walks below use: converged at QP 24, refreshing at most 1 s.
    static let walked = FrameCadence.Configuration(convergedQP: 24, convergenceLimit: second)

    /// Runs `events`; returns the actions and the state names after each picture.
    static func run(_ events: [Event], _ configuration: FrameCadence.Configuration = walked) -> [String] {
        var cadence = FrameCadence(configuration)
        var trace: [String] = []
        for event in events {
            switch event {
            case .picture(let changed, let t):
                let action = cadence.picture(changed: changed, at: t * frame)
                trace.append("\(action) \(cadence.state.name)")
            case .encoded(let qp, let t):
                cadence.encoded(qp: qp, at: t * frame)
            case .keyFrameRequest:
                cadence.requestKeyFrame()
            case .refreshing(let t):
                let action = cadence.picture(changed: false, at: t * frame, refreshing: true)
                trace.append("\(action) \(cadence.state.name)")
            }
        }
        return trace
    }

    @Test("a changing screen is encoded picture by picture")
    func changingEncodesEveryPicture() {
        let trace = Self.run((0..<4).flatMap { [.picture(changed: true, at: $0), .encoded(qp: 30, at: $0)] })
        #expect(trace == Array(repeating: "encode changing", count: 4))
    }

    @Test("a still picture is refreshed until its QP reaches the target, then skipped")
    func refreshesUntilConverged() {
        let trace = Self.run([
            .picture(changed: true, at: 0), .encoded(qp: 34, at: 0),
            .picture(changed: false, at: 1), .encoded(qp: 30, at: 1),
            .picture(changed: false, at: 2), .encoded(qp: 26, at: 2),
            .picture(changed: false, at: 3), .encoded(qp: 23, at: 3),
            .picture(changed: false, at: 4),
            .picture(changed: false, at: 5),
        ])
        #expect(
            trace == [
                "encode changing", "refresh converging", "refresh converging", "refresh converging",
                "skip still", "skip still",
            ]
        )
    }

    @Test("a change encoded at a low QP needs no refresh")
    func goodChangeGoesStraightToStill() {
        let trace = Self.run([
            .picture(changed: true, at: 0), .encoded(qp: 20, at: 0),
            .picture(changed: false, at: 1),
        ])
        #expect(trace == ["encode changing", "skip still"])
    }

    @Test("refreshing stops at the convergence limit, whatever the QP")
    func convergenceIsBoundedInTime() {
        var events: [Event] = [.picture(changed: true, at: 0), .encoded(qp: 40, at: 0)]
        for t in UInt64(1)...40 { events += [.picture(changed: false, at: t), .encoded(qp: 40, at: t)] }
        let trace = Self.run(events)
        // 1 s is 30 frames: refreshes at frames 1...30 (frame 31 is 1.033 s after frame 1).
        #expect(trace.filter { $0.hasPrefix("refresh") }.count == 30)
        #expect(trace[31] == "skip still")
        #expect(trace.last == "skip still")
    }

    @Test("a still screen repeats its picture about once a second, and only then")
    func idleRepeatOncePerInterval() {
        var events: [Event] = [.picture(changed: true, at: 0), .encoded(qp: 18, at: 0)]
        for t in UInt64(1)...95 { events.append(.picture(changed: false, at: t)) }
        let trace = Self.run(events)
        let repeats = trace.enumerated().filter { $0.element.hasPrefix("idleRepeat") }.map(\.offset)
        // Still from frame 1, counted from the last picture encoded (frame 0): 1 s is frame 30,
        // then every 30 frames (a frame is 33.3 ms, so the 30th is 1.000 s after).
        #expect(repeats == [30, 60, 90])
        #expect(trace.filter { $0 == "skip still" }.count == 95 - 3)
    }

    @Test("a change after a long still period is encoded at once")
    func changeEndsStillImmediately() {
        var events: [Event] = [.picture(changed: true, at: 0), .encoded(qp: 18, at: 0)]
        for t in UInt64(1)...100 { events.append(.picture(changed: false, at: t)) }
        events.append(.picture(changed: true, at: 101))
        #expect(Self.run(events).last == "encode changing")
    }

    @Test("a key-frame request on a still screen is answered by the next picture, then refined")
    func keyFrameOnStillScreen() {
        var events: [Event] = [.picture(changed: true, at: 0), .encoded(qp: 18, at: 0)]
        for t in UInt64(1)...10 { events.append(.picture(changed: false, at: t)) }
        events += [
            .keyFrameRequest,
            .picture(changed: false, at: 11), .encoded(qp: 30, at: 11),
            .picture(changed: false, at: 12), .encoded(qp: 22, at: 12),
            .picture(changed: false, at: 13),
        ]
        let trace = Self.run(events)
        #expect(Array(trace.suffix(3)) == ["keyFrame converging", "refresh converging", "skip still"])
    }

    @Test("a key frame of a still picture is followed by one refresh, however low its QP")
    func keyFrameIsFollowedByARefresh() {
        var events: [Event] = [.picture(changed: true, at: 0), .encoded(qp: 10, at: 0)]
        for t in UInt64(1)...10 { events.append(.picture(changed: false, at: t)) }
        events += [
            .keyFrameRequest,
            .picture(changed: false, at: 11), .encoded(qp: 8, at: 11),
            .picture(changed: false, at: 12), .encoded(qp: 6, at: 12),
            .picture(changed: false, at: 13),
        ]
        let trace = Self.run(events)
        #expect(Array(trace.suffix(3)) == ["keyFrame converging", "refresh converging", "skip still"])
    }

    @Test("a key-frame request on a changing screen makes the next changed picture the IDR, once")
    func keyFrameOnChangingScreen() {
        let trace = Self.run([
            .picture(changed: true, at: 0), .encoded(qp: 30, at: 0),
            .keyFrameRequest,
            .picture(changed: true, at: 1), .encoded(qp: 30, at: 1),
            .picture(changed: true, at: 2),
        ])
        #expect(trace == ["encode changing", "keyFrame changing", "encode changing"])
    }

    @Test("without a QP (an encoder that reports none) convergence ends by time")
    func noQuantizerReported() {
        var events: [Event] = [.picture(changed: true, at: 0)]
        for t in UInt64(1)...32 { events.append(.picture(changed: false, at: t)) }
        let trace = Self.run(events)
        #expect(trace[1] == "refresh converging")
        #expect(trace[31] == "skip still")
        // Still from the last refresh (frame 30): the first idle repeat a second after it.
        #expect(trace.last == "skip still")
    }

    @Test("the defaults: converged at QP 12 or after 2 s of refreshes, a repeat every second")
    func defaults() {
        let defaults = FrameCadence.Configuration()
        #expect(defaults.convergedQP == 12)
        #expect(defaults.convergenceLimit == 2 * Self.second)
        #expect(defaults.idleRepeatInterval == Self.second)
        #expect(FrameCadence.idleRepeatQP == 51)
    }

    @Test("the thresholds are the configuration's")
    func configurationIsUsed() {
        let strict = FrameCadence.Configuration(convergedQP: 16, convergenceLimit: 2 * Self.second)
        let trace = Self.run(
            [
                .picture(changed: true, at: 0), .encoded(qp: 20, at: 0),
                .picture(changed: false, at: 1), .encoded(qp: 18, at: 1),
                .picture(changed: false, at: 2), .encoded(qp: 16, at: 2),
                .picture(changed: false, at: 3),
            ],
            strict
        )
        #expect(trace == ["encode changing", "refresh converging", "refresh converging", "skip still"])
    }

    @Test("a refresh wave on a still screen is encoded to its end, never as an idle repeat, then converges again")
    func refreshWaveOnAStillScreen() {
        let converged: [Event] = [
            .picture(changed: true, at: 0), .encoded(qp: 20, at: 0),
            .picture(changed: false, at: 1), .picture(changed: false, at: 40),
        ]
        let wave: [Event] = [
            .refreshing(at: 41), .encoded(qp: 22, at: 41),
            .refreshing(at: 42), .encoded(qp: 20, at: 42),
            .refreshing(at: 80), .encoded(qp: 20, at: 80),
        ]
        let after: [Event] = [
            .picture(changed: false, at: 81), .encoded(qp: 26, at: 81),
            .picture(changed: false, at: 82), .encoded(qp: 23, at: 82),
            .picture(changed: false, at: 83),
        ]
        let trace = Self.run(converged + wave + after)
        #expect(
            trace == [
                "encode changing", "skip still", "idleRepeat still",
                // Well past the idle interval, yet refreshed: a QP 51 repeat would code the wave's
                // column at 51; a low QP during the wave does not end it.
                "refresh converging", "refresh converging", "refresh converging",
                // After the wave, refreshed again until the QP is back at the target.
                "refresh converging", "refresh converging", "skip still",
            ]
        )
    }
}
