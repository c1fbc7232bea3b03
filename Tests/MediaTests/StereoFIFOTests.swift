import Testing

@testable import Media

/// The mixer's per-source ring against a plain array model: random stereo and mono blocks
/// (some larger than the ring), random reads and drops, so that writes meet the ring's end at
/// every offset. What `add` reads out must be exactly the model's newest frames.
@Suite("Stereo FIFO")
struct StereoFIFOTests {
    @Test("matches an array model across wraps, overflows and both channel counts", arguments: [1, 5, 16])
    func matchesModel(capacity: Int) {
        var fifo = StereoFIFO(capacityFrames: capacity)
        var model: [Float] = []  // interleaved stereo, oldest first
        // Media's own seeded generator, so a failure replays.
        var generator = SplitMix64(seed: UInt64(capacity))
        var next: Float = 1
        for _ in 0..<2_000 {
            switch generator.next() % 4 {
            case 0, 1:
                let channels = generator.next() % 2 == 0 ? 1 : 2
                let frames = Int(generator.next() % UInt64(capacity * 2 + 1))
                var block: [Float] = []
                for _ in 0..<frames * channels {
                    block.append(next)
                    next += 1
                }
                let dropped = block.withUnsafeBufferPointer { fifo.append($0, channels: channels) }
                for frame in 0..<frames {
                    if channels == 1 {
                        model += [block[frame], block[frame]]
                    } else {
                        model += [block[frame * 2], block[frame * 2 + 1]]
                    }
                }
                let excess = max(0, model.count / 2 - capacity)
                model.removeFirst(excess * 2)
                #expect(dropped == excess)
            case 2:
                let frames = Int(generator.next() % UInt64(capacity + 1))
                fifo.dropOldest(frames)
                model.removeFirst(min(frames, model.count / 2) * 2)
            default:
                break
            }
            #expect(fifo.count == model.count / 2)
            var out = [Float](repeating: 0, count: fifo.count * 2)
            out.withUnsafeMutableBufferPointer { fifo.add(from: 0, frames: fifo.count, into: $0) }
            #expect(out == model)
        }
    }
}
