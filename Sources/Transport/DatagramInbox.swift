import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Datagrams handed from the thread that reads them (libnice's receive callback on its GLib
/// thread) to the thread that acts on them (the publisher's sender thread), with no allocation per
/// datagram: a fixed ring of slots, copied in and copied out under a lock.
///
/// `descriptor` is readable while datagrams wait (one byte in a pipe, written when the ring stops
/// being empty and read when it empties), so the consumer sleeps in the `poll(2)` it already runs
/// over its sockets. When the ring is full a new datagram is dropped and counted: the consumer is
/// behind, and RTCP feedback is sent again by its sender.
public final class DatagramInbox: @unchecked Sendable {
    /// The longest datagram kept: an Ethernet MTU, as ICE delivers.
    public static let slotSize = 1500

    public let capacity: Int
    /// Readable (POLLIN) while datagrams wait. Never read it: `take(into:)` does.
    public var descriptor: Int32 { pipe.read }

    private struct Ring {
        var head = 0
        var count = 0
        var lengths: [Int]
        var dropped = 0
        var tooLong = 0
    }

    private let slots: UnsafeMutableRawBufferPointer
    private let ring: Mutex<Ring>
    private let pipe: (read: Int32, write: Int32)

    public init(capacity: Int = 64) throws(TransportError) {
        guard capacity > 0 else { throw TransportError(.invalidAddress, "an inbox needs at least one slot") }
        var fds: [Int32] = [-1, -1]
        guard Glibc.pipe(&fds) == 0 else { throw TransportError.system(.socket, "pipe") }
        for end in fds {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        self.capacity = capacity
        self.pipe = (fds[0], fds[1])
        self.slots = .allocate(byteCount: capacity * Self.slotSize, alignment: 16)
        self.ring = Mutex(Ring(lengths: Array(repeating: 0, count: capacity)))
    }

    deinit {
        close(pipe.read)
        close(pipe.write)
        slots.deallocate()
    }

    /// Copies `datagram` into the ring. False (counted) when the ring is full or the datagram is
    /// longer than `slotSize`.
    @discardableResult
    public func put(_ datagram: UnsafeRawBufferPointer) -> Bool {
        let wake: Bool? = ring.withLock { ring in
            guard datagram.count <= Self.slotSize else {
                ring.tooLong += 1
                return nil
            }
            guard ring.count < capacity else {
                ring.dropped += 1
                return nil
            }
            let index = (ring.head + ring.count) % capacity
            if let source = datagram.baseAddress, let target = slots.baseAddress {
                (target + index * Self.slotSize).copyMemory(from: source, byteCount: datagram.count)
            }
            ring.lengths[index] = datagram.count
            ring.count += 1
            return ring.count == 1
        }
        guard let wake else { return false }
        if wake {
            var byte: UInt8 = 1
            _ = write(pipe.write, &byte, 1)
        }
        return true
    }

    /// Moves the oldest datagram into `buffer` and returns its length; nil when none waits. A
    /// datagram longer than `buffer` is dropped (counted as too long).
    public func take(into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        let (length, emptied): (Int?, Bool) = ring.withLock { ring in
            // Empty: a wake-up byte may still sit in the pipe (written after a race with this
            // reader); drain it, so the consumer's poll does not spin.
            guard ring.count > 0 else { return (nil, true) }
            let index = ring.head
            let length = ring.lengths[index]
            ring.head = (ring.head + 1) % capacity
            ring.count -= 1
            guard length <= buffer.count, let target = buffer.baseAddress, let source = slots.baseAddress else {
                ring.tooLong += 1
                return (nil, ring.count == 0)
            }
            target.copyMemory(from: source + index * Self.slotSize, byteCount: length)
            return (length, ring.count == 0)
        }
        if emptied {
            var byte: UInt8 = 0
            while read(pipe.read, &byte, 1) > 0 {}
        }
        return length
    }

    /// Datagrams dropped because the ring was full, and because they were too long.
    public var drops: (full: Int, tooLong: Int) { ring.withLock { ($0.dropped, $0.tooLong) } }
}
