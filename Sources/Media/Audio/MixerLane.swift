/// One source's path inside `AudioMixer`: channel mapping → its own resampler (state kept
/// between chunks) → its own bounded FIFO, placed on the mixer's 48 kHz sample timeline.
///
/// Mono stays mono through the resampler and is duplicated as it enters the FIFO: the same
/// samples as upmixing first, for half the filter work. More than two channels are mixed down
/// to stereo first (`ChannelMapper`).
///
/// **Placement.** Each chunk's capture time (after the resampler's delay correction) gives a
/// position on the timeline. A chunk within `tolerance` of where the previous one ended is
/// appended right after it: timestamps jitter, sample counts do not. Beyond the tolerance
/// the lane resynchronises to the timestamp: a gap is filled with silence, an overlap (the
/// source's clock ran ahead of its timestamps, or they jumped back) drops the new chunk's
/// overlapping start. Over long runs this also absorbs drift between a source's sample clock
/// and the monotonic clock, one small correction at a time.
final class MixerLane {
    let source: AudioSource
    var fifo: StereoFIFO
    /// Timeline position of the FIFO's oldest frame (or, when empty, where the next belongs).
    var headPosition: Int64 = 0
    /// Heard from since the start or the last `reset`: only then does the mixer wait for it.
    var anchored = false
    /// Set when the mixer gave up waiting for this source; cleared by its next chunk.
    var stalled = false
    var statistics = AudioMixer.SourceStatistics()

    private let tolerance: Int64
    private let quality: Int
    private var resampler: AudioResampler?
    /// Down-mixed input (more than two channels), reused.
    private var stereoScratch: [Float] = []
    /// Resampled output of one chunk, reused.
    private var resampled: [Float] = []

    init(source: AudioSource, capacityFrames: Int, toleranceFrames: Int, resamplerQuality: Int) {
        self.source = source
        self.fifo = StereoFIFO(capacityFrames: capacityFrames)
        self.tolerance = Int64(toleranceFrames)
        self.quality = resamplerQuality
    }

    var endPosition: Int64 { headPosition + Int64(fifo.count) }

    /// Maps, resamples and queues one chunk. `clock` places it on the shared timeline.
    func push(_ chunk: AudioChunk, clock: inout SampleClock) throws(MediaError) {
        guard chunk.frameCount > 0 else { return }
        let laneChannels = chunk.channels == 1 ? 1 : 2
        let resampler: AudioResampler
        if let current = self.resampler, current.inputRate == chunk.sampleRate, current.channels == laneChannels {
            resampler = current
        } else {
            if self.resampler != nil { statistics.formatChanges += 1 }
            resampler = try AudioResampler(inputRate: chunk.sampleRate, channels: laneChannels, quality: quality)
            self.resampler = resampler
        }
        let time: UInt64
        if chunk.channels > 2 {
            chunk.samples.withUnsafeBufferPointer {
                ChannelMapper.toStereo($0, channels: chunk.channels, into: &stereoScratch)
            }
            time = try stereoScratch.withUnsafeBufferPointer { (input) throws(MediaError) in
                try resampler.process(input, captureTime: chunk.captureTime, into: &resampled)
            }
        } else {
            time = try chunk.samples.withUnsafeBufferPointer { (input) throws(MediaError) in
                try resampler.process(input, captureTime: chunk.captureTime, into: &resampled)
            }
        }
        statistics.chunksIn += 1
        enqueue(channels: laneChannels, at: clock.position(of: time))
    }

    /// Places `resampled` at `position`, resynchronising when it is off by more than the tolerance.
    private func enqueue(channels: Int, at position: Int64) {
        let frames = resampled.count / channels
        guard frames > 0 else { return }
        statistics.framesIn += frames
        var skip = 0
        if !anchored {
            anchored = true
            headPosition = position
        } else {
            let offset = position - endPosition
            if offset > tolerance {
                statistics.timestampResyncs += 1
                if fifo.count == 0 {
                    headPosition = position
                } else if offset >= Int64(fifo.capacity) {
                    // Queued audio and the new chunk cannot both fit around the gap: keep the new.
                    statistics.framesDroppedOverflow += fifo.count
                    fifo.removeAll()
                    headPosition = position
                } else {
                    let gap = Int(offset)
                    let dropped = fifo.appendSilence(frames: gap)
                    headPosition += Int64(dropped)
                    statistics.framesDroppedOverflow += dropped
                    statistics.silenceFramesInserted += gap
                }
            } else if offset < -tolerance {
                statistics.timestampResyncs += 1
                skip = Int(min(-offset, Int64(frames)))
                statistics.framesDroppedLate += skip
            }
        }
        stalled = false
        guard skip < frames else { return }
        let dropped = resampled.withUnsafeBufferPointer { buffer in
            fifo.append(UnsafeBufferPointer(rebasing: buffer[(skip * channels)...]), channels: channels)
        }
        headPosition += Int64(dropped)
        statistics.framesDroppedOverflow += dropped
    }

    /// Adds this lane's share of the window `[start, start + frames)` into `output` (interleaved
    /// stereo, `frames` long) and removes it from the FIFO. Audio stamped before `start` is late
    /// and dropped. Returns the frames contributed.
    func consume(windowStart start: Int64, frames: Int, into output: UnsafeMutableBufferPointer<Float>) -> Int {
        guard anchored else { return 0 }
        if headPosition < start {
            let late = Int(min(start - headPosition, Int64(fifo.count)))
            fifo.dropOldest(late)
            statistics.framesDroppedLate += late
            headPosition = start
        }
        let offset = headPosition - start
        var contributed = 0
        if offset < Int64(frames) {
            let lead = Int(offset)
            contributed = min(fifo.count, frames - lead)
            fifo.add(
                from: 0,
                frames: contributed,
                into: UnsafeMutableBufferPointer(rebasing: output[(lead * 2)...])
            )
            fifo.dropOldest(contributed)
            // An empty lane moves with the window, so its next chunk is judged against "now".
            headPosition = fifo.count == 0 ? start + Int64(frames) : headPosition + Int64(contributed)
        }
        if contributed < frames { statistics.underruns += 1 }
        return contributed
    }

    /// Forgets the source: queued audio, filter state and the fact it was ever heard from.
    func reset() {
        fifo.removeAll()
        anchored = false
        stalled = false
        resampler = nil
    }
}
