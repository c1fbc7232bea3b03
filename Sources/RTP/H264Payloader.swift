/// Packs H.264 access units into RTP payloads, RFC 6184 packetization-mode=1 (non-interleaved).
///
/// What goes out for one access unit (NAL units in decode order, without start codes):
/// - A NAL unit that fits the payload budget travels alone: single NAL unit packet (§5.6).
/// - A larger one is cut into FU-A fragments (§5.8) of near-equal size: S on the first, E on
///   the last, never both on one; NRI and type carried in the FU indicator and header.
/// - SPS and PPS travel together as one STAP-A (§5.7.1) where the first of them stood. Before
///   an IDR whose access unit lacks them, the last SPS/PPS seen are inserted, so a receiver
///   that joins mid-stream (or ffplay, which needs them in-band) can always decode the IDR.
/// - Empty NAL units are skipped; access unit delimiters (type 9) and filler data (12) are not
///   sent: the RTP timestamp and marker bit already delimit access units, and filler is only
///   constant-bitrate padding, so both would cost bandwidth and tell a receiver nothing.
/// - Every packet of the access unit carries the same timestamp; the marker bit is set on the
///   last packet of the access unit and only there (§5.1).
///
/// Copies: each NAL byte is copied exactly once, from the encoder's buffer straight into the
/// packet buffer behind the RTP header; FU-A and STAP-A headers are written in place around it.
/// No heap allocation happens per packet (the remembered SPS/PPS are copied only when they change).
public struct H264Payloader: Sendable {
    public let budget: RTPPayloadBudget
    /// The most recent SPS seen, inserted before IDRs whose access unit lacks one.
    public private(set) var sequenceParameterSet: [UInt8]?
    /// The most recent PPS seen, inserted before IDRs whose access unit lacks one.
    public private(set) var pictureParameterSet: [UInt8]?

    public init(budget: RTPPayloadBudget = .standard) {
        self.budget = budget
    }

    /// Hot path: writes each RTP packet of `accessUnit` into `buffer` (header from `stream`,
    /// which also hands out the sequence numbers) and calls `emit` with it, once per packet,
    /// in order. `buffer` is reused for the next packet as soon as `emit` returns; there is
    /// spare capacity after the packet for an SRTP trailer added in place.
    ///
    /// Returns the number of packets emitted. Throws `RTPError` before sending anything when
    /// the budget leaves no room for a payload, the buffer is smaller than the budget's packet,
    /// or a NAL unit has a type RTP cannot carry (0, 24–31); rethrows what `emit` throws.
    @discardableResult
    public mutating func packetize(
        accessUnit: [ArraySlice<UInt8>],
        timestamp: UInt32,
        stream: inout RTPStreamState,
        into buffer: RTPPacketBuffer,
        emit: (RTPPacketBuffer) throws -> Void
    ) throws -> Int {
        try stream.validateHeaderFields()
        let maximumPayload = try Self.checkedPayloadLimit(
            budget.maximumPayloadLength(headerLength: stream.headerLength),
            what: "\(budget) with a \(stream.headerLength)-byte RTP header"
        )
        try ByteWriter.ensure(budget.maximumPacketLength, fits: buffer.capacity, what: "an RTP packet for \(budget)")
        let plan = try makePlan(accessUnit)
        var packets = 0
        try forEachPayload(accessUnit, plan: plan, maximumPayload: maximumPayload) { payload, marker in
            buffer.withUnsafeMutableStorage { storage, count in
                var writer = ByteWriter(storage)
                stream.writeHeader(to: &writer, timestamp: timestamp, marker: marker)
                write(payload, of: accessUnit, plan: plan, to: &writer)
                count = writer.offset
            }
            try emit(buffer)
            packets += 1
        }
        return packets
    }

    /// Convenience for tests and cold paths (allocates): the RTP payloads, without RTP headers,
    /// that `packetize` would send for `accessUnit` with at most `maximumPayloadLength` bytes
    /// each. The marker belongs on the last one.
    public mutating func payloads(
        accessUnit: [ArraySlice<UInt8>],
        maximumPayloadLength: Int
    ) throws(RTPError) -> [[UInt8]] {
        let maximumPayload = try Self.checkedPayloadLimit(maximumPayloadLength, what: "the requested payload limit")
        let plan = try makePlan(accessUnit)
        var result: [[UInt8]] = []
        forEachPayload(accessUnit, plan: plan, maximumPayload: maximumPayload) { payload, _ in
            let length = payloadLength(payload, plan: plan)
            result.append(
                [UInt8](unsafeUninitializedCapacity: length) { storage, count in
                    var writer = ByteWriter(UnsafeMutableRawBufferPointer(storage))
                    write(payload, of: accessUnit, plan: plan, to: &writer)
                    count = writer.offset
                }
            )
        }
        return result
    }

    /// Pion-style convenience: the payloads for one NAL unit sent as an access unit of its own.
    public mutating func payloads(nalUnit: [UInt8], maximumPayloadLength: Int) throws(RTPError) -> [[UInt8]] {
        try payloads(accessUnit: [nalUnit[...]], maximumPayloadLength: maximumPayloadLength)
    }

    // MARK: Planning one access unit

    /// Which NAL units go where, decided before the first packet so the marker can be put on
    /// the last one without buffering.
    struct Plan {
        /// Index in the access unit at which the parameter sets are sent, if any are.
        var parameterSetPosition: Int?
        /// Index of the last NAL unit sent on its own (not a parameter set, not dropped).
        var lastMediaIndex: Int?
        var spsFromAccessUnit = false
        var ppsFromAccessUnit = false
        var insertsSPS = false
        var insertsPPS = false
        var parameterSetCount = 0
        /// STAP-A payload length: 1 header byte + (2-byte size + NAL) per parameter set.
        var aggregateLength = 1
        /// STAP-A header: F is the OR and NRI the maximum over the aggregated units (§5.7).
        var aggregateHeader: UInt8 = 0

        var parameterSetsAreLast: Bool {
            guard let parameterSetPosition else { return false }
            guard let lastMediaIndex else { return true }
            return lastMediaIndex < parameterSetPosition
        }
    }

    /// Throws, before anything is sent or remembered, for a NAL unit of type 0 or 24–31: H.264
    /// leaves those unspecified and RFC 6184 uses 24–31 for its own packet types, so such a
    /// unit would reach the receiver as a broken STAP or FU.
    mutating func makePlan(_ accessUnit: [ArraySlice<UInt8>]) throws(RTPError) -> Plan {
        var plan = Plan()
        var firstParameterSet: Int?
        var firstIDR: Int?
        var lastSPS: Int?
        var lastPPS: Int?
        for index in accessUnit.indices {
            guard let headerByte = accessUnit[index].first else { continue }
            let type = H264NALUnitType(headerByte: headerByte)
            guard (1...23).contains(type.rawValue) else {
                throw RTPError(
                    .invalidH264Payload,
                    "NAL unit \(index) of the access unit has type \(type.rawValue); only 1–23 can be sent (RFC 6184 §5.2)"
                )
            }
            switch type {
            case .accessUnitDelimiter, .fillerData:
                continue
            case .sequenceParameterSet:
                firstParameterSet = firstParameterSet ?? index
                lastSPS = index
            case .pictureParameterSet:
                firstParameterSet = firstParameterSet ?? index
                lastPPS = index
            case .idrSlice:
                firstIDR = firstIDR ?? index
                plan.lastMediaIndex = index
            default:
                plan.lastMediaIndex = index
            }
        }
        plan.spsFromAccessUnit = lastSPS != nil
        plan.ppsFromAccessUnit = lastPPS != nil
        if firstIDR != nil {
            plan.insertsSPS = lastSPS == nil && sequenceParameterSet != nil
            plan.insertsPPS = lastPPS == nil && pictureParameterSet != nil
        }
        plan.parameterSetPosition = firstParameterSet ?? (plan.insertsSPS || plan.insertsPPS ? firstIDR : nil)

        forEachParameterSet(accessUnit, plan: plan) { nal in
            plan.parameterSetCount += 1
            plan.aggregateLength += 2 + nal.count
            let header = nal[nal.startIndex]
            plan.aggregateHeader =
                (plan.aggregateHeader | header) & 0x80 | max(plan.aggregateHeader & 0x60, header & 0x60)
        }
        plan.aggregateHeader = plan.aggregateHeader & 0xE0 | H264NALUnitType.stapA.rawValue

        if let lastSPS, !(sequenceParameterSet.map { accessUnit[lastSPS].elementsEqual($0) } ?? false) {
            sequenceParameterSet = Array(accessUnit[lastSPS])
        }
        if let lastPPS, !(pictureParameterSet.map { accessUnit[lastPPS].elementsEqual($0) } ?? false) {
            pictureParameterSet = Array(accessUnit[lastPPS])
        }
        return plan
    }

    /// The parameter sets of the STAP-A, SPS first: the access unit's own, or the remembered
    /// one inserted before an IDR.
    func forEachParameterSet(
        _ accessUnit: [ArraySlice<UInt8>],
        plan: Plan,
        _ body: (ArraySlice<UInt8>) throws -> Void
    ) rethrows {
        if plan.spsFromAccessUnit {
            try forEach(.sequenceParameterSet, in: accessUnit, body)
        } else if plan.insertsSPS, let sequenceParameterSet {
            try body(sequenceParameterSet[...])
        }
        if plan.ppsFromAccessUnit {
            try forEach(.pictureParameterSet, in: accessUnit, body)
        } else if plan.insertsPPS, let pictureParameterSet {
            try body(pictureParameterSet[...])
        }
    }

    private func forEach(
        _ type: H264NALUnitType,
        in accessUnit: [ArraySlice<UInt8>],
        _ body: (ArraySlice<UInt8>) throws -> Void
    ) rethrows {
        for nal in accessUnit {
            if let headerByte = nal.first, H264NALUnitType(headerByte: headerByte) == type {
                try body(nal)
            }
        }
    }

    // MARK: Emitting payloads

    /// One RTP payload, described by reference into the access unit: nothing is copied until
    /// it is written into the packet.
    enum Payload {
        /// RFC 6184 §5.6: the NAL unit as it is.
        case single(ArraySlice<UInt8>)
        /// RFC 6184 §5.7.1: all parameter sets of the plan.
        case aggregate
        /// RFC 6184 §5.8: FU indicator, FU header, then `data` (a piece of the NAL unit's body).
        case fragment(indicator: UInt8, header: UInt8, data: ArraySlice<UInt8>)
    }

    func forEachPayload(
        _ accessUnit: [ArraySlice<UInt8>],
        plan: Plan,
        maximumPayload: Int,
        _ body: (Payload, _ marker: Bool) throws -> Void
    ) rethrows {
        for index in accessUnit.indices {
            if index == plan.parameterSetPosition {
                try forEachParameterSetPayload(accessUnit, plan: plan, maximumPayload: maximumPayload, body)
            }
            let nal = accessUnit[index]
            guard let headerByte = nal.first else { continue }
            switch H264NALUnitType(headerByte: headerByte) {
            case .accessUnitDelimiter, .fillerData, .sequenceParameterSet, .pictureParameterSet:
                continue
            default:
                // When parameter sets follow the last slice, the marker belongs to them instead.
                let marker = index == plan.lastMediaIndex && !plan.parameterSetsAreLast
                try forEachNALPayload(nal, marker: marker, maximumPayload: maximumPayload, body)
            }
        }
    }

    private func forEachParameterSetPayload(
        _ accessUnit: [ArraySlice<UInt8>],
        plan: Plan,
        maximumPayload: Int,
        _ body: (Payload, _ marker: Bool) throws -> Void
    ) rethrows {
        guard plan.parameterSetCount > 0 else { return }
        if plan.parameterSetCount >= 2, plan.aggregateLength <= maximumPayload {
            try body(.aggregate, plan.parameterSetsAreLast)
            return
        }
        // One alone, or too big to aggregate: each goes as a NAL unit of its own.
        var remaining = plan.parameterSetCount
        try forEachParameterSet(accessUnit, plan: plan) { nal in
            remaining -= 1
            try forEachNALPayload(
                nal,
                marker: plan.parameterSetsAreLast && remaining == 0,
                maximumPayload: maximumPayload,
                body
            )
        }
    }

    /// A single NAL unit packet when it fits, FU-A fragments of near-equal size otherwise:
    /// the body (NAL minus its header byte) is split into ⌈body / (limit − 2)⌉ pieces whose
    /// sizes differ by at most one byte, so no tiny last fragment wastes a packet header.
    private func forEachNALPayload(
        _ nal: ArraySlice<UInt8>,
        marker: Bool,
        maximumPayload: Int,
        _ body: (Payload, _ marker: Bool) throws -> Void
    ) rethrows {
        if nal.count <= maximumPayload {
            try body(.single(nal), marker)
            return
        }
        let headerByte = nal[nal.startIndex]
        let indicator = headerByte & 0xE0 | H264NALUnitType.fuA.rawValue
        let type = headerByte & 0x1F
        let nalBody = nal.dropFirst()
        let capacity = maximumPayload - 2
        // nal.count > maximumPayload, so the body exceeds `capacity` and needs two or more
        // fragments: S and E never land on the same one.
        let fragmentCount = (nalBody.count + capacity - 1) / capacity
        let smallSize = nalBody.count / fragmentCount
        let largerFragments = nalBody.count % fragmentCount
        var start = nalBody.startIndex
        for fragment in 0..<fragmentCount {
            let size = smallSize + (fragment < largerFragments ? 1 : 0)
            let isFirst = fragment == 0
            let isLast = fragment == fragmentCount - 1
            let header = (isFirst ? 0x80 : 0) | (isLast ? 0x40 : 0) | type
            try body(
                .fragment(indicator: indicator, header: header, data: nalBody[start..<start + size]),
                marker && isLast
            )
            start += size
        }
    }

    func payloadLength(_ payload: Payload, plan: Plan) -> Int {
        switch payload {
        case .single(let nal): nal.count
        case .aggregate: plan.aggregateLength
        case .fragment(_, _, let data): 2 + data.count
        }
    }

    func write(_ payload: Payload, of accessUnit: [ArraySlice<UInt8>], plan: Plan, to writer: inout ByteWriter) {
        switch payload {
        case .single(let nal):
            writer.write(nal)
        case .aggregate:
            writer.write(plan.aggregateHeader)
            forEachParameterSet(accessUnit, plan: plan) { nal in
                writer.write(UInt16(truncatingIfNeeded: nal.count))
                writer.write(nal)
            }
        case .fragment(let indicator, let header, let data):
            writer.write(indicator)
            writer.write(header)
            writer.write(data)
        }
    }

    /// A payload limit must leave room for an FU-A indicator, header and one byte.
    static func checkedPayloadLimit(_ limit: Int, what: @autoclosure () -> String) throws(RTPError) -> Int {
        guard limit >= 3 else {
            throw RTPError(
                .invalidConfiguration,
                "\(what()) leaves \(limit) payload bytes per packet; H.264 needs at least 3"
            )
        }
        return min(limit, RTPPacket.maximumLength)
    }
}
