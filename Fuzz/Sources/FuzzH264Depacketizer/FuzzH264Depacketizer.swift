import RTP

/// libFuzzer entry, two jobs per input:
///
/// 1. The bytes as a stream of RTP packets (each prefixed by a length byte) fed to the
///    depacketizer: whatever they hold, nothing crashes and the limits hold.
/// 2. The bytes as two access units (MTU, trailer room and CSRC count from the first bytes,
///    then length-prefixed NAL units) sent through the payloader's hot path and back through
///    the depacketizer: every packet fits the MTU, carries the access unit's timestamp and the
///    marker only on the last packet, and the NAL units come back as the payloader's rules say
///    (AUD, filler and empty units dropped, SPS/PPS bundled where the first stood, remembered
///    ones inserted before an IDR that lacks them).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzH264Depacketizer(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = [UInt8](UnsafeRawBufferPointer(start: data, count: size))
    feedGarbage(input)
    roundTrip(input)
    return 0
}

private func feedGarbage(_ input: [UInt8]) {
    let limits = H264Depacketizer.Limits(
        maximumNALUnitLength: 2048,
        maximumAccessUnitLength: 4096,
        maximumNALUnitsPerAccessUnit: 64
    )
    var depacketizer = H264Depacketizer(limits: limits)
    var index = 0
    var sequence: UInt16 = 0
    while index < input.count {
        let length = min(Int(input[index]), input.count - index - 1)
        let chunk = input[(index + 1)..<(index + 1 + length)]
        index += 1 + length
        sequence &+= 1
        // As a whole RTP packet when it parses as one, else as a bare payload.
        let units: [H264AccessUnit]?
        if mayParseAsRTP(chunk), let packet = try? RTPPacket.parse(chunk) {
            units = try? depacketizer.push(packet)
        } else {
            let marker = chunk.first.map { $0 & 1 == 1 } ?? false
            units = try? depacketizer.push(
                payload: chunk,
                sequenceNumber: sequence,
                timestamp: UInt32(index / 64),
                marker: marker
            )
        }
        for unit in units ?? [] {
            check(unit, limits)
        }
    }
    if let unit = depacketizer.flush() {
        check(unit, limits)
    }
}

/// False only for bytes `RTPPacket.parse` must refuse: shorter than the fixed header, version
/// not 2, or shorter than the CSRCs, extension or padding the header announces (RFC 3550 §5.1,
/// §5.3.1). Most garbage chunks fail here, and asking the parser instead would cost a formatted
/// error message per chunk, the larger part of this target's time. Every chunk that could parse
/// still goes to the parser, so which chunks become packets does not change.
private func mayParseAsRTP(_ chunk: ArraySlice<UInt8>) -> Bool {
    guard chunk.count >= 12, let first = chunk.first, first >> 6 == 2 else { return false }
    let start = chunk.startIndex
    var headerLength = 12 + 4 * Int(first & 0x0F)
    if first & 0x10 != 0 {
        guard chunk.count >= headerLength + 4 else { return false }
        let words = Int(chunk[start + headerLength + 2]) << 8 | Int(chunk[start + headerLength + 3])
        headerLength += 4 + 4 * words
    }
    guard chunk.count >= headerLength else { return false }
    if first & 0x20 != 0 {
        let padding = Int(chunk[chunk.endIndex - 1])
        return chunk.count > headerLength && padding > 0 && padding <= chunk.count - headerLength
    }
    return true
}

private func check(_ unit: H264AccessUnit, _ limits: H264Depacketizer.Limits) {
    let total = unit.nalUnits.reduce(0) { $0 + $1.count }
    guard total <= limits.maximumAccessUnitLength,
        unit.nalUnits.count <= limits.maximumNALUnitsPerAccessUnit,
        unit.nalUnits.allSatisfy({ !$0.isEmpty && $0.count <= limits.maximumNALUnitLength })
    else {
        fatalError("depacketizer broke its limits")
    }
}

private func type(_ nal: [UInt8]) -> UInt8? { nal.first.map { $0 & 0x1F } }

/// What the depacketizer must hand back for `accessUnit`, given the payloader's memory; nil
/// when the payloader must refuse it (a NAL unit of type 0 or 24–31).
private func expected(_ accessUnit: [[UInt8]], memory: inout (sps: [UInt8]?, pps: [UInt8]?)) -> [[UInt8]]? {
    if accessUnit.contains(where: { type($0).map { $0 == 0 || $0 >= 24 } ?? false }) { return nil }
    let sendable = accessUnit.filter { type($0).map { $0 != 9 && $0 != 12 } ?? false }
    let spses = sendable.filter { type($0) == 7 }
    let ppses = sendable.filter { type($0) == 8 }
    let hasIDR = sendable.contains { type($0) == 5 }
    var parameterSets = spses.isEmpty && hasIDR ? (memory.sps.map { [$0] } ?? []) : spses
    parameterSets += ppses.isEmpty && hasIDR ? (memory.pps.map { [$0] } ?? []) : ppses
    memory.sps = spses.last ?? memory.sps
    memory.pps = ppses.last ?? memory.pps
    let position =
        sendable.firstIndex { type($0) == 7 || type($0) == 8 }
        ?? (parameterSets.isEmpty ? nil : sendable.firstIndex { type($0) == 5 })
    var result: [[UInt8]] = []
    for (index, nal) in sendable.enumerated() {
        if index == position { result += parameterSets }
        if type(nal) != 7 && type(nal) != 8 { result.append(nal) }
    }
    return result
}

private func roundTrip(_ input: [UInt8]) {
    guard input.count >= 3 else { return }
    let mtu = 128 + Int(input[0]) * 4
    let trailer = [0, 4, 10, 16][Int(input[1] & 3)]
    let csrcCount = Int(input[1] >> 2 & 3)
    let firstUnitCount = Int(input[2] % 8)
    var nalUnits: [[UInt8]] = []
    var index = 3
    while index + 2 <= input.count {
        let wanted = (Int(input[index]) << 8 | Int(input[index + 1])) % 3000
        let length = min(wanted, input.count - index - 2)
        nalUnits.append(Array(input[(index + 2)..<(index + 2 + length)]))
        index += 2 + length
    }
    let accessUnits = [Array(nalUnits.prefix(firstUnitCount)), Array(nalUnits.dropFirst(firstUnitCount))]

    let budget: RTPPayloadBudget
    var stream: RTPStreamState
    do {
        budget = try RTPPayloadBudget(mtu: mtu, srtpTrailerRoom: trailer)
        stream = try RTPStreamState(
            ssrc: 0x5EED,
            payloadType: 96,
            clockRate: 90_000,
            initialSequenceNumber: 65_530,
            timestampBase: 0,
            csrcs: Array(repeating: 7, count: csrcCount)
        )
    } catch {
        fatalError("valid configuration refused: \(error)")
    }
    var payloader = H264Payloader(budget: budget)
    var depacketizer = H264Depacketizer()
    var memory: (sps: [UInt8]?, pps: [UInt8]?) = (nil, nil)
    let buffer = RTPPacketBuffer(budget: budget)

    for (unitIndex, accessUnit) in accessUnits.enumerated() {
        let timestamp = UInt32(unitIndex + 1) * 3000
        let want = expected(accessUnit, memory: &memory)
        var packets: [RTPPacket] = []
        guard let want else {
            let refused = Result {
                try payloader.packetize(
                    accessUnit: accessUnit.map { $0[...] },
                    timestamp: timestamp,
                    stream: &stream,
                    into: buffer
                ) { _ in fatalError("sent part of an invalid access unit") }
            }
            guard case .failure(let error as RTPError) = refused, error.code == .invalidH264Payload else {
                fatalError("an access unit with an unsendable NAL type was not refused")
            }
            continue
        }
        do {
            try payloader.packetize(
                accessUnit: accessUnit.map { $0[...] },
                timestamp: timestamp,
                stream: &stream,
                into: buffer
            ) { buffer in
                guard buffer.count <= budget.maximumPacketLength, buffer.capacity - buffer.count >= 144 else {
                    fatalError("packet of \(buffer.count) bytes breaks \(budget)")
                }
                packets.append(try RTPPacket.parse(buffer.copyBytes()))
            }
        } catch {
            fatalError("packetizing failed: \(error)")
        }
        guard packets.allSatisfy({ $0.header.timestamp == timestamp && $0.header.csrcs.count == csrcCount }),
            packets.dropLast().allSatisfy({ !$0.header.marker }),
            packets.last.map({ $0.header.marker }) ?? true
        else {
            fatalError("timestamp, CSRCs or marker wrong: \(packets.map(\.header))")
        }
        for packet in packets where packet.payload.first.map({ $0 & 0x1F == 28 }) ?? false {
            if packet.payload[1] & 0xC0 == 0xC0 { fatalError("FU-A with both S and E") }
        }
        var units: [H264AccessUnit] = []
        do {
            for packet in packets {
                units += try depacketizer.push(packet)
            }
        } catch {
            fatalError("depacketizing our own packets failed: \(error)")
        }
        let expectedUnits = want.isEmpty ? [] : [H264AccessUnit(timestamp: timestamp, nalUnits: want, isComplete: true)]
        guard units == expectedUnits else {
            fatalError("round trip changed the access unit")
        }
    }
}
