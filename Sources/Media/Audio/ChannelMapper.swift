/// Maps interleaved audio of 1–8 channels to stereo, the one layout the mixer and Opus use.
///
/// - 1 channel: duplicated to both sides at full level (a mono mic is heard centred, not
///   3 dB quieter).
/// - 2 channels: as they are.
/// - 6 channels (5.1 in WAVE order FL FR FC LFE BL BR): ITU-R BS.775 down-mix,
///   `L = FL + √½·FC + √½·BL`, `R = FR + √½·FC + √½·BR`, LFE dropped (BS.775 leaves it out of
///   the two-channel mix). The coefficients are not normalised: dialogue and front content keep
///   their level, and the rare peak above full scale is caught by the mixer's soft limiter.
/// - 8 channels (7.1: FL FR FC LFE BL BR SL SR): the same rule with the side pair added like
///   the back pair.
/// - Any other count (3, 4, 5, 7): no standard layout can be assumed, so every channel is
///   averaged into both sides.
public enum ChannelMapper {
    /// Gain of each input channel into the left and right outputs.
    public static func coefficients(channels: Int) -> (left: [Float], right: [Float]) {
        let h: Float = 0.707_106_77  // √½, −3 dB
        switch channels {
        case 1: return ([1], [1])
        case 2: return ([1, 0], [0, 1])
        case 6: return ([1, 0, h, 0, h, 0], [0, 1, h, 0, 0, h])
        case 8: return ([1, 0, h, 0, h, 0, h, 0], [0, 1, h, 0, 0, h, 0, h])
        default:
            let share = 1 / Float(max(channels, 1))
            let all = [Float](repeating: share, count: max(channels, 1))
            return (all, all)
        }
    }

    /// Appends the stereo version of `input` (interleaved, `channels` per frame) to `output`,
    /// after emptying it while keeping its capacity: no allocation once it has grown.
    /// A trailing partial frame in `input` is ignored.
    public static func toStereo(_ input: UnsafeBufferPointer<Float>, channels: Int, into output: inout [Float]) {
        output.removeAll(keepingCapacity: true)
        guard channels >= 1 else { return }
        let frames = input.count / channels
        output.reserveCapacity(frames * 2)
        switch channels {
        case 1:
            for i in 0..<frames {
                output.append(input[i])
                output.append(input[i])
            }
        case 2:
            output.append(contentsOf: UnsafeBufferPointer(rebasing: input[0..<frames * 2]))
        default:
            let (left, right) = coefficients(channels: channels)
            for frame in 0..<frames {
                let base = frame * channels
                var l: Float = 0
                var r: Float = 0
                for c in 0..<channels {
                    let x = input[base + c]
                    l += left[c] * x
                    r += right[c] * x
                }
                output.append(l)
                output.append(r)
            }
        }
    }

    /// Convenience for tests and cold paths.
    public static func toStereo(_ input: [Float], channels: Int) -> [Float] {
        var output: [Float] = []
        input.withUnsafeBufferPointer { toStereo($0, channels: channels, into: &output) }
        return output
    }
}
