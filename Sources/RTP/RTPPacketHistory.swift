/// The recently sent clear-text RTP packets of one stream, kept so a generic NACK (RFC 4585
/// §6.2.1) can be answered by resending the packet (RFC 4588 §3 describes the sender's job:
/// "the original packet is retrieved from a buffer of recently sent packets").
///
/// Storage is one block allocated at init: `capacity` slots of `slotSize` bytes each, so
/// storing a packet is one `memcpy` and no allocation. The slot of a packet is its sequence
/// number modulo the capacity, a power of two dividing 65,536, so the slot stays right across
/// the 16-bit wrap; a lookup also checks that the number is not newer than the newest stored
/// packet nor older than the capacity reaches, so an entry from 65,536 packets ago never
/// answers for a lost one.
///
/// Size it for at least 1024 packets or about one second of the stream, whichever is more
/// (`recommendedCapacity`): a NACK arrives one round trip after the loss, and a receiver may
/// repeat it. Not `Sendable`: one sending task owns it.
public final class RTPPacketHistory {
    /// Smallest capacity accepted: what Pion and libwebrtc keep for a video stream.
    public static let minimumCapacity = 1024
    /// Largest capacity accepted: well inside half the sequence space (so "newer" and "older"
    /// stay defined) and inside libsrtp's largest replay window (32,767), which a sender that
    /// re-protects a resent packet needs to span the history.
    public static let maximumCapacity = 16_384

    public let capacity: Int
    /// The largest packet a slot holds (the send budget's packet size).
    public let slotSize: Int
    /// Packets stored since the start.
    public private(set) var storedCount = 0
    /// Packets refused by `store` because they were larger than a slot or shorter than a header.
    public private(set) var rejectedCount = 0

    private let mask: Int
    private let storage: UnsafeMutableRawBufferPointer
    /// Length of the packet in each slot; 0 means empty.
    private let lengths: UnsafeMutableBufferPointer<Int32>
    private let sequenceNumbers: UnsafeMutableBufferPointer<UInt16>
    private var newest: UInt16?

    /// The smallest power of two at least 1024 that holds `seconds` of a stream sending
    /// `bitsPerSecond` in packets of about `packetSize` bytes, capped at `maximumCapacity`.
    public static func recommendedCapacity(bitsPerSecond: Int, packetSize: Int, seconds: Double = 1) -> Int {
        let size = max(packetSize, RTPHeader.fixedLength)
        let packets = Double(max(bitsPerSecond, 0)) / 8 / Double(size) * max(seconds, 0)
        var capacity = minimumCapacity
        while Double(capacity) < packets, capacity < maximumCapacity { capacity *= 2 }
        return capacity
    }

    /// `capacity` must be a power of two in 1024…16384; `slotSize` 12…65535 bytes.
    public init(capacity: Int, slotSize: Int) throws(RTPError) {
        guard (Self.minimumCapacity...Self.maximumCapacity).contains(capacity), capacity & (capacity - 1) == 0 else {
            throw RTPError(
                .invalidConfiguration,
                "packet history capacity \(capacity) is not a power of two in "
                    + "\(Self.minimumCapacity)–\(Self.maximumCapacity)"
            )
        }
        guard (RTPHeader.fixedLength...RTPPacket.maximumLength).contains(slotSize) else {
            throw RTPError(
                .invalidConfiguration,
                "packet history slot size \(slotSize) is outside \(RTPHeader.fixedLength)–\(RTPPacket.maximumLength) bytes"
            )
        }
        self.capacity = capacity
        self.slotSize = slotSize
        self.mask = capacity - 1
        storage = .allocate(byteCount: capacity * slotSize, alignment: 16)
        storage.initializeMemory(as: UInt8.self, repeating: 0)
        lengths = .allocate(capacity: capacity)
        lengths.initialize(repeating: 0)
        sequenceNumbers = .allocate(capacity: capacity)
        sequenceNumbers.initialize(repeating: 0)
    }

    deinit {
        storage.deallocate()
        lengths.deallocate()
        sequenceNumbers.deallocate()
    }

    /// Copies one clear-text RTP packet in, keyed by the sequence number in its header; returns
    /// false (and counts it) when it is shorter than an RTP header or larger than a slot.
    @discardableResult
    public func store(_ packet: UnsafeRawBufferPointer) -> Bool {
        guard packet.count >= RTPHeader.fixedLength, packet.count <= slotSize, let source = packet.baseAddress else {
            rejectedCount += 1
            return false
        }
        let sequenceNumber = UInt16(packet[2]) << 8 | UInt16(packet[3])
        let slot = Int(sequenceNumber) & mask
        storage.baseAddress.map { ($0 + slot * slotSize).copyMemory(from: source, byteCount: packet.count) }
        lengths[slot] = Int32(packet.count)
        sequenceNumbers[slot] = sequenceNumber
        if let last = newest {
            if Int16(bitPattern: sequenceNumber &- last) > 0 { newest = sequenceNumber }
        } else {
            newest = sequenceNumber
        }
        storedCount += 1
        return true
    }

    /// Stores the packet a payloader just wrote.
    @discardableResult
    public func store(_ buffer: RTPPacketBuffer) -> Bool {
        buffer.withUnsafeBytes { store($0) }
    }

    /// Whether the packet with `sequenceNumber` is still held.
    public func contains(_ sequenceNumber: UInt16) -> Bool {
        slot(of: sequenceNumber) != nil
    }

    /// Copies the packet with `sequenceNumber` to the start of `destination` and returns its
    /// length; nil when it is no longer (or never was) held, or `destination` is too small.
    public func copy(_ sequenceNumber: UInt16, into destination: UnsafeMutableRawBufferPointer) -> Int? {
        guard let slot = slot(of: sequenceNumber), let target = destination.baseAddress, let base = storage.baseAddress
        else { return nil }
        let length = Int(lengths[slot])
        guard length <= destination.count else { return nil }
        target.copyMemory(from: base + slot * slotSize, byteCount: length)
        return length
    }

    /// Copies the packet into a packet buffer (setting its count); false when not held.
    public func copy(_ sequenceNumber: UInt16, into buffer: RTPPacketBuffer) -> Bool {
        let length = buffer.withUnsafeMutableStorage { storage, count -> Int? in
            guard let length = copy(sequenceNumber, into: storage) else { return nil }
            count = length
            return length
        }
        return length != nil
    }

    /// Calls `body` with the stored packet's bytes (valid only inside it); nil when not held.
    public func withPacket<R, E: Error>(
        _ sequenceNumber: UInt16,
        _ body: (UnsafeRawBufferPointer) throws(E) -> R
    ) throws(E) -> R? {
        guard let slot = slot(of: sequenceNumber), let base = storage.baseAddress else { return nil }
        return try body(UnsafeRawBufferPointer(start: base + slot * slotSize, count: Int(lengths[slot])))
    }

    /// The stored packet as a new array (tests and logs; allocates).
    public func packet(_ sequenceNumber: UInt16) -> [UInt8]? {
        guard let slot = slot(of: sequenceNumber), let base = storage.baseAddress else { return nil }
        return [UInt8](UnsafeRawBufferPointer(start: base + slot * slotSize, count: Int(lengths[slot])))
    }

    private func slot(of sequenceNumber: UInt16) -> Int? {
        guard let newest else { return nil }
        // Wrap-aware age: 0 for the newest, negative for a number not sent yet.
        let age = Int(Int16(bitPattern: newest &- sequenceNumber))
        guard age >= 0, age < capacity else { return nil }
        let slot = Int(sequenceNumber) & mask
        guard lengths[slot] > 0, sequenceNumbers[slot] == sequenceNumber else { return nil }
        return slot
    }
}
