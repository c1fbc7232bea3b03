import Media

/// Encoded media on its way from the media thread (which converts and encodes) to the sender
/// thread (which packetizes, protects and sends to every destination), in order.
///
/// Why two threads: with many subscribers, protecting and sending an IDR to all of them takes
/// longer than a frame period (100 subscribers × 87 packets × ~15 µs ≈ 130 ms), and a media
/// thread that did it inline fell behind its source and dropped frames. Queued, the encoder goes
/// on with the next frame while the sender works through the backlog on the other core.
///
/// A fixed ring allocated once: a video slot takes the access unit the encoder already made (no
/// copy); an audio slot copies the Opus packet (≤ 1275 bytes) into bytes it owns, so the audio
/// path allocates nothing per packet. One producer (the media thread), one consumer (the sender
/// thread). A full ring makes the producer wait: falling behind shows up as the media thread's
/// own late frames (counted as dropped), never as a gap in the middle of a coded picture.
final class SendQueue: @unchecked Sendable {
    struct Slot {
        fileprivate(set) var video: H264AccessUnit?
        fileprivate(set) var audio = OpusPacket()
        /// When the picture existed (frame in), for the frame-in → last-packet-out latency.
        fileprivate(set) var receivedAt: UInt64 = 0
    }

    enum Next {
        /// A slot is ready; read it with `withFront`, then `removeFront()`.
        case ready
        case timedOut
        /// Closed and empty: nothing more will come.
        case finished
    }

    let capacity: Int
    private let slots: UnsafeMutablePointer<Slot>
    private let condition = ConditionLock()
    private var head = 0
    private var count = 0
    private var closed = false
    /// The deepest the queue has been (slots), for the statistics.
    private var deepest = 0

    /// RFC 6716 §3.2.1: one Opus frame's packet is at most 1275 bytes (20 ms packets are one
    /// frame); a longer one still fits, the slot just grows once.
    static let opusPacketBytes = 1275

    /// 128 slots hold ~1.6 s of 30 fps video with its 20 ms audio: an IDR burst to a large room
    /// drains well within that.
    init(capacity: Int = 128) {
        precondition(capacity > 0, "a send queue needs room")
        self.capacity = capacity
        slots = .allocate(capacity: capacity)
        slots.initialize(repeating: Slot(), count: capacity)
        for index in 0..<capacity { slots[index].audio.data.reserveCapacity(Self.opusPacketBytes) }
    }

    deinit {
        slots.deinitialize(count: capacity)
        slots.deallocate()
    }

    /// Queues an encoded picture; waits while the ring is full. False once closed.
    @discardableResult
    func put(video unit: H264AccessUnit, receivedAt: UInt64) -> Bool {
        enqueue { slot in
            slot.video = unit
            slot.receivedAt = receivedAt
        }
    }

    /// Queues a copy of an Opus packet; waits while the ring is full. False once closed.
    @discardableResult
    func put(audio packet: OpusPacket) -> Bool {
        enqueue { slot in
            slot.video = nil
            // The slot's bytes are its own (the consumer keeps no reference past its call), so
            // this copy reuses their capacity.
            slot.audio.data.removeAll(keepingCapacity: true)
            slot.audio.data.append(contentsOf: packet.data)
            slot.audio.sampleCount = packet.sampleCount
            slot.audio.captureTime = packet.captureTime
            slot.audio.isFirstAfterDTX = packet.isFirstAfterDTX
        }
    }

    private func enqueue(_ fill: (inout Slot) -> Void) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while count == capacity, !closed { condition.wait() }
        guard !closed else { return false }
        fill(&slots[(head + count) % capacity])
        count += 1
        deepest = max(deepest, count)
        condition.broadcast()
        return true
    }

    /// Waits for a slot until `deadline` (monotonic ns).
    func next(waitingUntil deadline: UInt64) -> Next {
        condition.lock()
        defer { condition.unlock() }
        while count == 0 {
            if closed { return .finished }
            let now = MonotonicClock.now()
            guard now < deadline else { return .timedOut }
            condition.wait(untilMonotonic: deadline)
        }
        return .ready
    }

    /// The oldest slot, read in place by the consumer (the producer never writes a queued slot).
    func withFront<R>(_ body: (Slot) throws -> R) rethrows -> R {
        condition.lock()
        let index = head
        let ready = count > 0
        condition.unlock()
        precondition(ready, "withFront called on an empty send queue")
        return try body(slots[index])
    }

    /// Frees the oldest slot (its picture's bytes go with it) and wakes a waiting producer.
    func removeFront() {
        condition.lock()
        defer { condition.unlock() }
        guard count > 0 else { return }
        slots[head].video = nil
        head = (head + 1) % capacity
        count -= 1
        condition.broadcast()
    }

    /// No more puts: a waiting producer returns, the consumer drains what is queued and finishes.
    func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }

    /// Slots in use now, and the most ever in use.
    var depth: (now: Int, deepest: Int) {
        condition.lock()
        defer { condition.unlock() }
        return (count, deepest)
    }
}
