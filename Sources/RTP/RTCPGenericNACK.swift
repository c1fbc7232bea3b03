/// Generic NACK, RTPFB FMT 1 (RFC 4585 §6.2.1): the receiver lists RTP packets it lost.
///
/// Each FCI entry is a PID (a lost sequence number) and a BLP bitmask whose bit i (least
/// significant first) reports PID + i + 1 lost too, so one entry covers 17 sequence numbers.
public struct RTCPGenericNACK: Sendable, Hashable {
    static let format: UInt8 = 1

    /// One FCI entry.
    public struct Entry: Sendable, Hashable {
        /// PID: the first lost sequence number.
        public var packetID: UInt16
        /// BLP: bit i set means `packetID + i + 1` is lost as well.
        public var lostBitmask: UInt16

        public init(packetID: UInt16, lostBitmask: UInt16) {
            self.packetID = packetID
            self.lostBitmask = lostBitmask
        }

        /// The sequence numbers this entry reports, PID first (wrapping past 65535).
        public var sequenceNumbers: [UInt16] {
            var result = [packetID]
            for bit in 0..<16 where lostBitmask & (1 << bit) != 0 {
                result.append(packetID &+ UInt16(bit + 1))
            }
            return result
        }
    }

    public var senderSSRC: UInt32
    public var mediaSSRC: UInt32
    /// The entries exactly as on the wire.
    public var entries: [Entry]

    public init(senderSSRC: UInt32, mediaSSRC: UInt32, entries: [Entry]) {
        self.senderSSRC = senderSSRC
        self.mediaSSRC = mediaSSRC
        self.entries = entries
    }

    /// Encodes a list of lost sequence numbers, given in the order they were lost (ascending
    /// modulo 2¹⁶): each number within 16 after the current entry's PID sets a BLP bit,
    /// any other starts a new entry. Repeats of a number already covered add nothing.
    public init(senderSSRC: UInt32, mediaSSRC: UInt32, lostSequenceNumbers: [UInt16]) {
        var entries: [Entry] = []
        for sequenceNumber in lostSequenceNumbers {
            if let last = entries.last {
                let distance = sequenceNumber &- last.packetID
                if distance == 0 { continue }
                if distance <= 16 {
                    entries[entries.count - 1].lostBitmask |= 1 << (distance - 1)
                    continue
                }
            }
            entries.append(Entry(packetID: sequenceNumber, lostBitmask: 0))
        }
        self.init(senderSSRC: senderSSRC, mediaSSRC: mediaSSRC, entries: entries)
    }

    /// Every sequence number reported lost, entry by entry.
    public var lostSequenceNumbers: [UInt16] {
        entries.flatMap(\.sequenceNumbers)
    }

    static func read(from reader: inout ByteReader) throws(RTPError) -> RTCPGenericNACK {
        var nack = RTCPGenericNACK(
            senderSSRC: try reader.readUInt32("sender SSRC"),
            mediaSSRC: try reader.readUInt32("media source SSRC"),
            entries: []
        )
        guard reader.remaining % 4 == 0 else {
            throw RTPError(
                .invalidLength,
                "\(reader.context): \(reader.remaining) bytes of NACK entries, not a multiple of 4"
            )
        }
        nack.entries.reserveCapacity(reader.remaining / 4)
        while reader.remaining > 0 {
            nack.entries.append(
                Entry(packetID: try reader.readUInt16("NACK PID"), lostBitmask: try reader.readUInt16("NACK BLP"))
            )
        }
        return nack
    }
}

extension RTCPGenericNACK: RTCPPacketBody {
    var packetType: RTCPPacketType { .transportFeedback }
    var countField: UInt8 { Self.format }
    var bodyLength: Int { 8 + 4 * entries.count }

    func validate() throws(RTPError) {}

    func writeBody(to writer: inout ByteWriter) {
        writer.write(senderSSRC)
        writer.write(mediaSSRC)
        for entry in entries {
            writer.write(entry.packetID)
            writer.write(entry.lostBitmask)
        }
    }
}
