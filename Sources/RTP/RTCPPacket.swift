/// One RTCP packet of a compound packet (RFC 3550 §6.1), typed.
///
/// Parsing keeps what a sender needs to act on (reports, NACK, transport-wide feedback, PLI,
/// FIR, REMB) and skips every other packet type or feedback format (APP, XR, TMMBR, …) by its
/// length field, so a newer peer cannot break us.
public enum RTCPPacket: Sendable, Hashable {
    case senderReport(RTCPSenderReport)
    case receiverReport(RTCPReceiverReport)
    case sourceDescription(RTCPSourceDescription)
    case goodbye(RTCPGoodbye)
    case genericNACK(RTCPGenericNACK)
    /// draft-holmer-rmcat-transport-wide-cc-extensions-01 §3.1 (RTPFB FMT 15).
    case transportFeedback(RTCPTransportFeedback)
    case pictureLossIndication(RTCPPictureLossIndication)
    case fullIntraRequest(RTCPFullIntraRequest)
    case receiverEstimatedMaximumBitrate(RTCPReceiverEstimatedMaximumBitrate)

    /// Largest compound packet accepted: what a UDP datagram can carry.
    public static let maximumCompoundLength = 65_535

    // Each typed packet is reached through a switch, not an `any RTCPPacketBody`
    // existential: larger packet values would be boxed on the heap for every call.

    func write(to writer: inout ByteWriter) {
        switch self {
        case .senderReport(let packet): packet.write(to: &writer)
        case .receiverReport(let packet): packet.write(to: &writer)
        case .sourceDescription(let packet): packet.write(to: &writer)
        case .goodbye(let packet): packet.write(to: &writer)
        case .genericNACK(let packet): packet.write(to: &writer)
        case .transportFeedback(let packet): packet.write(to: &writer)
        case .pictureLossIndication(let packet): packet.write(to: &writer)
        case .fullIntraRequest(let packet): packet.write(to: &writer)
        case .receiverEstimatedMaximumBitrate(let packet): packet.write(to: &writer)
        }
    }

    func validate() throws(RTPError) {
        switch self {
        case .senderReport(let packet): try packet.validateForWriting()
        case .receiverReport(let packet): try packet.validateForWriting()
        case .sourceDescription(let packet): try packet.validateForWriting()
        case .goodbye(let packet): try packet.validateForWriting()
        case .genericNACK(let packet): try packet.validateForWriting()
        case .transportFeedback(let packet): try packet.validateForWriting()
        case .pictureLossIndication(let packet): try packet.validateForWriting()
        case .fullIntraRequest(let packet): try packet.validateForWriting()
        case .receiverEstimatedMaximumBitrate(let packet): try packet.validateForWriting()
        }
    }

    /// Bytes on the wire, header included.
    public var serializedLength: Int {
        switch self {
        case .senderReport(let packet): packet.packetLength
        case .receiverReport(let packet): packet.packetLength
        case .sourceDescription(let packet): packet.packetLength
        case .goodbye(let packet): packet.packetLength
        case .genericNACK(let packet): packet.packetLength
        case .transportFeedback(let packet): packet.packetLength
        case .pictureLossIndication(let packet): packet.packetLength
        case .fullIntraRequest(let packet): packet.packetLength
        case .receiverEstimatedMaximumBitrate(let packet): packet.packetLength
        }
    }

    // MARK: Serializing compound packets

    /// The total length of `packets` serialized back to back.
    public static func serializedLength(of packets: [RTCPPacket]) -> Int {
        packets.reduce(0) { $0 + $1.serializedLength }
    }

    /// Serializes `packets` as one compound packet into a new array. RFC 3550 §6.1 wants an
    /// SR or RR first and an SDES with CNAME in every compound packet; the order given is kept.
    public static func serialize(_ packets: [RTCPPacket]) throws(RTPError) -> [UInt8] {
        let length = try checkedLength(of: packets)
        return try [UInt8].writing(count: length) { (writer: inout ByteWriter) throws(RTPError) in
            for packet in packets {
                packet.write(to: &writer)
            }
        }
    }

    /// Serializes `packets` at the start of `buffer` and returns the length written.
    @discardableResult
    public static func serialize(
        _ packets: [RTCPPacket],
        into buffer: UnsafeMutableRawBufferPointer
    ) throws(RTPError) -> Int {
        let length = try checkedLength(of: packets)
        try ByteWriter.ensure(length, fits: buffer.count, what: "compound RTCP packet")
        var writer = ByteWriter(buffer)
        for packet in packets {
            packet.write(to: &writer)
        }
        return writer.offset
    }

    /// Serializes `packets` into a reusable packet buffer (room left after it for SRTCP).
    public static func serialize(_ packets: [RTCPPacket], into buffer: RTPPacketBuffer) throws(RTPError) {
        let length = try buffer.withUnsafeMutableStorage { (storage, _) throws(RTPError) in
            try serialize(packets, into: storage)
        }
        try buffer.setCount(length)
    }

    private static func checkedLength(of packets: [RTCPPacket]) throws(RTPError) -> Int {
        var length = 0
        for packet in packets {
            try packet.validate()
            length += packet.serializedLength
        }
        guard length <= maximumCompoundLength else {
            throw RTPError(.tooLarge, "compound RTCP packet would be \(length) bytes; at most \(maximumCompoundLength)")
        }
        return length
    }

    // MARK: Parsing compound packets

    public static func parseCompound(_ bytes: [UInt8]) throws(RTPError) -> [RTCPPacket] {
        let result: Result<[RTCPPacket], RTPError> = bytes.withUnsafeBytes { raw in
            do throws(RTPError) { return .success(try parseCompound(raw)) } catch { return .failure(error) }
        }
        return try result.get()
    }

    /// Parses a compound RTCP packet (or a single, reduced-size one: RFC 5506 feedback comes
    /// alone) filling `bytes` exactly. Each packet's version, length and padding are checked;
    /// an error names the packet's index and byte offset.
    public static func parseCompound(_ bytes: UnsafeRawBufferPointer) throws(RTPError) -> [RTCPPacket] {
        guard bytes.count <= maximumCompoundLength else {
            throw RTPError(.tooLarge, "RTCP input is \(bytes.count) bytes; at most \(maximumCompoundLength) accepted")
        }
        guard bytes.count > 0 else {
            throw RTPError(.truncated, "RTCP input is empty")
        }
        var packets: [RTCPPacket] = []
        var offset = 0
        var index = 0
        while offset < bytes.count {
            guard bytes.count - offset >= RTCPHeader.length else {
                throw RTPError(
                    .truncated,
                    "RTCP packet \(index) at offset \(offset): \(bytes.count - offset) bytes left, need 4 for the header"
                )
            }
            let first = bytes[offset]
            let type = RTCPPacketType(rawValue: bytes[offset + 1])
            let words = Int(UInt16(bytes[offset + 2]) << 8 | UInt16(bytes[offset + 3]))
            let version = first >> 6
            guard version == RTPHeader.supportedVersion else {
                throw RTPError(
                    .unsupportedVersion,
                    "RTCP packet \(index) at offset \(offset): version \(version); only version 2 exists (RFC 3550 §6.4.1)"
                )
            }
            guard RTCPPacketType.range.contains(type.rawValue) else {
                throw RTPError(
                    .notRTCP,
                    "RTCP packet \(index) at offset \(offset): packet type \(type.rawValue) is outside 192–223"
                )
            }
            let length = (words + 1) * 4
            guard length <= bytes.count - offset else {
                throw RTPError(
                    .invalidLength,
                    "RTCP packet \(index) (\(type)) at offset \(offset): length field says \(length) bytes, "
                        + "\(bytes.count - offset) remain"
                )
            }
            var end = offset + length
            if first & 0x20 != 0 {
                let padding = Int(bytes[end - 1])
                guard padding > 0, padding <= length - RTCPHeader.length else {
                    throw RTPError(
                        .invalidPadding,
                        "RTCP packet \(index) (\(type)) at offset \(offset): padding count \(padding) at offset "
                            + "\(end - 1) is 0 or exceeds the \(length - RTCPHeader.length)-byte body"
                    )
                }
                end -= padding
            }
            var reader = ByteReader(
                UnsafeRawBufferPointer(rebasing: bytes[0..<end]),
                context: ByteReader.rtcpContext(type, index: index, offset: offset),
                offset: offset + RTCPHeader.length
            )
            if let packet = try parseBody(type: type, count: Int(first & 0x1F), reader: &reader) {
                packets.append(packet)
            }
            offset += length
            index += 1
        }
        return packets
    }

    /// One packet's body; nil for types and formats this module does not model.
    private static func parseBody(
        type: RTCPPacketType,
        count: Int,
        reader: inout ByteReader
    ) throws(RTPError) -> RTCPPacket? {
        switch type {
        case .senderReport:
            return .senderReport(try RTCPSenderReport.read(from: &reader, count: count))
        case .receiverReport:
            return .receiverReport(try RTCPReceiverReport.read(from: &reader, count: count))
        case .sourceDescription:
            return .sourceDescription(try RTCPSourceDescription.read(from: &reader, count: count))
        case .goodbye:
            return .goodbye(try RTCPGoodbye.read(from: &reader, count: count))
        case .transportFeedback where count == RTCPGenericNACK.format:
            return .genericNACK(try RTCPGenericNACK.read(from: &reader))
        case .transportFeedback where count == RTCPTransportFeedback.format:
            return .transportFeedback(try RTCPTransportFeedback.read(from: &reader))
        case .payloadFeedback where count == RTCPPictureLossIndication.format:
            return .pictureLossIndication(try RTCPPictureLossIndication.read(from: &reader))
        case .payloadFeedback where count == RTCPFullIntraRequest.format:
            return .fullIntraRequest(try RTCPFullIntraRequest.read(from: &reader))
        case .payloadFeedback where count == RTCPReceiverEstimatedMaximumBitrate.format:
            let senderSSRC = try reader.readUInt32("sender SSRC")
            let mediaSSRC = try reader.readUInt32("media source SSRC")
            return try RTCPReceiverEstimatedMaximumBitrate.read(
                from: &reader,
                senderSSRC: senderSSRC,
                mediaSSRC: mediaSSRC
            ).map { .receiverEstimatedMaximumBitrate($0) }
        default:
            return nil
        }
    }
}
