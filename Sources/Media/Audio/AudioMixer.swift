/// Mixes the app and microphone sources into one 48 kHz stereo stream of fixed-size frames
/// (20 ms by default) for the Opus encoder. This replaces seed 002's `(a + b) / 2`, which halves
/// the level whenever one source is silent.
///
/// **Per source** (`MixerLane`): to stereo → 48 kHz through its own resampler (state kept
/// between chunks) → its own FIFO, bounded at `fifoCapacityMilliseconds` (oldest dropped and
/// counted), placed on one timeline by capture time.
///
/// **Summing.** Samples are added at full level and the sum goes through `SoftLimiter`: a lone
/// source comes out exactly as it went in, two loud ones are shaped below ±1.0, never wrapped.
///
/// **When a frame is emitted** (`mixNext`): as soon as every source heard from has audio up to
/// the frame's end. A source absent from the start is never waited for (app-only and mic-only
/// both just work). If a source falls behind while another already has a frame *plus the
/// jitter allowance* queued, the mixer stops waiting: the frame goes out with the missing part
/// as silence, the source is marked stalled and not waited for again until its next chunk
/// arrives. So a stall delays the other source by at most the allowance, once.
///
/// **When a stalled source comes back**, its audio is placed by capture time: what is stamped
/// before the output position is late and dropped (counted), so a backlog never becomes
/// latency; audio stamped "now" plays in step with the other source.
///
/// **When everything stops** (both sources stalled or absent) nothing is emitted. If audio then
/// resumes more than the allowance after the timeline's position, the timeline jumps there and
/// the frame says `followsGap`; a shorter gap is played out as silence so the stream stays
/// continuous.
///
/// **Thread safety.** Not `Sendable` and not locked: one task owns the mixer and calls `push`
/// for both sources and `mixNext` (ReplayKit-style callbacks on other threads hop into that
/// task, e.g. through an `AsyncStream` or an actor that owns the mixer).
public final class AudioMixer {
    public struct Configuration: Sendable, Equatable {
        /// Output frame duration: 10, 20, 40 or 60 ms (what Opus and RFC 7587 allow beyond 2.5/5).
        public var frameMilliseconds = 20
        /// How long a source that falls behind may hold the other back. 60 ms covers the
        /// burstiness of ReplayKit-style delivery (chunks of up to ~40 ms arriving in pairs)
        /// while staying well below what a viewer notices as lag.
        public var jitterAllowanceMilliseconds = 60
        /// FIFO bound per source: latency and memory cannot grow past it.
        public var fifoCapacityMilliseconds = 500
        /// Timestamp error treated as jitter rather than a gap or overlap.
        public var timestampToleranceMilliseconds = 10
        public var resamplerQuality = AudioResampler.defaultQuality

        public init() {}
    }

    public static let sampleRate = 48_000
    /// One push may carry at most one second of audio: bounds the work and scratch memory a
    /// single chunk can demand.
    public static let maxChunkDuration: UInt64 = 1_000_000_000

    public let configuration: Configuration
    /// Samples per channel in each output frame.
    public let frameSize: Int
    public private(set) var statistics = Statistics()

    private let allowance: Int64
    private let lanes: [MixerLane]
    private var clock = SampleClock()
    /// Timeline position of the next output frame; nil until the first frame.
    private var position: Int64?

    public init(configuration: Configuration = Configuration()) throws(MediaError) {
        let c = configuration
        guard [10, 20, 40, 60].contains(c.frameMilliseconds) else {
            throw MediaError(.invalidSetting, "mixer frame duration \(c.frameMilliseconds) ms is not 10, 20, 40 or 60")
        }
        guard (0...1000).contains(c.jitterAllowanceMilliseconds) else {
            throw MediaError(
                .invalidSetting,
                "mixer jitter allowance \(c.jitterAllowanceMilliseconds) ms is outside 0...1000"
            )
        }
        guard (0...100).contains(c.timestampToleranceMilliseconds) else {
            throw MediaError(
                .invalidSetting,
                "mixer timestamp tolerance \(c.timestampToleranceMilliseconds) ms is outside 0...100"
            )
        }
        let minimumCapacity = c.jitterAllowanceMilliseconds + 2 * c.frameMilliseconds
        guard (minimumCapacity...10_000).contains(c.fifoCapacityMilliseconds) else {
            throw MediaError(
                .invalidSetting,
                "mixer FIFO capacity \(c.fifoCapacityMilliseconds) ms is outside \(minimumCapacity)...10000"
                    + " (it must hold the jitter allowance plus two frames)"
            )
        }
        guard AudioResampler.qualityRange.contains(c.resamplerQuality) else {
            throw MediaError(
                .invalidSetting,
                "resampler quality \(c.resamplerQuality) is outside \(AudioResampler.qualityRange)"
            )
        }
        let perMillisecond = Self.sampleRate / 1000
        self.configuration = c
        self.frameSize = c.frameMilliseconds * perMillisecond
        self.allowance = Int64(c.jitterAllowanceMilliseconds * perMillisecond)
        self.lanes = AudioSource.allCases.map {
            MixerLane(
                source: $0,
                capacityFrames: c.fifoCapacityMilliseconds * perMillisecond,
                toleranceFrames: c.timestampToleranceMilliseconds * perMillisecond,
                resamplerQuality: c.resamplerQuality
            )
        }
    }

    /// Queues a chunk from `source` (any supported rate, 1–8 channels, any length up to one
    /// second). Allocates nothing once the source's scratch buffers have grown to its chunk size.
    public func push(_ chunk: AudioChunk, from source: AudioSource) throws(MediaError) {
        try chunk.validate()
        guard chunk.duration <= Self.maxChunkDuration else {
            throw MediaError(
                .invalidAudio,
                "\(source) chunk of \(chunk.frameCount) frames at \(chunk.sampleRate) Hz is longer than one second"
            )
        }
        let lane = lanes[source.rawValue]
        defer { statistics[source] = lane.statistics }
        try lane.push(chunk, clock: &clock)
    }

    /// Writes the next frame into `frame` (reusing its storage) and returns true, or returns
    /// false when the sources do not yet allow one. Call it until it returns false after each push.
    public func mixNext(into frame: inout MixedFrame) -> Bool {
        var earliest: Int64?
        for lane in lanes where lane.fifo.count > 0 {
            earliest = min(earliest ?? lane.headPosition, lane.headPosition)
        }
        guard let earliest else { return false }
        var start = position ?? earliest
        var jumped = false
        if earliest - start > allowance {
            start = earliest
            jumped = true
        }
        let end = start + Int64(frameSize)

        var everyoneReady = true
        var someoneFarAhead = false
        for lane in lanes where lane.anchored {
            if !lane.stalled && lane.endPosition < end { everyoneReady = false }
            if lane.fifo.count > 0 && lane.endPosition >= end + allowance { someoneFarAhead = true }
        }
        guard everyoneReady || someoneFarAhead else { return false }
        for lane in lanes where lane.anchored && !lane.stalled && lane.endPosition < end {
            lane.stalled = true
            lane.statistics.stalls += 1
        }

        frame.samples.removeAll(keepingCapacity: true)
        frame.samples.append(contentsOf: repeatElement(0, count: frameSize * 2))
        let shaped = frame.samples.withUnsafeMutableBufferPointer { output in
            for lane in lanes {
                _ = lane.consume(windowStart: start, frames: frameSize, into: output)
            }
            return SoftLimiter.apply(output)
        }
        frame.captureTime = clock.time(of: start)
        frame.followsGap = jumped
        position = end

        statistics.framesOut += 1
        statistics.limitedSamples += shaped
        if frame.followsGap { statistics.timelineJumps += 1 }
        for lane in lanes { statistics[lane.source] = lane.statistics }
        return true
    }

    /// The next frame as a new value, or nil. Allocates: for tests and cold paths.
    public func nextFrame() -> MixedFrame? {
        var frame = MixedFrame()
        return mixNext(into: &frame) ? frame : nil
    }

    /// Audio queued for `source`, in 48 kHz frames.
    public func queuedFrames(of source: AudioSource) -> Int {
        lanes[source.rawValue].fifo.count
    }

    /// Forgets `source` (say, the user turned the microphone off): its queue and filter state
    /// go, and the mixer stops waiting for it until it pushes again.
    public func remove(_ source: AudioSource) {
        lanes[source.rawValue].reset()
    }
}
