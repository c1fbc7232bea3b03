/// The bytes sent over the last `window` (monotonic ns), counted in `slotCount` slots of
/// `window / slotCount`: what the retransmission rule for a receiver that never reported is a
/// share of (`RetransmissionLimiter`, Docs/feedback.md). A slot that has aged out is emptied
/// when time moves past it, so the count covers between `window − window / slotCount` and
/// `window`. One addition per packet; fixed storage, no allocation after init.
public struct SentBytesWindow: Sendable {
    public static let slotCount = 10

    public let window: UInt64
    private let slotLength: UInt64
    private var slots: [Int]
    private var current = 0
    /// When the current slot began; nil before the first packet.
    private var currentStart: UInt64?
    private var sum = 0

    /// `window` in ns, at least `slotCount` ns.
    public init(window: UInt64) {
        self.window = max(window, UInt64(Self.slotCount))
        slotLength = self.window / UInt64(Self.slotCount)
        slots = [Int](repeating: 0, count: Self.slotCount)
    }

    /// `bytes` sent at `now`.
    public mutating func add(_ bytes: Int, at now: UInt64) {
        advance(to: now)
        slots[current] += bytes
        sum += bytes
    }

    /// The bytes sent within the window ending at `now`.
    public mutating func bytes(at now: UInt64) -> Int {
        advance(to: now)
        return sum
    }

    /// The rate those bytes make over the whole window, bits per second.
    public mutating func bitsPerSecond(at now: UInt64) -> Int {
        let bits = bytes(at: now) * 8
        return Int(Double(bits) * 1e9 / Double(window))
    }

    private mutating func advance(to now: UInt64) {
        guard let start = currentStart else {
            currentStart = now
            return
        }
        guard now > start, now - start >= slotLength else { return }
        let steps = (now - start) / slotLength
        guard steps < UInt64(Self.slotCount) else {
            for index in slots.indices { slots[index] = 0 }
            sum = 0
            current = 0
            currentStart = now
            return
        }
        for _ in 0..<Int(steps) {
            current = (current + 1) % Self.slotCount
            sum -= slots[current]
            slots[current] = 0
        }
        currentStart = start + steps * slotLength
    }
}
