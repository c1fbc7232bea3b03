/// Source description, RTCP type 202 (RFC 3550 §6.5): chunks of items (CNAME and friends)
/// per source. Every compound RTCP packet carries the sender's CNAME in one.
public struct RTCPSourceDescription: Sendable, Hashable {
    /// SDES item types (RFC 3550 §6.5, §12.2).
    public struct ItemType: RawRepresentable, Sendable, Hashable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// Canonical end-point identifier: the one item a sender must send (§6.5.1).
        public static let cname = ItemType(rawValue: 1)
        public static let name = ItemType(rawValue: 2)
        public static let email = ItemType(rawValue: 3)
        public static let phone = ItemType(rawValue: 4)
        public static let location = ItemType(rawValue: 5)
        public static let tool = ItemType(rawValue: 6)
        public static let note = ItemType(rawValue: 7)
        public static let privateExtension = ItemType(rawValue: 8)
    }

    public struct Item: Sendable, Hashable {
        /// Never 0: type 0 ends a chunk's item list on the wire.
        public var type: ItemType
        /// UTF-8 text (RFC 3550 §6.5), at most 255 bytes; kept as bytes so that what was
        /// received round-trips exactly.
        public var value: [UInt8]

        public init(type: ItemType, value: [UInt8]) {
            self.type = type
            self.value = value
        }

        public init(type: ItemType, text: String) {
            self.init(type: type, value: Array(text.utf8))
        }

        /// The value decoded as UTF-8 (invalid bytes replaced).
        public var text: String { String(decoding: value, as: UTF8.self) }
    }

    public struct Chunk: Sendable, Hashable {
        public var source: UInt32
        public var items: [Item]

        public init(source: UInt32, items: [Item]) {
            self.source = source
            self.items = items
        }

        /// SSRC, items (2 + value bytes each), then at least one null byte up to a 32-bit
        /// boundary (§6.5).
        var length: Int {
            var length = 4
            for item in items { length += 2 + item.value.count }
            return (length + 4) & ~3
        }
    }

    public var chunks: [Chunk]

    public init(chunks: [Chunk]) {
        self.chunks = chunks
    }

    /// One chunk carrying a CNAME item: what a sender puts in every compound packet.
    public init(ssrc: UInt32, cname: String) {
        self.init(chunks: [Chunk(source: ssrc, items: [Item(type: .cname, text: cname)])])
    }

    /// The CNAME of `ssrc`, if a chunk carries one.
    public func cname(of ssrc: UInt32) -> String? {
        chunks.first { $0.source == ssrc }?.items.first { $0.type == .cname }?.text
    }

    /// Reads `count` chunks; bytes after them (padding) are ignored.
    static func read(from reader: inout ByteReader, count: Int) throws(RTPError) -> RTCPSourceDescription {
        var chunks: [Chunk] = []
        chunks.reserveCapacity(count)
        for chunkIndex in 0..<count {
            let chunkStart = reader.offset
            var chunk = Chunk(source: try reader.readUInt32("SSRC/CSRC of chunk \(chunkIndex)"), items: [])
            while true {
                let type = try reader.readUInt8("item type in chunk \(chunkIndex)")
                if type == 0 { break }
                let length = Int(try reader.readUInt8("item length in chunk \(chunkIndex)"))
                let value = try reader.readBytes(length, "\(length)-byte item of type \(type) in chunk \(chunkIndex)")
                chunk.items.append(Item(type: ItemType(rawValue: type), value: value))
            }
            // The null item type was read; skip the null bytes up to the chunk's next word.
            let consumed = reader.offset - chunkStart
            try reader.advance((4 - consumed % 4) % 4, "null padding of chunk \(chunkIndex)")
            chunks.append(chunk)
        }
        return RTCPSourceDescription(chunks: chunks)
    }
}

extension RTCPSourceDescription: RTCPPacketBody {
    var packetType: RTCPPacketType { .sourceDescription }
    var countField: UInt8 { UInt8(truncatingIfNeeded: chunks.count) }
    var bodyLength: Int { chunks.reduce(0) { $0 + $1.length } }

    func validate() throws(RTPError) {
        try Self.checkCount(chunks.count, of: "chunks", in: packetType)
        for (chunkIndex, chunk) in chunks.enumerated() {
            for item in chunk.items {
                guard item.type.rawValue != 0 else {
                    throw RTPError(
                        .invalidField,
                        "SDES chunk \(chunkIndex): item type 0 is reserved for the end of the list"
                    )
                }
                guard item.value.count <= 255 else {
                    throw RTPError(
                        .invalidField,
                        "SDES chunk \(chunkIndex): item of type \(item.type.rawValue) has \(item.value.count) bytes; "
                            + "the length field allows 255"
                    )
                }
            }
        }
    }

    func writeBody(to writer: inout ByteWriter) {
        for chunk in chunks {
            let start = writer.offset
            writer.write(chunk.source)
            for item in chunk.items {
                writer.write(item.type.rawValue)
                writer.write(UInt8(truncatingIfNeeded: item.value.count))
                writer.write(item.value)
            }
            writer.writeZeros(chunk.length - (writer.offset - start))
        }
    }
}
