import Foundation
import Media
import Testing

@Suite("Audio mixer")
struct AudioMixerTests {
    typealias S = AudioTestSupport

    /// One simulated capture source: a signal cut into chunks of a repeating size pattern,
    /// each stamped with its own capture time.
    struct Feed {
        let source: AudioSource
        let rate: Int
        let channels: Int
        let signal: [Float]
        let pattern: [Int]
        let start: UInt64
        var frame = 0
        var step = 0

        init(
            _ source: AudioSource,
            rate: Int,
            channels: Int,
            signal: [Float],
            pattern: [Int],
            start: UInt64 = 10_000_000_000
        ) {
            self.source = source
            self.rate = rate
            self.channels = channels
            self.signal = signal
            self.pattern = pattern
            self.start = start
        }

        var totalFrames: Int { signal.count / channels }
        var done: Bool { frame >= totalFrames }
        func time(ofFrame n: Int) -> UInt64 { start + UInt64(n) * 1_000_000_000 / UInt64(rate) }
        /// When the next chunk is complete, i.e. when a live source would deliver it.
        var nextArrival: UInt64 { time(ofFrame: min(totalFrames, frame + pattern[step % pattern.count])) }

        mutating func pushNext(to mixer: AudioMixer) throws {
            let n = min(pattern[step % pattern.count], totalFrames - frame)
            let chunk = try AudioChunk(
                samples: Array(signal[(frame * channels)..<((frame + n) * channels)]),
                sampleRate: rate,
                channels: channels,
                captureTime: time(ofFrame: frame)
            )
            try mixer.push(chunk, from: source)
            frame += n
            step += 1
        }
    }

    /// Delivers the feeds' chunks in arrival order, draining the mixer after each.
    static func run(_ mixer: AudioMixer, _ feeds: [Feed]) throws -> [MixedFrame] {
        var feeds = feeds
        var frames: [MixedFrame] = []
        var frame = MixedFrame()
        while let next = feeds.indices.filter({ !feeds[$0].done }).min(by: {
            feeds[$0].nextArrival < feeds[$1].nextArrival
        }) {
            try feeds[next].pushNext(to: mixer)
            while mixer.mixNext(into: &frame) { frames.append(frame) }
        }
        return frames
    }

    static func expectContinuous(_ frames: [MixedFrame], sourceLocation: SourceLocation = #_sourceLocation) {
        for (a, b) in zip(frames, frames.dropFirst()) {
            #expect(b.captureTime - a.captureTime == 20_000_000, sourceLocation: sourceLocation)
            #expect(!b.followsGap, sourceLocation: sourceLocation)
        }
        #expect(frames.allSatisfy { $0.samples.count == 1920 }, sourceLocation: sourceLocation)
    }

    static let level = 0.5 / 2.0.squareRoot()

    @Test("app only (44.1 kHz stereo, uneven chunks): continuous 20 ms frames at the source's level and time")
    func appOnly() throws {
        let mixer = try AudioMixer()
        let signal = S.sine(frequency: 1000, sampleRate: 44_100, frames: 44_100, channels: 2)
        let feed = Feed(.app, rate: 44_100, channels: 2, signal: signal, pattern: [1024, 441, 37])
        let frames = try Self.run(mixer, [feed])
        #expect((48...50).contains(frames.count))
        Self.expectContinuous(frames)
        let first = try #require(frames.first)
        #expect(first.captureTime >= feed.start && first.captureTime - feed.start <= 21_000)
        let output = frames.dropFirst().flatMap(\.samples)
        #expect(abs(S.decibels(S.rms(output) / Self.level)) < 0.05)
        #expect(S.channel(output, 0, of: 2) == S.channel(output, 1, of: 2))
        #expect(mixer.statistics.framesOut == frames.count)
        #expect(mixer.statistics.mic == AudioMixer.SourceStatistics())
        #expect(mixer.statistics.app.stalls == 0 && mixer.statistics.app.framesDropped == 0)
    }

    @Test("mic only (32 kHz mono): upmixed to both channels, full level, continuous")
    func micOnly() throws {
        let mixer = try AudioMixer()
        let signal = S.sine(frequency: 300, sampleRate: 32_000, frames: 32_000)
        let frames = try Self.run(
            mixer,
            [Feed(.mic, rate: 32_000, channels: 1, signal: signal, pattern: [640, 333, 1111])]
        )
        #expect((48...50).contains(frames.count))
        Self.expectContinuous(frames)
        let output = frames.dropFirst().flatMap(\.samples)
        let left = S.channel(output, 0, of: 2)
        #expect(left == S.channel(output, 1, of: 2))
        #expect(abs(S.decibels(S.rms(left) / Self.level)) < 0.05)
        #expect(abs(S.zeroCrossingFrequency(left, sampleRate: 48_000) - 300) < 0.05)
    }

    @Test("a silent app leaves the mic at full level (not halved as (a+b)/2 would)")
    func silentAppKeepsMicLevel() throws {
        let mixer = try AudioMixer()
        let app = Feed(.app, rate: 44_100, channels: 2, signal: [Float](repeating: 0, count: 88_200), pattern: [1024])
        let mic = Feed(
            .mic,
            rate: 32_000,
            channels: 1,
            signal: S.sine(frequency: 440, sampleRate: 32_000, frames: 32_000),
            pattern: [480, 1024]
        )
        let frames = try Self.run(mixer, [app, mic])
        Self.expectContinuous(frames)
        let output = frames.dropFirst(2).dropLast(2).flatMap(\.samples)
        #expect(abs(S.decibels(S.rms(output) / Self.level)) < 0.5)
        #expect(mixer.statistics.limitedSamples == 0)
    }

    @Test("two sources at different rates and chunk sizes are both heard at their own levels")
    func bothTones() throws {
        let mixer = try AudioMixer()
        let app = Feed(
            .app,
            rate: 44_100,
            channels: 2,
            signal: S.sine(frequency: 1000, sampleRate: 44_100, frames: 44_100, channels: 2, amplitude: 0.3),
            pattern: [1024, 37]
        )
        let mic = Feed(
            .mic,
            rate: 32_000,
            channels: 1,
            signal: S.sine(frequency: 300, sampleRate: 32_000, frames: 32_000, amplitude: 0.3),
            pattern: [441, 3, 1024]
        )
        let frames = try Self.run(mixer, [app, mic])
        Self.expectContinuous(frames)
        let left = S.channel(frames.dropFirst(2).dropLast(2).flatMap(\.samples), 0, of: 2)
        #expect(abs(S.decibels(S.toneAmplitude(left[...], frequency: 1000, sampleRate: 48_000) / 0.3)) < 0.5)
        #expect(abs(S.decibels(S.toneAmplitude(left[...], frequency: 300, sampleRate: 48_000) / 0.3)) < 0.5)
        #expect(mixer.statistics.limitedSamples == 0)
        #expect(mixer.statistics.app.stalls == 0 && mixer.statistics.mic.stalls == 0)
    }

    @Test("two loud sources are soft-limited: never beyond ±1, sign kept, exactly limit(a + b)")
    func loudSourcesLimited() throws {
        let mixer = try AudioMixer()
        let a = S.sine(frequency: 440, sampleRate: 48_000, frames: 24_000, channels: 2, amplitude: 0.9)
        let b = S.sine(frequency: 440, sampleRate: 48_000, frames: 24_000, channels: 1, amplitude: 0.9)
        let frames = try Self.run(
            mixer,
            [
                Feed(.app, rate: 48_000, channels: 2, signal: a, pattern: [480]),
                Feed(.mic, rate: 48_000, channels: 1, signal: b, pattern: [480]),
            ]
        )
        #expect(frames.count == 25)
        let output = frames.flatMap(\.samples)
        let sum = (0..<output.count).map { a[$0] + b[$0 / 2] }
        #expect(output.allSatisfy { abs($0) <= 1.0 })
        #expect(output == sum.map(SoftLimiter.limit))
        for (x, s) in zip(output, sum) where abs(s) > 1e-3 {
            #expect((x > 0) == (s > 0))
        }
        // Peaks of 1.8 come out just under full scale, not halved and not wrapped.
        #expect((output.max() ?? 0) > 0.99 && (output.min() ?? 0) < -0.99)
        #expect(mixer.statistics.limitedSamples > 0)
    }

    @Test("limiting a buffer shapes exactly the samples past the knee, wherever they sit")
    func limiterBufferScan() {
        // Lengths around the eight-sample scan, with one loud sample or NaN at every position.
        for length in [0, 1, 7, 8, 9, 16, 23, 1920] {
            let quiet = (0..<length).map { Float($0 % 7) * 0.12 - 0.36 }
            var untouched = quiet
            let none = untouched.withUnsafeMutableBufferPointer { SoftLimiter.apply($0) }
            #expect(none == 0 && untouched == quiet)
            for position in Set([0, length / 2, length - 1]) where position >= 0 && position < length {
                for odd: Float in [1.7, -2.5, .nan] {
                    var samples = quiet
                    samples[position] = odd
                    if position + 3 < length { samples[position + 3] = 0.95 }
                    let expected = samples.map(SoftLimiter.limit)
                    let count = samples.withUnsafeMutableBufferPointer { SoftLimiter.apply($0) }
                    #expect(count == (position + 3 < length ? 2 : 1), "length \(length), at \(position)")
                    #expect(samples.map(\.bitPattern) == expected.map(\.bitPattern), "length \(length), at \(position)")
                }
            }
        }
    }

    @Test("the limiter passes normal levels untouched and is continuous at the knee")
    func limiterCurve() {
        for x: Float in [0, 0.1, -0.5, 0.89, -SoftLimiter.knee] {
            #expect(SoftLimiter.limit(x) == x)
        }
        let justAbove = SoftLimiter.limit(SoftLimiter.knee + 1e-4)
        #expect(justAbove > SoftLimiter.knee && justAbove < SoftLimiter.knee + 1.1e-4)
        #expect(SoftLimiter.limit(1.5) < 1 && SoftLimiter.limit(1.5) > 0.98)
        #expect(SoftLimiter.limit(-100) >= -1 && SoftLimiter.limit(-100) < -0.999)
        #expect(SoftLimiter.limit(.infinity) == 1)
        #expect(SoftLimiter.limit(.nan) == 0)
        // Monotonic over the shaped range.
        let curve = stride(from: Float(0.85), through: 4, by: 0.01).map(SoftLimiter.limit)
        #expect(zip(curve, curve.dropFirst()).allSatisfy { $0 <= $1 })
    }

    @Test("a stalled mic delays the app by at most the allowance, once; its return is heard in step")
    func stalledMic() throws {
        let mixer = try AudioMixer()
        let start: UInt64 = 10_000_000_000
        let ms: UInt64 = 1_000_000
        let app = S.sine(frequency: 1000, sampleRate: 48_000, frames: 57_600, channels: 2, amplitude: 0.3)  // 1.2 s
        let mic = S.sine(frequency: 300, sampleRate: 48_000, frames: 57_600, amplitude: 0.3)
        var frames: [MixedFrame] = []
        var frame = MixedFrame()
        var worstLag: UInt64 = 0
        var lagDuringStall: [UInt64] = []
        for k in 0..<120 {  // 10 ms chunks
            let time = start + UInt64(k) * 10 * ms
            let slice = (k * 480)..<((k + 1) * 480)
            try mixer.push(
                AudioChunk(
                    samples: Array(app[(slice.lowerBound * 2)..<(slice.upperBound * 2)]),
                    sampleRate: 48_000,
                    channels: 2,
                    captureTime: time
                ),
                from: .app
            )
            let micPresent = k < 30 || k >= 80  // silent between 300 and 800 ms
            if micPresent {
                try mixer.push(
                    AudioChunk(samples: Array(mic[slice]), sampleRate: 48_000, channels: 1, captureTime: time),
                    from: .mic
                )
            }
            while mixer.mixNext(into: &frame) { frames.append(frame) }
            let appEnd = time + 10 * ms
            let emittedEnd = frames.last.map { $0.captureTime + 20 * ms } ?? start
            worstLag = max(worstLag, appEnd - emittedEnd)
            if (40..<80).contains(k) { lagDuringStall.append(appEnd - emittedEnd) }
        }
        #expect(worstLag <= 80 * ms, "app held back \(worstLag / ms) ms")
        // Once the stall is detected the mic is not waited for: the app flows with no extra delay.
        #expect(lagDuringStall.allSatisfy { $0 < 20 * ms })
        Self.expectContinuous(frames)
        #expect(mixer.statistics.mic.stalls == 1)
        #expect(mixer.statistics.mic.underruns > 0)
        #expect(mixer.statistics.app.framesDropped == 0)

        func micLevel(_ range: Range<UInt64>) -> Double {
            let picked = frames.filter { range.contains($0.captureTime - start) }.flatMap(\.samples)
            return S.toneAmplitude(S.channel(picked, 0, of: 2)[...], frequency: 300, sampleRate: 48_000)
        }
        #expect(abs(S.decibels(micLevel((0 * ms)..<(280 * ms)) / 0.3)) < 0.5)
        #expect(micLevel((400 * ms)..<(780 * ms)) < 0.003)
        #expect(abs(S.decibels(micLevel((820 * ms)..<(1100 * ms)) / 0.3)) < 0.5)
    }

    @Test("a stalled source's backlog is dropped, not played out as growing latency")
    func backlogDropped() throws {
        let mixer = try AudioMixer()
        let start: UInt64 = 10_000_000_000
        let ms: UInt64 = 1_000_000
        var frame = MixedFrame()
        var micBacklog: [Int] = []
        func micChunk(_ k: Int) throws -> AudioChunk {
            try AudioChunk(
                samples: [Float](repeating: 0.1, count: 480),
                sampleRate: 48_000,
                channels: 1,
                captureTime: start + UInt64(k) * 10 * ms
            )
        }
        for k in 0..<100 {
            let appChunk = try AudioChunk(
                samples: [Float](repeating: 0.2, count: 960),
                sampleRate: 48_000,
                channels: 2,
                captureTime: start + UInt64(k) * 10 * ms
            )
            try mixer.push(appChunk, from: .app)
            if k < 20 || k >= 50 {
                try mixer.push(micChunk(k), from: .mic)
            }
            if k == 40 {
                // The mic's chunks 20…39 arrive late, all at once (a delivery stall, not silence).
                for late in 20..<40 { try mixer.push(micChunk(late), from: .mic) }
            }
            while mixer.mixNext(into: &frame) {}
            micBacklog.append(mixer.queuedFrames(of: .mic))
        }
        // Most of the 200 ms backlog was stamped before the output position: dropped.
        #expect(mixer.statistics.mic.framesDroppedLate >= 120 * 48)
        // What stays queued never exceeds a frame plus a chunk plus the allowance.
        #expect(micBacklog.allSatisfy { $0 <= (20 + 10 + 60) * 48 })
        #expect(micBacklog.suffix(40).allSatisfy { $0 <= 30 * 48 })
    }

    @Test("FIFOs are bounded at 500 ms: the oldest audio is dropped and counted")
    func fifoBounded() throws {
        let mixer = try AudioMixer()
        for k in 0..<3 {
            let chunk = try AudioChunk(
                samples: [Float](repeating: 0.1, count: 48_000),
                sampleRate: 48_000,
                channels: 2,
                captureTime: 1_000_000_000 + UInt64(k) * 500_000_000
            )
            try mixer.push(chunk, from: .app)
        }
        #expect(mixer.queuedFrames(of: .app) == 24_000)
        #expect(mixer.statistics.app.framesDroppedOverflow == 48_000)
        var frames: [MixedFrame] = []
        while let frame = mixer.nextFrame() { frames.append(frame) }
        #expect(frames.count == 25)
        // The queue now starts 1 s after the first chunk: output time says so.
        #expect(frames.first?.captureTime == 2_000_000_000)
    }

    @Test("a long pause of every source jumps the timeline (marked); a short one is played as silence")
    func gaps() throws {
        let mixer = try AudioMixer()
        let ms: UInt64 = 1_000_000
        func push(at time: UInt64, frames: Int) throws {
            try mixer.push(
                AudioChunk(
                    samples: [Float](repeating: 0.25, count: frames * 2),
                    sampleRate: 48_000,
                    channels: 2,
                    captureTime: time
                ),
                from: .app
            )
        }
        var frames: [MixedFrame] = []
        try push(at: 1000 * ms, frames: 4800)  // 1.000–1.100 s
        while let frame = mixer.nextFrame() { frames.append(frame) }
        try push(at: 1130 * ms, frames: 4800)  // 30 ms gap: shorter than the allowance
        while let frame = mixer.nextFrame() { frames.append(frame) }
        #expect(frames.count == 11)
        Self.expectContinuous(frames)
        // The gap 1.100–1.130 is silence: all of the frame at 1.100, half of the one at 1.120.
        #expect(frames[5].captureTime == 1100 * ms)
        #expect(frames[5].samples.allSatisfy { $0 == 0 })
        #expect(frames[6].samples[..<960].allSatisfy { $0 == 0 })
        #expect(frames[6].samples[960...].allSatisfy { $0 == 0.25 })
        #expect(mixer.statistics.app.silenceFramesInserted == 0)  // the FIFO was empty: no fill needed

        try push(at: 5000 * ms, frames: 960)
        let jumped = try #require(mixer.nextFrame())
        #expect(jumped.followsGap)
        #expect(jumped.captureTime == 5000 * ms)
        #expect(mixer.statistics.timelineJumps == 1)
    }

    @Test("a source that changes rate and layout mid-stream gets a new resampler and keeps its timeline")
    func formatChange() throws {
        let mixer = try AudioMixer()
        let first = Feed(
            .app,
            rate: 44_100,
            channels: 2,
            signal: S.sine(frequency: 500, sampleRate: 44_100, frames: 22_050, channels: 2),
            pattern: [1024]
        )
        var frames = try Self.run(mixer, [first])
        let second = Feed(
            .app,
            rate: 48_000,
            channels: 1,
            signal: S.sine(frequency: 500, sampleRate: 48_000, frames: 24_000, startFrame: 24_000),
            pattern: [480],
            start: first.start + 500_000_000
        )
        frames += try Self.run(mixer, [second])
        Self.expectContinuous(frames)
        #expect(mixer.statistics.app.formatChanges == 1)
        #expect(mixer.statistics.timelineJumps == 0)
        #expect((48...50).contains(frames.count))
    }

    @Test("a removed source is no longer waited for")
    func removeSource() throws {
        let mixer = try AudioMixer()
        let chunk = try AudioChunk(
            samples: [Float](repeating: 0.1, count: 960),
            sampleRate: 48_000,
            channels: 1,
            captureTime: 0
        )
        try mixer.push(chunk, from: .mic)
        mixer.remove(.mic)
        #expect(mixer.queuedFrames(of: .mic) == 0)
        try mixer.push(
            AudioChunk(samples: [Float](repeating: 0.1, count: 1920), sampleRate: 48_000, channels: 2, captureTime: 0),
            from: .app
        )
        let frame = try #require(mixer.nextFrame())
        #expect(frame.samples.allSatisfy { abs($0 - 0.1) < 1e-7 })
        #expect(mixer.statistics.mic.stalls == 0)
    }

    @Test("5.1 and other layouts are mapped to stereo as documented")
    func channelMapping() {
        let h: Float = 0.707_106_77
        let surround: [Float] = [0.1, 0.2, 0.3, 0.9, 0.4, 0.5]
        let stereo = ChannelMapper.toStereo(surround, channels: 6)
        #expect(stereo == [0.1 + h * 0.3 + h * 0.4, 0.2 + h * 0.3 + h * 0.5])
        #expect(ChannelMapper.toStereo([0.25, -0.5], channels: 1) == [0.25, 0.25, -0.5, -0.5])
        #expect(ChannelMapper.toStereo([0.25, -0.5], channels: 2) == [0.25, -0.5])
        #expect(ChannelMapper.toStereo([0.2, 0.4, 0.6, 0.8], channels: 4) == [0.5, 0.5])
        let sevenOne: [Float] = [1, 0, 0, 1, 0, 0, 1, 0]
        #expect(ChannelMapper.toStereo(sevenOne, channels: 8) == [1 + h, 0])
    }

    @Test("a 5.1 source goes through the mixer down-mixed")
    func surroundThroughMixer() throws {
        let mixer = try AudioMixer()
        let frames = 960
        var samples: [Float] = []
        for _ in 0..<frames { samples += [0.1, 0.2, 0.3, 0.9, 0.4, 0.5] }
        try mixer.push(AudioChunk(samples: samples, sampleRate: 48_000, channels: 6, captureTime: 0), from: .app)
        let frame = try #require(mixer.nextFrame())
        let h: Float = 0.707_106_77
        #expect(frame.samples[0] == 0.1 + h * 0.3 + h * 0.4)
        #expect(frame.samples[1] == 0.2 + h * 0.3 + h * 0.5)
    }

    @Test("bad input and settings are clear errors")
    func errors() throws {
        let mixer = try AudioMixer()
        let long = try AudioChunk(
            samples: [Float](repeating: 0, count: 44_101),
            sampleRate: 44_100,
            channels: 1,
            captureTime: 0
        )
        #expect {
            try mixer.push(long, from: .mic)
        } throws: { error in
            (error as? MediaError)?.message == "mic chunk of 44101 frames at 44100 Hz is longer than one second"
        }
        var config = AudioMixer.Configuration()
        config.frameMilliseconds = 7
        #expect {
            _ = try AudioMixer(configuration: config)
        } throws: { error in
            (error as? MediaError)?.message == "mixer frame duration 7 ms is not 10, 20, 40 or 60"
        }
        config = AudioMixer.Configuration()
        config.fifoCapacityMilliseconds = 50
        #expect {
            _ = try AudioMixer(configuration: config)
        } throws: { error in
            (error as? MediaError)?.code == .invalidSetting
                && (error as? MediaError)?.message.contains("FIFO capacity 50 ms") == true
        }
        // A chunk whose fields were changed after it was made is checked again, not trusted.
        var broken = try AudioChunk(samples: [0, 0], sampleRate: 48_000, channels: 2, captureTime: 0)
        broken.sampleRate = 0
        #expect {
            try mixer.push(broken, from: .app)
        } throws: { error in
            (error as? MediaError)?.message == "sample rate 0 Hz is outside 8000...192000"
        }
        broken.sampleRate = 48_000
        broken.channels = 0
        #expect {
            try mixer.push(broken, from: .app)
        } throws: { error in
            (error as? MediaError)?.message == "channel count 0 is outside 1...8"
        }
        // Absurd capture times neither trap nor stop the mixer.
        try mixer.push(
            AudioChunk(
                samples: [Float](repeating: 0.1, count: 1920),
                sampleRate: 48_000,
                channels: 2,
                captureTime: .max - 5
            ),
            from: .app
        )
        #expect(mixer.nextFrame() != nil)
        try mixer.push(
            AudioChunk(samples: [Float](repeating: 0.1, count: 960), sampleRate: 48_000, channels: 1, captureTime: 0),
            from: .mic
        )
        _ = mixer.nextFrame()
    }
}
