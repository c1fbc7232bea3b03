/// Transport-wide congestion control feedback, RTPFB FMT 15
/// (draft-holmer-rmcat-transport-wide-cc-extensions-01 §3.1): for a window of transport-wide
/// sequence numbers (§2, `RTPTransportSequenceNumber`), which packets arrived and when, on the
/// receiver's clock.
///
/// ```
/// | sender SSRC | media SSRC | base sequence number (16) | packet status count (16) |
/// | reference time (24, signed, × 64 ms) | feedback packet count (8) |
/// | packet chunks, 16 bits each … | receive deltas, 8 or 16 bits each … | zero padding |
/// ```
///
/// §3.1.1–3.1.4: the chunks give each packet of the window a 2-bit status symbol, either as a
/// run (run-length chunk: T=0, symbol, 13-bit length) or as a vector (T=1; S=0: fourteen 1-bit
/// symbols, S=1: seven 2-bit symbols). §3.1.5: each received packet then has a receive delta, in
/// 250 µs units, from the previous received packet (the first from the reference time): one
/// unsigned byte (0–63.75 ms) for symbol 1, a signed 16-bit value (−8192–8191.75 ms) for
/// symbol 2. Symbol 3 is reserved.
///
/// The value keeps what the message says, not how it was encoded: the received packets and
/// their arrival times, in sequence order; every other number of the window was not received.
/// Two encodings of the same feedback (run-length or vector chunks, a small delta sent as a
/// large one, RTCP padding or zero padding) parse to equal values, and the writer chooses its
/// own chunks. Only the received packets are stored, so what parsing allocates is bounded by
/// the receive deltas present, whatever the status count claims.
public struct RTCPTransportFeedback: Sendable, Hashable {
    static let format: UInt8 = 15

    /// §3.1.5: a receive delta counts 250 µs.
    public static let deltaTick: Int64 = 250
    /// §3.1: the reference time counts 64 ms (256 delta ticks).
    public static let referenceTimeTick: Int64 = 64_000
    /// The signed 24-bit reference time field.
    public static let referenceTimeRange: ClosedRange<Int32> = -0x80_0000...0x7F_FFFF
    /// The reference time repeats after 2²⁴ × 64 ms (about 12.4 days). The builder wraps it, as
    /// libwebrtc does, so a reader compares reference times of successive feedback modulo this.
    public static let referenceTimeWrapPeriod: Int64 = (1 << 24) * 64_000

    /// Bytes after the RTCP header before the first chunk: SSRCs, base sequence number, status
    /// count, reference time, feedback packet count.
    static let fixedLength = 16
    /// The 13-bit run length of a run-length chunk.
    static let maximumRunLength = 0x1FFF
    /// A small delta's range in ticks (one unsigned byte).
    static let smallDeltaRange: ClosedRange<Int64> = 0...255
    /// A large delta's range in ticks (a signed 16-bit value).
    static let largeDeltaRange: ClosedRange<Int64> = Int64(Int16.min)...Int64(Int16.max)

    /// §3.1.1 packet status symbols.
    enum Symbol {
        static let notReceived: UInt8 = 0
        /// Received, with a 1-byte delta.
        static let smallDelta: UInt8 = 1
        /// Received, with a 2-byte signed delta.
        static let largeDelta: UInt8 = 2
        static let reserved: UInt8 = 3
    }

    /// A packet the feedback reports received.
    public struct ReceivedPacket: Sendable, Hashable {
        public var sequenceNumber: UInt16
        /// Microseconds on the feedback sender's clock: the reference time × 64 ms plus the
        /// receive deltas up to and including this packet's.
        public var arrivalTime: Int64

        public init(sequenceNumber: UInt16, arrivalTime: Int64) {
            self.sequenceNumber = sequenceNumber
            self.arrivalTime = arrivalTime
        }
    }

    /// One packet of the window.
    public struct PacketStatus: Sendable, Hashable {
        public var sequenceNumber: UInt16
        /// Microseconds on the feedback sender's clock; nil when not received (§3.1.1: not
        /// necessarily lost, it may not have arrived yet).
        public var arrivalTime: Int64?

        public init(sequenceNumber: UInt16, arrivalTime: Int64?) {
            self.sequenceNumber = sequenceNumber
            self.arrivalTime = arrivalTime
        }

        public var isReceived: Bool { arrivalTime != nil }
    }

    public var senderSSRC: UInt32
    /// §3.1 leaves it open which media SSRC a transport-wide message names; libwebrtc puts the
    /// first media stream's.
    public var mediaSSRC: UInt32
    /// The first sequence number of the window.
    public var baseSequenceNumber: UInt16
    /// How many sequence numbers, from the base on (wrapping past 65535), the window covers.
    public var packetStatusCount: UInt16
    /// Signed 24-bit (`referenceTimeRange`), in units of 64 ms.
    public var referenceTime: Int32
    /// Counts feedback messages, so that the media sender can tell one was lost.
    public var feedbackPacketCount: UInt8
    /// The received packets, in window order (ascending from the base, modulo 2¹⁶).
    public var receivedPackets: [ReceivedPacket]

    /// A message with every field given; `RTCPPacket.serialize` checks it (arrival times on the
    /// 250 µs grid, each delta within 16 bits, the packets in window order).
    public init(
        senderSSRC: UInt32,
        mediaSSRC: UInt32,
        baseSequenceNumber: UInt16,
        packetStatusCount: UInt16,
        referenceTime: Int32,
        feedbackPacketCount: UInt8,
        receivedPackets: [ReceivedPacket]
    ) {
        self.senderSSRC = senderSSRC
        self.mediaSSRC = mediaSSRC
        self.baseSequenceNumber = baseSequenceNumber
        self.packetStatusCount = packetStatusCount
        self.referenceTime = referenceTime
        self.feedbackPacketCount = feedbackPacketCount
        self.receivedPackets = receivedPackets
    }

    /// Builds feedback the way a receiver sends it. `packets` are in transport-wide sequence
    /// order, each newer than the one before (modulo 2¹⁶); the first one's number is the base,
    /// and numbers skipped between two entries are not received, like entries without an
    /// arrival time.
    ///
    /// Arrival times are rounded to 250 µs. The reference time is the first received packet's
    /// arrival rounded down to 64 ms, wrapped into 24 bits as libwebrtc does: arrival times
    /// read back differ from those given by a multiple of `referenceTimeWrapPeriod` when it
    /// wrapped (beyond ±6.2 days), and are otherwise the rounded values.
    ///
    /// Throws for an empty list (libwebrtc drops empty feedback), numbers out of order or
    /// spanning more than 65,535, and an arrival more than 8191.75 ms after or 8192 ms before the
    /// previous received packet's (§3.1.5: a new feedback message must start there).
    public init(
        senderSSRC: UInt32,
        mediaSSRC: UInt32,
        feedbackPacketCount: UInt8,
        packets: [PacketStatus]
    ) throws(RTPError) {
        guard let first = packets.first else {
            throw RTPError(
                .invalidField,
                "transport feedback needs at least one packet status; libwebrtc drops empty ones"
            )
        }
        var received: [ReceivedPacket] = []
        received.reserveCapacity(packets.count)
        var offset = 0
        var previousSequenceNumber = first.sequenceNumber
        var reference: Int64 = 0
        // The previous received packet (ticks on the caller's timeline, and its arrival as
        // given), and how many ticks wrapping the reference time into 24 bits took off.
        var previousTicks: Int64?
        var previousArrival: Int64 = 0
        var wrappedTicks: Int64 = 0
        for (index, packet) in packets.enumerated() {
            if index > 0 {
                let step = Int(packet.sequenceNumber &- previousSequenceNumber)
                guard step != 0, step < 0x8000 else {
                    throw RTPError(
                        .invalidField,
                        "transport feedback packet status \(index): sequence number \(packet.sequenceNumber) "
                            + "is not newer than \(previousSequenceNumber)"
                    )
                }
                offset += step
                guard offset < Int(UInt16.max) else {
                    throw RTPError(
                        .invalidField,
                        "transport feedback packet status \(index): sequence number \(packet.sequenceNumber) is "
                            + "\(offset) after the base \(first.sequenceNumber); the status count allows 65,535 packets"
                    )
                }
                previousSequenceNumber = packet.sequenceNumber
            }
            guard let arrival = packet.arrivalTime else { continue }
            let ticks = Self.roundedTicks(arrival)
            let previous: Int64
            if let previousTicks {
                previous = previousTicks
            } else {
                let unwrapped = Self.floorDivide(ticks, by: Self.referenceTimeTick / Self.deltaTick)
                reference = (unwrapped << 40) >> 40
                wrappedTicks = (unwrapped - reference) * (Self.referenceTimeTick / Self.deltaTick)
                previous = unwrapped * (Self.referenceTimeTick / Self.deltaTick)
            }
            guard Self.largeDeltaRange.contains(ticks - previous) else {
                throw RTPError(
                    .invalidField,
                    "transport feedback packet status \(index) (sequence number \(packet.sequenceNumber)): arrival "
                        + "\(arrival) µs is not within −8192000…8191750 µs of the previous arrival, \(previousArrival) "
                        + "µs: a receive delta cannot hold it, a new feedback message must start here (§3.1.5)"
                )
            }
            received.append(
                ReceivedPacket(
                    sequenceNumber: packet.sequenceNumber,
                    arrivalTime: (ticks - wrappedTicks) * Self.deltaTick
                )
            )
            previousTicks = ticks
            previousArrival = arrival
        }
        self.init(
            senderSSRC: senderSSRC,
            mediaSSRC: mediaSSRC,
            baseSequenceNumber: first.sequenceNumber,
            packetStatusCount: UInt16(offset + 1),
            referenceTime: Int32(reference),
            feedbackPacketCount: feedbackPacketCount,
            receivedPackets: received
        )
    }

    // MARK: Reading the statuses

    /// The reference time in microseconds: `referenceTime` × 64 ms.
    public var referenceTimeMicroseconds: Int64 { Int64(referenceTime) * Self.referenceTimeTick }

    /// How many packets of the window were not received.
    public var notReceivedCount: Int { max(0, Int(packetStatusCount) - receivedPackets.count) }

    /// Whether `sequenceNumber` lies in the window: base … base + count − 1, modulo 2¹⁶.
    public func covers(_ sequenceNumber: UInt16) -> Bool {
        Int(sequenceNumber &- baseSequenceNumber) < Int(packetStatusCount)
    }

    /// The arrival time of `sequenceNumber` in microseconds; nil when it was not received or
    /// lies outside the window. A binary search over the received packets, no allocation.
    public func arrivalTime(of sequenceNumber: UInt16) -> Int64? {
        let target = Int(sequenceNumber &- baseSequenceNumber)
        guard target < Int(packetStatusCount) else { return nil }
        var low = 0
        var high = receivedPackets.count
        while low < high {
            let middle = (low + high) / 2
            if Int(receivedPackets[middle].sequenceNumber &- baseSequenceNumber) < target {
                low = middle + 1
            } else {
                high = middle
            }
        }
        guard low < receivedPackets.count, receivedPackets[low].sequenceNumber == sequenceNumber else { return nil }
        return receivedPackets[low].arrivalTime
    }

    /// Calls `body` for each packet of the window in order, received or not, without allocating.
    public func forEachStatus<E: Error>(_ body: (PacketStatus) throws(E) -> Void) throws(E) {
        var next = 0
        for position in 0..<Int(packetStatusCount) {
            let sequenceNumber = baseSequenceNumber &+ UInt16(truncatingIfNeeded: position)
            if next < receivedPackets.count, receivedPackets[next].sequenceNumber == sequenceNumber {
                try body(PacketStatus(sequenceNumber: sequenceNumber, arrivalTime: receivedPackets[next].arrivalTime))
                next += 1
            } else {
                try body(PacketStatus(sequenceNumber: sequenceNumber, arrivalTime: nil))
            }
        }
    }

    /// Every packet of the window, one entry each (allocates: for tests and logs; the send side
    /// walks `forEachStatus` or `receivedPackets`).
    public var packetStatuses: [PacketStatus] {
        var result: [PacketStatus] = []
        result.reserveCapacity(Int(packetStatusCount))
        forEachStatus { result.append($0) }
        return result
    }

    // MARK: Parsing

    /// Reads the body after the RTCP header. Two passes over the chunks: the first checks them
    /// against the status count and sums the receive deltas they announce, so that the bytes
    /// are known to be there before the one array is sized; the second reads the deltas. A run
    /// of packets not received costs nothing per packet in either pass.
    static func read(from reader: inout ByteReader) throws(RTPError) -> RTCPTransportFeedback {
        let senderSSRC = try reader.readUInt32("sender SSRC")
        let mediaSSRC = try reader.readUInt32("media source SSRC")
        let base = try reader.readUInt16("base sequence number")
        let count = Int(try reader.readUInt16("packet status count"))
        let rawReference = try reader.readUInt24("reference time")
        let feedbackPacketCount = try reader.readUInt8("feedback packet count")
        let reference = Int32(bitPattern: rawReference << 8) >> 8

        let chunksStart = reader.offset
        var described = 0
        var received = 0
        var deltaBytes = 0
        var chunkIndex = 0
        while described < count {
            guard reader.remaining >= 2 else {
                throw RTPError(
                    .truncated,
                    "\(reader.context): \(reader.remaining) bytes left at offset \(reader.offset), need 2 for packet "
                        + "chunk \(chunkIndex); the chunks before it describe \(described) of the \(count) packet statuses"
                )
            }
            let chunkOffset = reader.offset
            let chunk = try reader.readUInt16("packet chunk")
            // Symbols past the status count (the rest of a vector, a longer run) are ignored.
            let used = min(capacity(of: chunk), count - described)
            let isRun = chunk & 0x8000 == 0
            for index in 0..<(isRun ? min(used, 1) : used) {
                let symbol = Self.symbol(in: chunk, at: index)
                guard symbol != Symbol.reserved else {
                    let status = described + index
                    throw RTPError(
                        .invalidField,
                        "\(reader.context): packet chunk 0x\(String(chunk, radix: 16, uppercase: true)) at offset "
                            + "\(chunkOffset) gives status \(status) of \(count) (sequence number "
                            + "\(base &+ UInt16(truncatingIfNeeded: status))) the reserved symbol 3 (§3.1.1)"
                    )
                }
                // Symbols 1 and 2 announce a delta of that many bytes.
                let packets = isRun ? used : 1
                if symbol != Symbol.notReceived {
                    received += packets
                    deltaBytes += packets * Int(symbol)
                }
            }
            described += used
            chunkIndex += 1
        }

        let deltasStart = reader.offset
        guard reader.remaining >= deltaBytes else {
            throw RTPError(
                .truncated,
                "\(reader.context): \(reader.remaining) bytes left at offset \(deltasStart), need \(deltaBytes) for the "
                    + "receive deltas of \(received) received packets"
            )
        }
        let trailing = reader.remaining - deltaBytes
        guard trailing <= 3 else {
            throw RTPError(
                .invalidLength,
                "\(reader.context): \(trailing) bytes follow the receive deltas at offset \(deltasStart + deltaBytes); "
                    + "only zero padding to a 32-bit boundary (at most 3 bytes) may"
            )
        }

        let bytes = reader.bytes
        var packets: [ReceivedPacket] = []
        packets.reserveCapacity(received)
        var chunkOffset = chunksStart
        var deltaOffset = deltasStart
        var time = Int64(reference) * referenceTimeTick
        var position = 0
        while position < count {
            let chunk = UInt16(bytes[chunkOffset]) << 8 | UInt16(bytes[chunkOffset + 1])
            chunkOffset += 2
            let used = min(capacity(of: chunk), count - position)
            if chunk & 0x8000 == 0, Self.symbol(in: chunk, at: 0) == Symbol.notReceived {
                position += used
                continue
            }
            for index in 0..<used {
                switch Self.symbol(in: chunk, at: index) {
                case Symbol.smallDelta:
                    time += Int64(bytes[deltaOffset]) * deltaTick
                    deltaOffset += 1
                case Symbol.largeDelta:
                    let raw = UInt16(bytes[deltaOffset]) << 8 | UInt16(bytes[deltaOffset + 1])
                    time += Int64(Int16(bitPattern: raw)) * deltaTick
                    deltaOffset += 2
                default:
                    continue
                }
                packets.append(
                    ReceivedPacket(
                        sequenceNumber: base &+ UInt16(truncatingIfNeeded: position + index),
                        arrivalTime: time
                    )
                )
            }
            position += used
        }
        try reader.advance(reader.remaining, "receive deltas and padding")
        return RTCPTransportFeedback(
            senderSSRC: senderSSRC,
            mediaSSRC: mediaSSRC,
            baseSequenceNumber: base,
            packetStatusCount: UInt16(count),
            referenceTime: reference,
            feedbackPacketCount: feedbackPacketCount,
            receivedPackets: packets
        )
    }

    /// How many statuses a chunk holds: its run length, 14 or 7 (§3.1.3, §3.1.4).
    static func capacity(of chunk: UInt16) -> Int {
        if chunk & 0x8000 == 0 { return Int(chunk & 0x1FFF) }
        return chunk & 0x4000 == 0 ? 14 : 7
    }

    /// The symbol of the `index`th status in a chunk (the first symbol for a run).
    static func symbol(in chunk: UInt16, at index: Int) -> UInt8 {
        if chunk & 0x8000 == 0 { return UInt8(truncatingIfNeeded: chunk >> 13) & 0x03 }
        if chunk & 0x4000 == 0 { return UInt8(truncatingIfNeeded: chunk >> (13 - index)) & 0x01 }
        return UInt8(truncatingIfNeeded: chunk >> (12 - 2 * index)) & 0x03
    }

    // MARK: Helpers for the builder and the writer

    /// `value` / `divisor` rounded toward −∞; `divisor` > 0. No multiplication, so no overflow.
    static func floorDivide(_ value: Int64, by divisor: Int64) -> Int64 {
        let quotient = value / divisor
        return value % divisor < 0 ? quotient - 1 : quotient
    }

    /// Microseconds to 250 µs ticks, to the nearest (halves up).
    static func roundedTicks(_ microseconds: Int64) -> Int64 {
        var quotient = microseconds / deltaTick
        var remainder = microseconds % deltaTick
        if remainder < 0 {
            quotient -= 1
            remainder += deltaTick
        }
        return remainder * 2 >= deltaTick ? quotient + 1 : quotient
    }

    /// The symbol a delta of `ticks` is written with.
    static func symbol(forDelta ticks: Int64) -> UInt8 {
        smallDeltaRange.contains(ticks) ? Symbol.smallDelta : Symbol.largeDelta
    }

    /// Each received packet's delta in ticks from the one before (the first from the reference
    /// time). Wrapping arithmetic: `validate` refuses values that would not fit, and nothing
    /// here may trap on them first.
    func forEachDelta(_ body: (Int64) -> Void) {
        var previous = Int64(referenceTime) &* Self.referenceTimeTick
        for packet in receivedPackets {
            body((packet.arrivalTime &- previous) / Self.deltaTick)
            previous = packet.arrivalTime
        }
    }

    /// The chunks the writer puts on the wire, in order.
    func forEachChunk(_ emit: (UInt16) -> Void) {
        var encoder = TransportFeedbackChunkEncoder()
        var position = 0
        var previous = Int64(referenceTime) &* Self.referenceTimeTick
        for packet in receivedPackets {
            let offset = Int(packet.sequenceNumber &- baseSequenceNumber)
            if offset > position {
                encoder.add(Symbol.notReceived, count: offset - position, emit)
            }
            encoder.add(Self.symbol(forDelta: (packet.arrivalTime &- previous) / Self.deltaTick), count: 1, emit)
            previous = packet.arrivalTime
            position = max(position, offset + 1)
        }
        if Int(packetStatusCount) > position {
            encoder.add(Symbol.notReceived, count: Int(packetStatusCount) - position, emit)
        }
        encoder.finish(emit)
    }
}

extension RTCPTransportFeedback: RTCPPacketBody {
    var packetType: RTCPPacketType { .transportFeedback }
    var countField: UInt8 { Self.format }

    var bodyLength: Int {
        var length = Self.fixedLength
        forEachChunk { _ in length += 2 }
        forEachDelta { length += Self.symbol(forDelta: $0) == Symbol.smallDelta ? 1 : 2 }
        return (length + 3) & ~3
    }

    func validate() throws(RTPError) {
        guard Self.referenceTimeRange.contains(referenceTime) else {
            throw RTPError(
                .invalidField,
                "transport feedback reference time \(referenceTime) does not fit the signed 24-bit field "
                    + "(−8388608…8388607)"
            )
        }
        var position = 0
        var previous = Int64(referenceTime) * Self.referenceTimeTick
        for (index, packet) in receivedPackets.enumerated() {
            let offset = Int(packet.sequenceNumber &- baseSequenceNumber)
            guard offset >= position, offset < Int(packetStatusCount) else {
                throw RTPError(
                    .invalidField,
                    "transport feedback received packet \(index): sequence number \(packet.sequenceNumber) does not "
                        + "follow the previous one within the \(packetStatusCount) statuses from \(baseSequenceNumber)"
                )
            }
            let (difference, overflow) = packet.arrivalTime.subtractingReportingOverflow(previous)
            guard !overflow, difference % Self.deltaTick == 0,
                Self.largeDeltaRange.contains(difference / Self.deltaTick)
            else {
                throw RTPError(
                    .invalidField,
                    "transport feedback received packet \(index) (sequence number \(packet.sequenceNumber)): arrival "
                        + "\(packet.arrivalTime) µs is not a multiple of 250 µs within −8192000…8191750 µs of the "
                        + "previous arrival (§3.1.5)"
                )
            }
            previous = packet.arrivalTime
            position = offset + 1
        }
    }

    /// Zero padding (the draft's figure), not RTCP padding, ends the body on a word boundary.
    func writeBody(to writer: inout ByteWriter) {
        let start = writer.offset
        writer.write(senderSSRC)
        writer.write(mediaSSRC)
        writer.write(baseSequenceNumber)
        writer.write(packetStatusCount)
        writer.writeUInt24(UInt32(bitPattern: referenceTime) & 0xFF_FFFF)
        writer.write(feedbackPacketCount)
        forEachChunk { writer.write($0) }
        forEachDelta { ticks in
            if Self.symbol(forDelta: ticks) == Symbol.smallDelta {
                writer.write(UInt8(truncatingIfNeeded: ticks))
            } else {
                writer.write(UInt16(truncatingIfNeeded: ticks))
            }
        }
        writer.writeZeros((4 - (writer.offset - start) % 4) % 4)
    }
}

/// Chooses packet chunks for a sequence of status symbols, as libwebrtc does: a run-length
/// chunk while the symbols repeat, else a status vector, one-bit (14 symbols) unless a large
/// delta needs the two-bit form (7 symbols). Streaming, with at most 14 symbols pending, so
/// writing allocates nothing; a run of any length costs one step per 8191 packets.
struct TransportFeedbackChunkEncoder {
    private typealias Symbol = RTCPTransportFeedback.Symbol

    /// The first 14 pending symbols, 2 bits each, the oldest in the lowest bits.
    private var pending: UInt32 = 0
    private var size = 0
    private var allSame = true
    private var hasLarge = false

    private var first: UInt8 { UInt8(truncatingIfNeeded: pending) & 0x03 }

    private func symbol(at index: Int) -> UInt8 {
        UInt8(truncatingIfNeeded: pending >> (2 * index)) & 0x03
    }

    /// Adds `count` statuses with the same symbol, emitting each chunk as it fills.
    mutating func add(_ symbol: UInt8, count: Int, _ emit: (UInt16) -> Void) {
        var left = count
        while left > 0 {
            if size == 0 || (allSame && symbol == first) {
                guard size < RTCPTransportFeedback.maximumRunLength else {
                    emitFull(emit)
                    continue
                }
                let taken = min(left, RTCPTransportFeedback.maximumRunLength - size)
                size += taken
                left -= taken
                pending = 0
                for index in 0..<min(size, 14) {
                    pending |= UInt32(symbol) << (2 * index)
                }
                allSame = true
                hasLarge = symbol == Symbol.largeDelta
                continue
            }
            guard canAdd(symbol) else {
                emitFull(emit)
                continue
            }
            pending |= UInt32(symbol) << (2 * size)
            allSame = false
            hasLarge = hasLarge || symbol == Symbol.largeDelta
            size += 1
            left -= 1
        }
    }

    /// Emits what is pending as the last chunk.
    mutating func finish(_ emit: (UInt16) -> Void) {
        guard size > 0 else { return }
        if allSame {
            emit(UInt16(first) << 13 | UInt16(size))
        } else if !hasLarge {
            emit(oneBitVector(size))
        } else {
            emit(twoBitVector(size))
        }
        clear()
    }

    /// A symbol unlike the pending run fits while a vector can still hold it.
    private func canAdd(_ symbol: UInt8) -> Bool {
        if size < 7 { return true }
        return size < 14 && !hasLarge && symbol != Symbol.largeDelta
    }

    /// The pending symbols cannot take the next one: a run goes out whole, fourteen 1-bit
    /// symbols as one vector, otherwise the first seven as a 2-bit vector.
    private mutating func emitFull(_ emit: (UInt16) -> Void) {
        if allSame {
            emit(UInt16(first) << 13 | UInt16(size))
            clear()
        } else if size == 14 {
            emit(oneBitVector(14))
            clear()
        } else {
            emit(twoBitVector(7))
            pending >>= 14
            size -= 7
            allSame = true
            hasLarge = false
            for index in 0..<size {
                let value = symbol(at: index)
                allSame = allSame && value == first
                hasLarge = hasLarge || value == Symbol.largeDelta
            }
        }
    }

    private mutating func clear() {
        pending = 0
        size = 0
        allSame = true
        hasLarge = false
    }

    /// T=1, S=0: the first `count` symbols (0 or 1) from bit 13 down; unused slots are 0.
    private func oneBitVector(_ count: Int) -> UInt16 {
        var chunk: UInt16 = 0x8000
        for index in 0..<count {
            chunk |= UInt16(symbol(at: index) & 0x01) << (13 - index)
        }
        return chunk
    }

    /// T=1, S=1: the first `count` symbols, two bits each from bits 13–12 down.
    private func twoBitVector(_ count: Int) -> UInt16 {
        var chunk: UInt16 = 0xC000
        for index in 0..<count {
            chunk |= UInt16(symbol(at: index)) << (12 - 2 * index)
        }
        return chunk
    }
}
