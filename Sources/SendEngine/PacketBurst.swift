import RTP
import Transport

/// The clear RTP packets of one picture (up to the kernel's segment limit at a time), gathered
/// as the payloader cuts them so that each destination then protects and sends them as one
/// burst: one segmented `sendmsg` per run of equal-size packets instead of one `sendto` each
/// (`UDPSocket.send(_:segmentSize:to:)`). Storage is allocated once; appending copies the packet
/// (one `memcpy` of at most an MTU) and allocates nothing.
final class PacketBurst {
    /// Packets held before the burst must go out.
    static let capacity = UDPSocket.maximumSegments
    let slotSize: Int
    private let storage: UnsafeMutableRawBufferPointer
    private let lengths: UnsafeMutableBufferPointer<Int>
    private(set) var count = 0

    init(slotSize: Int) {
        self.slotSize = slotSize
        storage = .allocate(byteCount: slotSize * Self.capacity, alignment: 16)
        lengths = .allocate(capacity: Self.capacity)
        lengths.initialize(repeating: 0)
    }

    deinit {
        storage.deallocate()
        lengths.deallocate()
    }

    var isFull: Bool { count == Self.capacity }

    /// Copies `buffer`'s packet in; false (nothing kept) when full or the packet exceeds a slot,
    /// which the caller's budget rules out.
    @discardableResult
    func append(_ buffer: RTPPacketBuffer) -> Bool {
        guard count < Self.capacity, buffer.count <= slotSize else { return false }
        let slot = storage.baseAddress.map { $0 + count * slotSize }
        buffer.withUnsafeBytes { bytes in
            if let slot, let base = bytes.baseAddress { slot.copyMemory(from: base, byteCount: bytes.count) }
        }
        lengths[count] = buffer.count
        count += 1
        return true
    }

    /// Copies raw packet bytes in (a packet from the history); false as `append(_:)`.
    @discardableResult
    func append(bytes: UnsafeRawBufferPointer) -> Bool {
        guard count < Self.capacity, bytes.count <= slotSize, let source = bytes.baseAddress,
            let slot = storage.baseAddress.map({ $0 + count * slotSize })
        else { return false }
        slot.copyMemory(from: source, byteCount: bytes.count)
        lengths[count] = bytes.count
        count += 1
        return true
    }

    /// The last packet's bytes, to be changed in place (a packet renumbered for one viewer).
    func withLast(_ body: (UnsafeMutableRawPointer) -> Void) {
        guard count > 0, let base = storage.baseAddress else { return }
        body(base + (count - 1) * slotSize)
    }

    /// The `index`th packet's bytes, valid until the next `removeAll`.
    subscript(index: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: storage[index * slotSize..<index * slotSize + lengths[index]])
    }

    func removeAll() { count = 0 }
}
