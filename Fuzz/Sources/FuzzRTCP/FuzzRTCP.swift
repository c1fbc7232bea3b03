import RTP

/// libFuzzer entry: any bytes as one compound RTCP datagram.
///
/// Invariants: parsing never crashes; what parses serializes without error and parses back to
/// the same packets; helpers on parsed values (NACK lists, REMB bitrate, RTT) never crash.
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
    guard bytes.count == RTCPPacket.serializedLength(of: packets), bytes.count <= size else {
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
