/// One frame of mixed audio for the Opus encoder: 48 kHz interleaved stereo float, 20 ms
/// (960 samples per channel) unless the mixer was configured otherwise.
///
/// Reuse one value with `AudioMixer.mixNext(into:)`: its sample array keeps its capacity, so
/// the steady path allocates nothing.
public struct MixedFrame: Sendable, Equatable {
    public static let sampleRate = 48_000
    public static let channels = 2

    /// Interleaved L R L R …, within −1…1.
    public var samples: [Float]
    /// Capture time of the first sample, in nanoseconds on the monotonic clock. Consecutive
    /// frames are exactly one frame duration apart unless `followsGap` is set.
    public var captureTime: UInt64
    /// True when every source had stopped for longer than the jitter allowance and the timeline
    /// jumped forward to where audio resumed, instead of emitting the gap as silence. The RTP
    /// payloader sets the marker bit on the packet that carries this frame (RFC 3551 §4.1).
    public var followsGap: Bool

    public init(samples: [Float] = [], captureTime: UInt64 = 0, followsGap: Bool = false) {
        self.samples = samples
        self.captureTime = captureTime
        self.followsGap = followsGap
    }

    /// Samples per channel.
    public var frameCount: Int { samples.count / Self.channels }
}
