/// The picture ID of the VP8 and VP9 payload descriptors (RFC 7741 §4.2, RFC 9628 §4.2): a
/// running number of the frame, 7 bits (M=0) or 15 bits (M=1) on the wire. A receiver's reference
/// finder takes consecutive IDs to mean consecutive frames (libwebrtc's `RtpFrameIdOnlyRefFinder`
/// when there are no layer indices), so a sender counts every frame it sends, and only those.
public enum VPXPictureID: Sendable, Hashable, CustomStringConvertible {
    /// M=0: `|0| PictureID |`, one octet.
    case sevenBit(UInt8)
    /// M=1: `|1| PictureID |` then the low octet, two octets in all.
    case fifteenBit(UInt16)

    /// The largest 15-bit picture ID; the next one is 0.
    public static let maximum15Bit: UInt16 = 0x7FFF

    /// The ID as a number (0...127 or 0...32767).
    public var value: UInt16 {
        switch self {
        case .sevenBit(let id): UInt16(id & 0x7F)
        case .fifteenBit(let id): id & Self.maximum15Bit
        }
    }

    /// Bytes the field takes in a descriptor.
    public var length: Int {
        switch self {
        case .sevenBit: 1
        case .fifteenBit: 2
        }
    }

    public var description: String {
        switch self {
        case .sevenBit(let id): "\(id & 0x7F) (7-bit)"
        case .fifteenBit(let id): "\(id & Self.maximum15Bit) (15-bit)"
        }
    }

    /// The 15-bit ID after `id`: 0x7FFF wraps to 0.
    public static func next15Bit(after id: UInt16) -> UInt16 {
        (id &+ 1) & maximum15Bit
    }

    /// Reads the field at the reader's position: the M bit decides its length.
    static func read(_ reader: inout ByteReader) throws(RTPError) -> VPXPictureID {
        let first = try reader.readUInt8("PictureID")
        guard first & 0x80 != 0 else { return .sevenBit(first) }
        let second = try reader.readUInt8("PictureID's second octet (M=1)")
        return .fifteenBit(UInt16(first & 0x7F) << 8 | UInt16(second))
    }

    func write(to writer: inout ByteWriter) {
        switch self {
        case .sevenBit(let id):
            writer.write(id & 0x7F)
        case .fifteenBit(let id):
            writer.write(0x8000 | id & Self.maximum15Bit)
        }
    }
}

/// How a VP8 or VP9 frame is cut into RTP payloads: the fewest packets the payload budget allows,
/// with sizes that differ by at most one byte (after `firstPacketReduction`, the bytes only the
/// first packet's descriptor carries), so no packet is a tiny tail (libwebrtc's
/// `SplitAboutEqually`, and `H264Payloader`'s FU-A rule).
struct VPXFragmentation {
    let count: Int
    private let base: Int
    private let larger: Int
    private let firstPacketReduction: Int

    /// `capacity`: frame bytes a packet can carry after the descriptor every packet has. The
    /// caller guarantees `frameLength ≥ 1` and `capacity ≥ 2 × (firstPacketReduction + 1)`, so
    /// every piece, the first included, carries at least one byte.
    init(frameLength: Int, capacity: Int, firstPacketReduction: Int) {
        let total = frameLength + firstPacketReduction
        let count = (total + capacity - 1) / capacity
        self.count = count
        self.base = total / count
        self.larger = total % count
        self.firstPacketReduction = firstPacketReduction
    }

    /// Frame bytes carried by packet `index` (0-based).
    func size(_ index: Int) -> Int {
        base + (index < larger ? 1 : 0) - (index == 0 ? firstPacketReduction : 0)
    }

    /// Calls `body` with each piece's range in `0..<frameLength`, in order, and whether it is
    /// the first and the last.
    func forEach(_ body: (_ range: Range<Int>, _ isFirst: Bool, _ isLast: Bool) throws -> Void) rethrows {
        var start = 0
        for index in 0..<count {
            let size = size(index)
            try body(start..<start + size, index == 0, index == count - 1)
            start += size
        }
    }
}
