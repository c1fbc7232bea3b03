/// A bounded first-in first-out queue of interleaved stereo frames, one per mixer source.
///
/// Storage is allocated once at the capacity; appends beyond it drop the oldest frames (the
/// caller counts them), so a source that runs ahead can cost memory and latency only up to the
/// cap, never more.
struct StereoFIFO {
    let capacity: Int
    private var storage: [Float]
    /// Frame index of the oldest frame in `storage`.
    private var head = 0
    private(set) var count = 0

    init(capacityFrames: Int) {
        capacity = max(1, capacityFrames)
        storage = [Float](repeating: 0, count: capacity * 2)
    }

    /// Appends interleaved stereo frames, or mono samples duplicated to both sides.
    /// Returns how many of the oldest frames were dropped to make room.
    mutating func append(_ samples: UnsafeBufferPointer<Float>, channels: Int) -> Int {
        let frames = samples.count / channels
        let dropped = makeRoom(for: frames)
        // Only the newest `capacity` frames of an oversized block can survive.
        let skip = max(0, frames - capacity)
        storage.withUnsafeMutableBufferPointer { store in
            var slot = (head + count) % capacity
            if channels == 2, let source = samples.baseAddress, let base = store.baseAddress {
                // Stereo is already interleaved as stored: at most two copies, either side of
                // the ring's end (a per-frame loop cost 11 instructions a sample).
                let first = min(frames - skip, capacity - slot)
                (base + slot * 2).update(from: source + skip * 2, count: first * 2)
                (base).update(from: source + (skip + first) * 2, count: (frames - skip - first) * 2)
                return
            }
            for frame in skip..<frames {
                let x = samples[frame]
                store[slot * 2] = x
                store[slot * 2 + 1] = x
                slot += 1
                if slot == capacity { slot = 0 }
            }
        }
        count += frames - skip
        return dropped
    }

    /// Appends `frames` of silence; returns how many old frames were dropped.
    mutating func appendSilence(frames: Int) -> Int {
        let dropped = makeRoom(for: frames)
        let added = min(frames, capacity)
        storage.withUnsafeMutableBufferPointer { store in
            var slot = (head + count) % capacity
            for _ in 0..<added {
                store[slot * 2] = 0
                store[slot * 2 + 1] = 0
                slot += 1
                if slot == capacity { slot = 0 }
            }
        }
        count += added
        return dropped
    }

    mutating func dropOldest(_ frames: Int) {
        let n = min(max(0, frames), count)
        head = (head + n) % capacity
        count -= n
        if count == 0 { head = 0 }
    }

    mutating func removeAll() {
        head = 0
        count = 0
    }

    /// Adds `frames` frames starting `offset` frames after the oldest into `output` (interleaved
    /// stereo), summing with what is there.
    func add(from offset: Int, frames: Int, into output: UnsafeMutableBufferPointer<Float>) {
        guard frames > 0, offset >= 0, offset + frames <= count, output.count >= frames * 2,
            let target = output.baseAddress
        else { return }
        storage.withUnsafeBufferPointer { store in
            guard let source = store.baseAddress else { return }
            // The frames lie in at most two runs of the ring: to the end of the storage, then
            // from its start. Each run is one flat loop over pointers, which the compiler
            // vectorizes (the frame-by-frame loop with its wrap test did not).
            let slot = (head + offset) % capacity
            let firstRun = min(frames, capacity - slot)
            Self.accumulate(source + slot * 2, into: target, count: firstRun * 2)
            Self.accumulate(source, into: target + firstRun * 2, count: (frames - firstRun) * 2)
        }
    }

    @inline(__always)
    private static func accumulate(_ source: UnsafePointer<Float>, into target: UnsafeMutablePointer<Float>, count: Int)
    {
        for i in 0..<count { target[i] += source[i] }
    }

    /// Drops the oldest frames so that `incoming` more fit; returns how many were dropped.
    private mutating func makeRoom(for incoming: Int) -> Int {
        let excess = count + incoming - capacity
        guard excess > 0 else { return 0 }
        let dropped = min(excess, count)
        dropOldest(dropped)
        // Frames of the incoming block beyond the capacity are dropped by the caller's skip.
        return dropped + max(0, incoming - capacity)
    }
}
