/// Keeps the encoded frame rate at or under the stream's rate whatever the capture side sends:
/// a 60 fps source becomes every other frame, a flood becomes 30 frames a second, and a source
/// at the stream's rate passes untouched despite jitter.
///
/// The rule (the one WebRTC's video adapter uses): each kept frame books the next slot one
/// interval later; a frame before its slot is dropped; a frame more than two intervals away from
/// its slot (a pause, a new source) starts over half an interval ahead of itself, so the first
/// frame after a gap is always kept and its successor is judged from it.
struct FrameRateLimiter: Sendable {
    let interval: UInt64
    private var nextSlot: UInt64?

    init(framesPerSecond: Int) {
        interval = 1_000_000_000 / UInt64(max(1, framesPerSecond))
    }

    /// True when the frame captured at `time` (ns) should be encoded.
    mutating func admit(_ time: UInt64) -> Bool {
        if let slot = nextSlot {
            let distance = Int64(bitPattern: slot &- time)
            if distance.magnitude < 2 * interval {
                if distance > 0 { return false }
                nextSlot = slot + interval
                return true
            }
        }
        nextSlot = time + interval / 2
        return true
    }

    /// Forget the booking (the source changed).
    mutating func reset() { nextSlot = nil }
}
