/// Builds Ogg pages (RFC 3533 §6) from whole packets: collects packets with their lacing values,
/// then writes the page header, segment table, data and checksum.
///
/// Header layout: `"OggS"`, version 0, header type (0x01 continued, 0x02 first page of the
/// stream, 0x04 last page), granule position (64-bit LE), stream serial number (32-bit LE), page
/// sequence number (32-bit LE), CRC (32-bit LE), segment count, then one lacing value per
/// segment: a packet of length L is ⌊L/255⌋ values of 255 and one of L mod 255 (0 when L is a
/// multiple of 255, so the reader knows where it ends).
///
/// Packets never span pages here: one page holds at most 255 segments, so a single packet is
/// limited to 255 × 255 − 1 = 65 024 bytes (an Opus packet is at most a few kilobytes).
/// Buffers are kept between pages: no allocation once they have grown.
public struct OggPageAssembler: Sendable {
    public struct HeaderType: OptionSet, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let continuedPacket = HeaderType(rawValue: 0x01)
        public static let beginningOfStream = HeaderType(rawValue: 0x02)
        public static let endOfStream = HeaderType(rawValue: 0x04)
    }

    public static let maxSegments = 255
    public static let maxPacketBytes = 255 * 255 - 1
    /// "no packet finishes on this page" (RFC 3533 §6): −1 as a granule position.
    public static let noGranule: Int64 = -1

    private var lacing: [UInt8] = []
    private var body: [UInt8] = []
    public private(set) var packetCount = 0

    public init() {}

    /// Lacing values `bytes` bytes of packet would take.
    public static func segments(for bytes: Int) -> Int { bytes / 255 + 1 }

    /// Whether a packet of `bytes` still fits on the page being assembled.
    public func canAppend(bytes: Int) -> Bool {
        lacing.count + Self.segments(for: bytes) <= Self.maxSegments
    }

    public var isEmpty: Bool { packetCount == 0 }

    /// Adds a whole packet to the page. Throws when it would not fit (check `canAppend` first).
    public mutating func append(_ packet: UnsafeBufferPointer<UInt8>) throws(MediaError) {
        guard packet.count <= Self.maxPacketBytes else {
            throw MediaError(
                .invalidAudio,
                "Ogg packet of \(packet.count) bytes exceeds the \(Self.maxPacketBytes)-byte single-page limit"
            )
        }
        guard canAppend(bytes: packet.count) else {
            throw MediaError(
                .invalidAudio,
                "Ogg page has no room for \(Self.segments(for: packet.count)) more segments"
            )
        }
        for _ in 0..<packet.count / 255 { lacing.append(255) }
        lacing.append(UInt8(packet.count % 255))
        body.append(contentsOf: packet)
        packetCount += 1
    }

    public mutating func append(_ packet: [UInt8]) throws(MediaError) {
        try packet.withUnsafeBufferPointer { (buffer) throws(MediaError) in try append(buffer) }
    }

    /// Appends the finished page to `output` and empties the assembler for the next one.
    public mutating func finishPage(
        headerType: HeaderType,
        granulePosition: Int64,
        serialNumber: UInt32,
        sequenceNumber: UInt32,
        into output: inout [UInt8]
    ) {
        let start = output.count
        output.append(contentsOf: [0x4F, 0x67, 0x67, 0x53])  // "OggS"
        output.append(0)  // stream structure version
        output.append(headerType.rawValue)
        appendLittleEndian(UInt64(bitPattern: granulePosition), bytes: 8, to: &output)
        appendLittleEndian(UInt64(serialNumber), bytes: 4, to: &output)
        appendLittleEndian(UInt64(sequenceNumber), bytes: 4, to: &output)
        appendLittleEndian(0, bytes: 4, to: &output)  // checksum, filled in below
        output.append(UInt8(lacing.count))
        output.append(contentsOf: lacing)
        output.append(contentsOf: body)
        let crc = output.withUnsafeBufferPointer { OggCRC.update(0, UnsafeBufferPointer(rebasing: $0[start...])) }
        for i in 0..<4 {
            output[start + 22 + i] = UInt8(truncatingIfNeeded: crc >> UInt32(8 * i))
        }
        lacing.removeAll(keepingCapacity: true)
        body.removeAll(keepingCapacity: true)
        packetCount = 0
    }

    private func appendLittleEndian(_ value: UInt64, bytes: Int, to output: inout [UInt8]) {
        for i in 0..<bytes {
            output.append(UInt8(truncatingIfNeeded: value >> UInt64(8 * i)))
        }
    }
}
