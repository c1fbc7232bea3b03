import RTP

/// libFuzzer entry: any bytes as one compound RTCP datagram.
///
/// Invariants: parsing never crashes; what parses serializes without error and parses back to
/// the same packets; helpers on parsed values (NACK lists, REMB bitrate, RTT, transport-wide
/// feedback statuses) never crash; transport-wide feedback rebuilt by the builder a receiver uses
/// parses back to the same statuses and arrival times.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRTCP(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = UnsafeRawBufferPointer(start: data, count: size)
    let packets: [RTCPPacket]
    do {
        packets = try RTCPPacket.parseCompound(input)
    } catch {
        return 0
    }
    for packet in packets {
        switch packet {
        case .genericNACK(let nack):
            _ = nack.lostSequenceNumbers
        case .receiverEstimatedMaximumBitrate(let remb):
            _ = remb.bitrate
        case .transportFeedback(let feedback):
            checkTransportFeedback(feedback)
        case .receiverReport(let report):
            for block in report.reports {
                _ = block.roundTripTime(arrival: NTPTimestamp(rawValue: UInt64(size) << 32))
            }
        default:
            break
        }
    }
    guard !packets.isEmpty else { return 0 }
    let bytes: [UInt8]
    do {
        bytes = try RTCPPacket.serialize(packets)
    } catch {
        fatalError("parsed RTCP failed to serialize: \(error)")
    }
    // Our transport-wide feedback chunks are libwebrtc's greedy choice, not the fewest possible,
    // so a cleverly encoded message may come back longer: by at most its chunks (each of ours but
    // the last covers 7 statuses or more) and padding.
    var slack = 0
    for case .transportFeedback(let feedback) in packets {
        slack += 2 * ((Int(feedback.packetStatusCount) + 6) / 7) + 3
    }
    guard bytes.count == RTCPPacket.serializedLength(of: packets), bytes.count <= size + slack else {
        fatalError("serialized \(bytes.count) bytes from a \(size)-byte compound packet")
    }
    do {
        guard try RTCPPacket.parseCompound(bytes) == packets else {
            fatalError("parse → serialize → parse changed the packets")
        }
    } catch {
        fatalError("re-parsing serialized RTCP failed: \(error)")
    }
    return 0
}

/// Walks a parsed transport-wide feedback, then rebuilds it from its statuses with the builder,
/// writes and parses that: the same window, the same received packets, the same arrival times
/// (all shifted by one whole multiple of the 24-bit reference time's wrap period at most: the
/// builder wraps a reference time taken from the first arrival, which may lie past the range).
func checkTransportFeedback(_ feedback: RTCPTransportFeedback) {
    let base = feedback.baseSequenceNumber
    var statuses = 0
    var received = 0
    feedback.forEachStatus { status in
        statuses += 1
        if status.isReceived { received += 1 }
    }
    guard statuses == Int(feedback.packetStatusCount), received == feedback.receivedPackets.count,
        feedback.notReceivedCount == statuses - received
    else {
        fatalError("transport feedback walks \(statuses) statuses, \(received) received, for \(feedback)")
    }
    for packet in feedback.receivedPackets {
        guard feedback.covers(packet.sequenceNumber),
            feedback.arrivalTime(of: packet.sequenceNumber) == packet.arrivalTime
        else {
            fatalError("transport feedback loses the arrival of \(packet.sequenceNumber)")
        }
    }
    guard statuses > 0 else { return }

    // The builder's input: the received packets, the window's ends when not received, and a
    // not-received entry every 16384 numbers across gaps the builder would take for reordering.
    var input: [RTCPTransportFeedback.PacketStatus] = []
    input.reserveCapacity(feedback.receivedPackets.count + 6)
    func append(_ sequenceNumber: UInt16, _ arrivalTime: Int64?) {
        if var previous = input.last?.sequenceNumber {
            while sequenceNumber &- previous >= 0x8000 {
                previous &+= 0x4000
                input.append(.init(sequenceNumber: previous, arrivalTime: nil))
            }
        }
        input.append(.init(sequenceNumber: sequenceNumber, arrivalTime: arrivalTime))
    }
    if feedback.receivedPackets.first?.sequenceNumber != base {
        append(base, nil)
    }
    for packet in feedback.receivedPackets {
        append(packet.sequenceNumber, packet.arrivalTime)
    }
    let last = base &+ (feedback.packetStatusCount - 1)
    if input.last?.sequenceNumber != last {
        append(last, nil)
    }

    let rebuilt: RTCPTransportFeedback
    let reparsed: [RTCPPacket]
    do {
        rebuilt = try RTCPTransportFeedback(
            senderSSRC: feedback.senderSSRC,
            mediaSSRC: feedback.mediaSSRC,
            feedbackPacketCount: feedback.feedbackPacketCount,
            packets: input
        )
        reparsed = try RTCPPacket.parseCompound(RTCPPacket.serialize([.transportFeedback(rebuilt)]))
    } catch {
        fatalError("rebuilding parsed transport feedback failed: \(error)")
    }
    guard reparsed == [.transportFeedback(rebuilt)], rebuilt.baseSequenceNumber == base,
        rebuilt.packetStatusCount == feedback.packetStatusCount,
        rebuilt.receivedPackets.count == feedback.receivedPackets.count
    else {
        fatalError("rebuilt transport feedback changed its window: \(rebuilt) from \(feedback)")
    }
    var shift: Int64?
    for (original, copy) in zip(feedback.receivedPackets, rebuilt.receivedPackets) {
        let difference = copy.arrivalTime - original.arrivalTime
        guard copy.sequenceNumber == original.sequenceNumber,
            difference % RTCPTransportFeedback.referenceTimeWrapPeriod == 0, shift == nil || shift == difference
        else {
            fatalError("rebuilt transport feedback changed packet \(original.sequenceNumber): \(copy) from \(original)")
        }
        shift = difference
    }
}
