import Media
import ProcessSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

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
///
/// The consumer does not sleep on the lock's condition but in `poll(2)`, on a pipe the producer
/// writes a byte to when (and only when) the consumer is asleep, together with whatever else the
/// consumer watches (the receivers' feedback sockets): one wait for both.
public final class SendQueue: @unchecked Sendable {
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
        /// `wake()` was called: something the consumer schedules (a pacer) has new work.
        case woken
        /// One of the watched descriptors is readable (their `revents` say which).
        case feedback
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
    /// The wake-up pipe: the consumer polls `wakeRead`; a producer that finds it asleep writes
    /// one byte to `wakeWrite`. Both ends non-blocking; closed in `deinit`.
    private let wakeRead: Int32
    private let wakeWrite: Int32
    /// Set (under the lock) while the consumer is in `poll`, so only then does a put cost a
    /// `write(2)`.
    private var consumerAsleep = false
    /// Set by `wake()` until the consumer's wait returns `.woken`.
    private var wakeRequested = false
    /// The consumer's poll set: the pipe, then what it watches. Only the consumer touches it.
    private var pollSet: [pollfd] = []

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
        var ends: [Int32] = [-1, -1]
        // A pipe cannot fail to open short of the process's descriptor limit, which a publisher
        // reaches only with far more destinations than it accepts; nothing could run without it.
        precondition(pipe(&ends) == 0, "send queue: pipe: \(String(cString: strerror(errno)))")
        for end in ends {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        wakeRead = ends[0]
        wakeWrite = ends[1]
        pollSet.reserveCapacity(64)
    }

    deinit {
        slots.deinitialize(count: capacity)
        slots.deallocate()
        closeDescriptor(wakeRead)
        closeDescriptor(wakeWrite)
    }

    /// Wakes a consumer asleep in `poll`; the lock is held.
    private func wakeConsumer() {
        guard consumerAsleep else { return }
        var byte: UInt8 = 1
        // A full pipe already holds a wake-up; nothing is lost when this write fails.
        _ = write(wakeWrite, &byte, 1)
    }

    /// Ends the consumer's current wait with `.woken` (the media thread queued paced packets
    /// itself and their pacer's next instant may be earlier than the wait's deadline).
    func wake() {
        condition.lock()
        wakeRequested = true
        wakeConsumer()
        condition.unlock()
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
        wakeConsumer()
        return true
    }

    /// Waits for a slot until `deadline` (monotonic ns).
    func next(waitingUntil deadline: UInt64) -> Next {
        var nothing: [pollfd] = []
        return next(waitingUntil: deadline, watching: &nothing)
    }

    /// Waits for a slot, for one of `watched` to become readable (`.feedback`; their `revents`
    /// say which), or until `deadline` (monotonic ns). A slot already queued returns `.ready`
    /// at once without looking at `watched`. Only the consumer calls this.
    func next(waitingUntil deadline: UInt64, watching watched: inout [pollfd]) -> Next {
        for index in watched.indices { watched[index].revents = 0 }
        while true {
            condition.lock()
            if count > 0 {
                condition.unlock()
                return .ready
            }
            if closed {
                condition.unlock()
                return .finished
            }
            if wakeRequested {
                wakeRequested = false
                condition.unlock()
                return .woken
            }
            let now = MonotonicClock.now()
            guard now < deadline else {
                condition.unlock()
                return .timedOut
            }
            consumerAsleep = true
            condition.unlock()

            // Rounded up to whole milliseconds, so a wait never ends just before its deadline.
            let milliseconds = Int32(clamping: (deadline - now + 999_999) / 1_000_000)
            pollSet.removeAll(keepingCapacity: true)
            pollSet.append(pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0))
            pollSet.append(contentsOf: watched)
            let ready = poll(&pollSet, nfds_t(pollSet.count), milliseconds)

            condition.lock()
            consumerAsleep = false
            condition.unlock()
            if ready > 0, pollSet[0].revents != 0 { drainWakeups() }
            if ready > 0 {
                var anyWatched = false
                for index in watched.indices {
                    watched[index].revents = pollSet[index + 1].revents
                    if watched[index].revents != 0 { anyWatched = true }
                }
                if anyWatched { return .feedback }
            }
        }
    }

    /// Empties the wake-up pipe (a byte per put that found the consumer asleep).
    private func drainWakeups() {
        var bytes: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        while withUnsafeMutableBytes(of: &bytes, { read(wakeRead, $0.baseAddress, $0.count) }) == 32 {}
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
    public func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        wakeConsumer()
        condition.unlock()
    }

    /// Whether no slot is queued or in the consumer's hands (a slot counts until `removeFront`,
    /// which follows its send): true means everything put so far has been sent.
    var isEmpty: Bool {
        condition.lock()
        defer { condition.unlock() }
        return count == 0
    }

    /// Slots in use now, and the most ever in use.
    public var depth: (now: Int, deepest: Int) {
        condition.lock()
        defer { condition.unlock() }
        return (count, deepest)
    }
}

/// `close(2)`, under a name `SendQueue.close()` does not shadow.
private func closeDescriptor(_ descriptor: Int32) {
    _ = close(descriptor)
}
