/// One reusable, caller-owned packet buffer: the payloaders write each complete RTP packet
/// (header and payload) into it and hand it to a closure, so the send path allocates nothing
/// per packet.
///
/// The memory is allocated once, larger than the MTU: SRTP (libsrtp's `srtp_protect`) works in
/// place and appends its trailer after the packet, and needs up to `SRTP_MAX_TRAILER_LEN`
/// (144) bytes of room there. `count` is the packet's length; everything after it up to
/// `capacity` is that spare room.
///
/// Not `Sendable`: one buffer belongs to one sending task (or actor) at a time.
public final class RTPPacketBuffer {
    /// Spare room after the largest packet: libsrtp2's SRTP_MAX_TRAILER_LEN.
    public static let trailerSpare = 144
    /// Largest buffer accepted: the largest datagram plus the trailer spare.
    public static let maximumCapacity = RTPPacket.maximumLength + trailerSpare

    public let capacity: Int
    /// Bytes of the current packet, from the start of the buffer.
    public private(set) var count: Int
    private let storage: UnsafeMutableRawBufferPointer

    /// A buffer of `capacity` bytes (at least a 12-byte RTP header).
    public convenience init(capacity: Int) throws(RTPError) {
        guard (RTPHeader.fixedLength...Self.maximumCapacity).contains(capacity) else {
            throw RTPError(
                .invalidConfiguration,
                "packet buffer capacity \(capacity) is outside \(RTPHeader.fixedLength)–\(Self.maximumCapacity) bytes"
            )
        }
        self.init(checkedCapacity: capacity)
    }

    /// A buffer sized for `budget`: its MTU plus the SRTP trailer spare. A budget's MTU is at
    /// most 65,507 bytes, so this capacity is always in range.
    public convenience init(budget: RTPPayloadBudget) {
        self.init(checkedCapacity: budget.mtu + Self.trailerSpare)
    }

    private init(checkedCapacity capacity: Int) {
        self.capacity = capacity
        self.count = 0
        self.storage = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 16)
        storage.initializeMemory(as: UInt8.self, repeating: 0)
    }

    deinit {
        storage.deallocate()
    }

    /// Sets the packet length, e.g. after SRTP grew the packet in place.
    public func setCount(_ newCount: Int) throws(RTPError) {
        guard (0...capacity).contains(newCount) else {
            throw RTPError(.bufferTooSmall, "packet length \(newCount) is outside the buffer's 0–\(capacity) bytes")
        }
        count = newCount
    }

    /// The current packet's bytes (the first `count`), valid only inside `body`.
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(rebasing: storage[0..<count]))
    }

    /// The whole buffer (all `capacity` bytes) and the packet length, both writable, valid only
    /// inside `body`: what an in-place encryptor such as `srtp_protect` needs. A length set
    /// outside 0…capacity is clamped into it.
    public func withUnsafeMutableStorage<R, E: Error>(
        _ body: (UnsafeMutableRawBufferPointer, inout Int) throws(E) -> R
    ) throws(E) -> R {
        var length = count
        defer { count = min(max(length, 0), capacity) }
        return try body(storage, &length)
    }

    /// A copy of the current packet, for tests and logs (allocates).
    public func copyBytes() -> [UInt8] {
        [UInt8](UnsafeRawBufferPointer(rebasing: storage[0..<count]))
    }

    // Cheap reads of the header just written, e.g. to key a NACK history by sequence number.

    /// The RTP sequence number of the current packet, or nil if it is shorter than a header.
    public var sequenceNumber: UInt16? {
        guard count >= RTPHeader.fixedLength else { return nil }
        return UInt16(bigEndian: storage.loadUnaligned(fromByteOffset: 2, as: UInt16.self))
    }

    /// The RTP timestamp of the current packet, or nil if it is shorter than a header.
    public var timestamp: UInt32? {
        guard count >= RTPHeader.fixedLength else { return nil }
        return UInt32(bigEndian: storage.loadUnaligned(fromByteOffset: 4, as: UInt32.self))
    }

    /// The marker bit of the current packet, or nil if it is shorter than a header.
    public var marker: Bool? {
        guard count >= RTPHeader.fixedLength else { return nil }
        return storage[1] & 0x80 != 0
    }
}
