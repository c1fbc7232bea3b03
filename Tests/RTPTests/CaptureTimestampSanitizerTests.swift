import Testing

@testable import RTP

@Suite("Capture timestamp sanitizer (the low-fps bug)")
struct CaptureTimestampSanitizerTests {
    static let frameInterval: UInt64 = 33_333_333
    static let frames = 300
    static let start: UInt64 = 5_000_000_000

    /// One frame as the source reports it.
    struct Input {
        var value: Int64
        var timescale: Int32
    }

    /// 30 fps arrivals on the monotonic clock with ±3 ms of seeded jitter.
    static func arrivals(count: Int = frames, seed: UInt64 = 1) -> [UInt64] {
        var generator = SeededGenerator(seed: seed)
        return (0..<count).map { index in
            let jitter = Int64.random(in: -3_000_000...3_000_000, using: &generator)
            return UInt64(Int64(start + UInt64(index) * frameInterval) + jitter)
        }
    }

    /// Sane input: capture times 33.333 ms apart in nanoseconds, on the source's own clock.
    static func sane(_ index: Int) -> Input {
        Input(value: 777_000_000_000 + Int64(index) * Int64(frameInterval), timescale: 1_000_000_000)
    }

    struct Pathology: Sendable, CustomTestStringConvertible {
        var name: String
        var input: @Sendable (Int) -> Input
        var testDescription: String { name }
    }

    static let pathologies: [Pathology] = [
        Pathology(name: "seed 001: CMTimeMake(frameTime += 1000, 1000)") { index in
            Input(value: Int64(index + 1) * 1000, timescale: 1000)
        },
        Pathology(name: "milliseconds sent as a frame counter") { index in
            Input(value: Int64(index), timescale: 1000)
        },
        Pathology(name: "90 kHz ticks labelled as milliseconds") { index in
            Input(value: Int64(index) * 3000, timescale: 1000)
        },
        Pathology(name: "every fifth frame repeats the previous timestamp") { index in
            sane(index % 5 == 4 ? index - 1 : index)
        },
        Pathology(name: "single duplicate") { index in
            sane(index == 150 ? 149 : index)
        },
        Pathology(name: "single frame stamped 5 s in the past") { index in
            var input = sane(index)
            if index == 100 { input.value -= 5_000_000_000 }
            return input
        },
        Pathology(name: "timeline restarts 10 s earlier") { index in
            var input = sane(index)
            if index >= 100 { input.value -= 10_000_000_000 }
            return input
        },
        Pathology(name: "clock stuck after frame 50") { index in
            sane(min(index, 50))
        },
        Pathology(name: "jump one hour ahead at frame 100") { index in
            var input = sane(index)
            if index >= 100 { input.value += 3_600_000_000_000 }
            return input
        },
        Pathology(name: "single frame jumps 2 s ahead") { index in
            var input = sane(index)
            if index == 120 { input.value += 2_000_000_000 }
            return input
        },
        Pathology(name: "timescale zero (invalid CMTime)") { index in
            Input(value: Int64(index), timescale: 0)
        },
        Pathology(name: "value overflows when scaled to nanoseconds") { index in
            Input(value: Int64.max - Int64(frames - index), timescale: 1)
        },
        Pathology(name: "sane input with jitter") { index in sane(index) },
    ]

    static func run(
        _ input: (Int) -> Input,
        arrivals: [UInt64] = arrivals()
    ) -> (outputs: [CaptureTimestampSanitizer.Output], sanitizer: CaptureTimestampSanitizer) {
        var sanitizer = CaptureTimestampSanitizer()
        var outputs: [CaptureTimestampSanitizer.Output] = []
        for (index, arrival) in arrivals.enumerated() {
            let frame = input(index)
            outputs.append(sanitizer.sanitize(value: frame.value, timescale: frame.timescale, arrival: arrival))
        }
        return (outputs, sanitizer)
    }

    static func rtpTimestamps(_ outputs: [CaptureTimestampSanitizer.Output]) throws -> [UInt32] {
        let clock = try RTPClock(clockRate: 90_000, origin: start, timestampBase: 0xFFFF_0000)
        return outputs.map { clock.timestamp(at: $0.captureTime) }
    }

    @Test("fed at 30 fps, RTP timestamps advance by about 3000 per frame", arguments: pathologies)
    func advancesAt30fps(pathology: Pathology) throws {
        let (outputs, _) = Self.run(pathology.input)
        let timestamps = try Self.rtpTimestamps(outputs)
        let steps = zip(timestamps.dropFirst(), timestamps).map { $0 &- $1 }
        // Every step positive (as a wrapping difference) and none absurd.
        for (index, step) in steps.enumerated() {
            #expect(step > 0 && step < 9000, "step \(index): \(step) ticks, \(outputs[index + 1].reason)")
        }
        let total = Double(timestamps[timestamps.count - 1] &- timestamps[0])
        let average = total / Double(steps.count)
        #expect(abs(average - 3000) <= 300, "average \(average) ticks per frame")
    }

    @Test("output strictly increases, even when arrivals stall or run backwards")
    func strictlyIncreasing() {
        var sanitizer = CaptureTimestampSanitizer()
        var previous: UInt64?
        let arrivals: [UInt64] = [1_000, 1_000, 1_000, 500, 400, 2_000_000, 2_000_000, 0]
        for (index, arrival) in arrivals.enumerated() {
            let output = sanitizer.sanitize(value: 42, timescale: 1000, arrival: arrival)
            if let previous {
                #expect(output.captureTime >= previous + 11_112, "frame \(index)")
            }
            previous = output.captureTime
        }
        #expect(sanitizer.statistics.clamped >= 5)
    }

    @Test("sane input keeps its own spacing once locked, despite arrival jitter")
    func saneKeepsSpacing() throws {
        let (outputs, sanitizer) = Self.run(Self.sane)
        let probation = sanitizer.configuration.probationFrames
        #expect(outputs[probation - 1].event == .locked)
        #expect(outputs[..<(probation - 1)].allSatisfy { $0.reason == .acquiring })
        #expect(outputs[(probation - 1)...].allSatisfy { $0.reason == .accepted })
        #expect(sanitizer.isLocked)
        for index in probation..<outputs.count {
            #expect(outputs[index].captureTime - outputs[index - 1].captureTime == Self.frameInterval)
        }
        let timestamps = try Self.rtpTimestamps(outputs)
        for index in probation..<timestamps.count {
            let step = timestamps[index] &- timestamps[index - 1]
            #expect(step == 2999 || step == 3000)
        }
    }

    @Test("seed bug and frame counters are never trusted")
    func wrongScaleNeverLocks() {
        let seed = Self.run(Self.pathologies[0].input).sanitizer
        #expect(seed.statistics.locks == 0)
        #expect(seed.statistics.aheadOfArrival == Self.frames - 1)
        let counter = Self.run(Self.pathologies[1].input).sanitizer
        #expect(counter.statistics.locks == 0)
        #expect(counter.statistics.behindArrival > 0)
        #expect(counter.statistics.accepted == 0)
    }

    @Test("a jump ahead drops the lock and re-locks on the new timeline after a longer probation")
    func relocksAfterJump() {
        let (outputs, sanitizer) = Self.run(Self.pathologies[8].input)
        #expect(outputs[100].reason == .aheadOfArrival)
        #expect(outputs[102].event == .unlocked(.aheadOfArrival))
        #expect(sanitizer.statistics.locks == 2)
        #expect(sanitizer.statistics.unlocks == 1)
        // Second probation is twice the first: 16 frames starting at frame 103.
        #expect(outputs[118].event == .locked)
        #expect(outputs[119...].allSatisfy { $0.reason == .accepted })
    }

    @Test("isolated glitches are replaced without losing the lock")
    func glitchesKeepLock() {
        let duplicate = Self.run(Self.pathologies[4].input)
        #expect(duplicate.outputs[150].reason == .repeated)
        #expect(duplicate.sanitizer.statistics.unlocks == 0)
        let backwards = Self.run(Self.pathologies[5].input)
        #expect(backwards.outputs[100].reason == .wentBackwards)
        #expect(backwards.outputs[101].reason == .accepted)
        #expect(backwards.sanitizer.statistics.unlocks == 0)
        let ahead = Self.run(Self.pathologies[9].input)
        #expect(ahead.outputs[120].reason == .aheadOfArrival)
        #expect(ahead.outputs[121].reason == .wentBackwards)
        #expect(ahead.outputs[122].reason == .accepted)
        #expect(ahead.sanitizer.statistics.unlocks == 0)
    }

    @Test("a stuck clock is detected as repeats and dropped")
    func stuck() {
        let (outputs, sanitizer) = Self.run(Self.pathologies[7].input)
        #expect(outputs[51].reason == .repeated)
        #expect(outputs[53].event == .unlocked(.repeated))
        #expect(outputs[60...].allSatisfy { $0.reason == .repeated && !$0.usedInput })
        #expect(!sanitizer.isLocked)
    }

    @Test("slow clock drift (100 ppm for 10 minutes) is absorbed without losing the lock")
    func drift() {
        let count = 18_000
        let arrivals = (0..<count).map { Self.start + UInt64($0) * Self.frameInterval }
        let (outputs, sanitizer) = Self.run(
            { index in
                Input(value: Int64(Double(index) * Double(Self.frameInterval) * 1.0001), timescale: 1_000_000_000)
            },
            arrivals: arrivals
        )
        #expect(sanitizer.statistics.unlocks == 0)
        #expect(sanitizer.statistics.accepted == count - 7)
        // The input ran 60 ms ahead of arrival by the end; the output stays at the 20 ms dead band.
        let worst = zip(outputs, arrivals).map { abs(Int64($0.captureTime) - Int64($1)) }.max() ?? 0
        #expect(worst < 21_000_000, "an output was \(worst) ns from its arrival")
    }

    @Test("missing timestamps use arrival time")
    func missing() {
        var sanitizer = CaptureTimestampSanitizer()
        let output = sanitizer.sanitize(arrival: 9_000)
        #expect(output == .init(captureTime: 9_000, reason: .missing, wasClamped: false, event: nil))
    }

    @Test("converts value/timescale to nanoseconds without overflow")
    func conversion() {
        #expect(CaptureTimestampSanitizer.nanoseconds(value: 20, timescale: 600) == 33_333_333)
        #expect(CaptureTimestampSanitizer.nanoseconds(value: 1, timescale: 1000) == 1_000_000)
        #expect(CaptureTimestampSanitizer.nanoseconds(value: -3, timescale: 2) == -1_500_000_000)
        #expect(CaptureTimestampSanitizer.nanoseconds(value: 1, timescale: 0) == nil)
        #expect(CaptureTimestampSanitizer.nanoseconds(value: 1, timescale: -1) == nil)
        #expect(CaptureTimestampSanitizer.nanoseconds(value: .max, timescale: 1) == nil)
        #expect(CaptureTimestampSanitizer.nanoseconds(value: .max, timescale: .max) == 4_294_967_298_000_000_000)
    }

    @Test("rejects nonsensical configurations")
    func configuration() {
        #expect(throws: RTPError.self) {
            try CaptureTimestampSanitizer(configuration: .init(probationFrames: 1))
        }
        #expect(throws: RTPError.self) {
            try CaptureTimestampSanitizer(configuration: .init(tolerance: 10, driftDeadband: 20))
        }
        #expect(throws: RTPError.self) {
            try CaptureTimestampSanitizer(configuration: .init(clockRate: 0))
        }
    }
}

extension CaptureTimestampSanitizerTests {
    @Test("a new source earns trust afresh: probation again, outputs still increasing")
    func restartSourceStartsProbationAgain() {
        var sanitizer = CaptureTimestampSanitizer()
        let interval: UInt64 = 33_333_333
        var last: UInt64 = 0
        // Source A: input = arrival, locks after the probation.
        for index in 0..<20 {
            let arrival = 10_000_000_000 + UInt64(index) * interval
            last = sanitizer.sanitize(value: Int64(arrival), timescale: 1_000_000_000, arrival: arrival).captureTime
        }
        #expect(sanitizer.isLocked)
        // Source B: its own clock, 5 s behind A's, arriving right after A's last frame.
        sanitizer.restartSource()
        #expect(!sanitizer.isLocked)
        var reasons: [CaptureTimestampSanitizer.Reason] = []
        for index in 0..<20 {
            let arrival = 10_000_000_000 + UInt64(20 + index) * interval
            let input = arrival - 5_000_000_000
            let output = sanitizer.sanitize(value: Int64(input), timescale: 1_000_000_000, arrival: arrival)
            #expect(output.captureTime > last, "frame \(index) went back")
            #expect(output.captureTime + 1_000_000 >= arrival - 50_000_000, "frame \(index) mapped 5 s back")
            last = output.captureTime
            reasons.append(output.reason)
        }
        // Without the restart, B's input would be rejected as 5 s behind; with it B locks on
        // its own offset after the probation.
        #expect(reasons.prefix(7).allSatisfy { $0 == .acquiring }, "\(reasons)")
        #expect(reasons.suffix(12).allSatisfy { $0 == .accepted }, "\(reasons)")
    }
}
