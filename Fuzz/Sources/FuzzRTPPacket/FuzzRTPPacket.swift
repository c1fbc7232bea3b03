import RTP

/// libFuzzer entry: any bytes as one RTP datagram.
///
/// Invariants: parsing never crashes; a parsed packet serializes without error to its stated
/// length, identical to the input except for the content of padding bytes, and parses back to
/// the same value. RFC 8285 elements that parse rebuild to the same elements.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRTPPacket(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = UnsafeRawBufferPointer(start: data, count: size)
    _ = RTPPacketKind(classifying: input)
    let packet: RTPPacket
    do {
        packet = try RTPPacket.parse(input)
    } catch {
        return 0
    }
    let bytes: [UInt8]
    do {
        bytes = try packet.serialize()
    } catch {
        fatalError("a parsed packet failed to serialize: \(error)")
    }
    guard bytes.count == size, bytes.count == packet.serializedLength else {
        fatalError("serialized \(bytes.count) bytes from a \(size)-byte packet")
    }
    let paddingStart = size - Int(packet.paddingLength)
    guard bytes[..<paddingStart].elementsEqual(input[..<paddingStart]), bytes.last == input.last else {
        fatalError("serialized bytes differ from the input outside the padding")
    }
    do {
        guard try RTPPacket.parse(bytes) == packet else {
            fatalError("parse → serialize → parse changed the packet")
        }
    } catch {
        fatalError("re-parsing a serialized packet failed: \(error)")
    }
    if let headerExtension = packet.header.headerExtension, let elements = try? headerExtension.elements() {
        let rebuilt: RTPHeaderExtension?
        if headerExtension.profile == RTPHeaderExtension.oneByteProfile {
            rebuilt = try? RTPHeaderExtension.oneByte(elements)
        } else {
            rebuilt = try? RTPHeaderExtension.twoByte(elements, appBits: UInt8(headerExtension.profile & 0x0F))
        }
        // Rebuilding can fail only for elements a stricter writer refuses (none here); the
        // elements must survive when it succeeds.
        if let rebuilt, (try? rebuilt.elements()) != elements {
            fatalError("RFC 8285 elements changed on rebuild")
        }
    }
    return 0
}
