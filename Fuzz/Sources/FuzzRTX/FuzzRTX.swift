import RTP

/// libFuzzer entry: any bytes as an RFC 4588 RTX packet to restore, and as an original to wrap.
///
/// Invariants: neither direction crashes or writes past its buffer; what restores is a packet
/// `RTPPacket.parse` accepts, carrying the OSN as its sequence number; and wrapping any packet
/// that parses, then restoring it, gives back the original minus its padding.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRTX(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = UnsafeRawBufferPointer(start: data, count: size)
    var output = [UInt8](repeating: 0, count: size + RTPRetransmission.overhead)
    if let (length, sequenceNumber) = try? output.withUnsafeMutableBytes({ buffer in
        try RTPRetransmission.restore(rtx: input, originalSSRC: 0x1234_5678, originalPayloadType: 96, into: buffer)
    }) {
        guard let packet = try? RTPPacket.parse(Array(output.prefix(length))) else {
            fatalError("a restored RTX packet does not parse as RTP")
        }
        guard packet.header.sequenceNumber == sequenceNumber, packet.header.ssrc == 0x1234_5678,
            packet.header.payloadType == 96, packet.paddingLength == 0
        else { fatalError("restored header fields are wrong: \(packet.header)") }
    }
    guard let original = try? RTPPacket.parse(Array(input)) else { return 0 }
    let wrapped: [UInt8]
    do {
        wrapped = try RTPRetransmission.packet(
            original: Array(input),
            ssrc: 0xCAFE_BABE,
            payloadType: 99,
            sequenceNumber: 7
        )
    } catch {
        fatalError("a parsed RTP packet could not be wrapped: \(error)")
    }
    do {
        let restored = try RTPPacket.parse(
            try RTPRetransmission.original(
                fromRTX: wrapped,
                originalSSRC: original.header.ssrc,
                originalPayloadType: original.header.payloadType
            )
        )
        var expected = original
        expected.paddingLength = 0
        guard restored == expected else { fatalError("wrap → restore changed the packet") }
    } catch {
        fatalError("a wrapped packet did not restore: \(error)")
    }
    return 0
}
