/// One access unit reassembled from RTP: the NAL units (without start codes) in the order they
/// arrived, and whether anything of it is known to be missing.
public struct H264AccessUnit: Sendable, Hashable {
    public var timestamp: UInt32
    public var nalUnits: [[UInt8]]
    /// False when a packet of this access unit was lost, a fragment was dropped, or it ended
    /// without its marker packet.
    public var isComplete: Bool

    public init(timestamp: UInt32, nalUnits: [[UInt8]], isComplete: Bool) {
        self.timestamp = timestamp
        self.nalUnits = nalUnits
        self.isComplete = isComplete
    }
}

/// Reassembles RFC 6184 packetization-mode=1 payloads (single NAL unit, STAP-A, FU-A) into NAL
/// units and access units: the receiving half of `H264Payloader`, for tests and a later receiver.
///
/// Packets are expected in sequence-number order (a jitter buffer's job comes first). A gap in
/// the sequence numbers drops the FU-A being reassembled (a NAL unit with a hole in it would
/// only mislead the decoder) and marks the access unit incomplete. Duplicates and packets
/// older than the last one are ignored. An access unit ends with its marker packet, or when
/// a packet with a new timestamp shows the marker was lost.
public struct H264Depacketizer: Sendable {
    /// Bounds on what one stream can make this type hold in memory.
    public struct Limits: Sendable, Hashable {
        public var maximumNALUnitLength: Int
        public var maximumAccessUnitLength: Int
        public var maximumNALUnitsPerAccessUnit: Int

        /// 4 MiB per NAL unit, 16 MiB and 4096 NAL units per access unit: far beyond an 8K IDR.
        public init(
            maximumNALUnitLength: Int = 4 << 20,
            maximumAccessUnitLength: Int = 16 << 20,
            maximumNALUnitsPerAccessUnit: Int = 4096
        ) {
            self.maximumNALUnitLength = maximumNALUnitLength
            self.maximumAccessUnitLength = maximumAccessUnitLength
            self.maximumNALUnitsPerAccessUnit = maximumNALUnitsPerAccessUnit
        }
    }

    public struct Statistics: Sendable, Hashable {
        /// Packets missing from the sequence-number series.
        public var lostPackets = 0
        /// Same sequence number as the previous packet.
        public var duplicatePackets = 0
        /// Sequence number behind the previous packet.
        public var latePackets = 0
        /// FU-A NAL units thrown away because a fragment was missing.
        public var droppedFragmentedNALUnits = 0
        /// Packets rejected as malformed.
        public var malformedPackets = 0
    }

    public let limits: Limits
    public private(set) var statistics = Statistics()

    private var lastSequenceNumber: UInt16?
    private var current: H264AccessUnit?
    private var currentLength = 0
    /// The FU-A NAL unit being reassembled (header byte first).
    private var fragmented: [UInt8]?
    /// True after an FU-A was dropped, until the next start: its remaining fragments are
    /// orphans of a NAL unit already counted as dropped.
    private var skippingFragments = false

    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// Feeds one RTP packet; returns the access units it completed (usually none or one).
    public mutating func push(_ packet: RTPPacket) throws(RTPError) -> [H264AccessUnit] {
        try push(
            payload: packet.payload[...],
            sequenceNumber: packet.header.sequenceNumber,
            timestamp: packet.header.timestamp,
            marker: packet.header.marker
        )
    }

    /// Feeds one RTP payload with its header fields. A malformed payload throws `RTPError`;
    /// the depacketizer treats it as a lost packet and stays usable.
    public mutating func push(
        payload: ArraySlice<UInt8>,
        sequenceNumber: UInt16,
        timestamp: UInt32,
        marker: Bool
    ) throws(RTPError) -> [H264AccessUnit] {
        var completed: [H264AccessUnit] = []
        var gap = false
        if let lastSequenceNumber {
            let distance = sequenceNumber &- lastSequenceNumber
            if distance == 0 {
                statistics.duplicatePackets += 1
                return []
            }
            if distance >= 0x8000 {
                statistics.latePackets += 1
                return []
            }
            if distance > 1 {
                gap = true
                statistics.lostPackets += Int(distance) - 1
            }
        }
        lastSequenceNumber = sequenceNumber

        if let unit = current, unit.timestamp != timestamp {
            completed.append(finishCurrent(complete: false))
        }
        if gap {
            dropFragment()
            markIncomplete()
        }
        if current == nil {
            current = H264AccessUnit(timestamp: timestamp, nalUnits: [], isComplete: !gap)
            currentLength = 0
        }

        do {
            try consume(payload)
        } catch {
            statistics.malformedPackets += 1
            dropFragment()
            markIncomplete()
            throw error
        }

        if marker {
            completed.append(finishCurrent(complete: true))
        }
        return completed
    }

    /// Hands out what is held: the access unit in progress, marked incomplete (its marker
    /// packet has not arrived), or nil.
    public mutating func flush() -> H264AccessUnit? {
        guard current != nil else { return nil }
        return finishCurrent(complete: false)
    }

    // MARK: Payload structures (RFC 6184 §5.6–5.8)

    private mutating func consume(_ payload: ArraySlice<UInt8>) throws(RTPError) {
        guard let headerByte = payload.first else {
            throw RTPError(.invalidH264Payload, "H.264 RTP payload is empty")
        }
        let type = H264NALUnitType(headerByte: headerByte)
        switch type.rawValue {
        case 1...23:
            // A complete NAL unit ends any fragmented one that was left open.
            dropFragment()
            skippingFragments = false
            try append(payload)
        case H264NALUnitType.stapA.rawValue:
            dropFragment()
            skippingFragments = false
            try consumeAggregate(payload)
        case H264NALUnitType.fuA.rawValue:
            try consumeFragment(payload)
        default:
            throw RTPError(
                .invalidH264Payload,
                "H.264 RTP payload of type \(type) is not allowed in packetization-mode=1 (RFC 6184 §6.3)"
            )
        }
    }

    /// RFC 6184 §5.7.1: a header byte, then (16-bit size, NAL unit) pairs to the end. Checked
    /// completely before anything is appended, so a broken STAP-A adds nothing.
    private mutating func consumeAggregate(_ payload: ArraySlice<UInt8>) throws(RTPError) {
        var index = payload.startIndex + 1
        var count = 0
        while index < payload.endIndex {
            guard payload.endIndex - index >= 2 else {
                throw RTPError(
                    .invalidH264Payload,
                    "STAP-A: 1 byte left at payload offset \(index - payload.startIndex), need 2 for a NAL unit size"
                )
            }
            let size = Int(payload[index]) << 8 | Int(payload[index + 1])
            guard size > 0 else {
                throw RTPError(
                    .invalidH264Payload,
                    "STAP-A: NAL unit size 0 at payload offset \(index - payload.startIndex)"
                )
            }
            guard size <= payload.endIndex - index - 2 else {
                throw RTPError(
                    .invalidH264Payload,
                    "STAP-A: NAL unit size \(size) at payload offset \(index - payload.startIndex) exceeds the "
                        + "\(payload.endIndex - index - 2) bytes that follow"
                )
            }
            index += 2 + size
            count += 1
        }
        guard count > 0 else {
            throw RTPError(.invalidH264Payload, "STAP-A carries no NAL unit")
        }
        index = payload.startIndex + 1
        while index < payload.endIndex {
            let size = Int(payload[index]) << 8 | Int(payload[index + 1])
            try append(payload[index + 2..<index + 2 + size])
            index += 2 + size
        }
    }

    /// RFC 6184 §5.8: FU indicator (F, NRI, type 28), FU header (S, E, R, type), data.
    private mutating func consumeFragment(_ payload: ArraySlice<UInt8>) throws(RTPError) {
        guard payload.count >= 2 else {
            throw RTPError(.invalidH264Payload, "FU-A payload of \(payload.count) byte has no FU header")
        }
        let indicator = payload[payload.startIndex]
        let header = payload[payload.startIndex + 1]
        let isStart = header & 0x80 != 0
        let isEnd = header & 0x40 != 0
        let data = payload.dropFirst(2)
        guard !(isStart && isEnd) else {
            throw RTPError(
                .invalidH264Payload,
                "FU-A with both start and end bits set (RFC 6184 §5.8 forbids it)"
            )
        }
        if isStart {
            dropFragment()
            skippingFragments = false
            var nal: [UInt8] = []
            nal.reserveCapacity(min(1 + data.count * 8, limits.maximumNALUnitLength))
            nal.append(indicator & 0xE0 | header & 0x1F)
            fragmented = nal
        }
        guard var nal = fragmented else {
            // A middle or end fragment whose start was lost: nothing to attach it to.
            if !skippingFragments {
                statistics.droppedFragmentedNALUnits += 1
                skippingFragments = true
            }
            markIncomplete()
            return
        }
        guard nal.count + data.count <= limits.maximumNALUnitLength else {
            dropFragment()
            throw RTPError(
                .tooLarge,
                "FU-A: reassembled NAL unit would exceed \(limits.maximumNALUnitLength) bytes"
            )
        }
        fragmented = nil  // keep `nal` uniquely referenced while appending
        nal.append(contentsOf: data)
        if isEnd {
            try append(nal[...])
        } else {
            fragmented = nal
        }
    }

    // MARK: Access unit bookkeeping

    private mutating func append(_ nal: ArraySlice<UInt8>) throws(RTPError) {
        guard var unit = current else { return }
        guard currentLength + nal.count <= limits.maximumAccessUnitLength,
            unit.nalUnits.count < limits.maximumNALUnitsPerAccessUnit
        else {
            unit.nalUnits = []
            unit.isComplete = false
            current = unit
            currentLength = 0
            throw RTPError(
                .tooLarge,
                "access unit at timestamp \(unit.timestamp) exceeds \(limits.maximumAccessUnitLength) bytes or "
                    + "\(limits.maximumNALUnitsPerAccessUnit) NAL units; dropped"
            )
        }
        current = nil  // keep the array uniquely referenced while appending
        unit.nalUnits.append(Array(nal))
        currentLength += nal.count
        current = unit
    }

    private mutating func dropFragment() {
        if fragmented != nil {
            fragmented = nil
            skippingFragments = true
            statistics.droppedFragmentedNALUnits += 1
            markIncomplete()
        }
    }

    private mutating func markIncomplete() {
        current?.isComplete = false
    }

    private mutating func finishCurrent(complete: Bool) -> H264AccessUnit {
        dropFragment()
        var unit = current ?? H264AccessUnit(timestamp: 0, nalUnits: [], isComplete: false)
        unit.isComplete = unit.isComplete && complete
        current = nil
        currentLength = 0
        return unit
    }
}
