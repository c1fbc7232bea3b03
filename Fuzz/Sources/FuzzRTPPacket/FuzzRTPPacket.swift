import RTP

/// libFuzzer entry: any bytes as one RTP datagram.
///
/// Invariants: parsing never crashes; a parsed packet serializes without error to its stated
/// length, identical to the input except for the content of padding bytes, and parses back to
/// the same value. RFC 8285 elements that parse rebuild to the same elements; the in-place
/// element operations of `RTPStreamIdentifier` agree with them (`checkInPlace`).
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
        checkInPlace(
            Array(input),
            elements: elements,
            oneByte: headerExtension.profile == RTPHeaderExtension.oneByteProfile
        )
    }
    return 0
}

/// Reading, renaming and blanking the first element in place (what simulcast does to RTX
/// packets and for receivers that did not agree on an element) must match the element list:
/// the value read is the element's bytes, a rename changes that element's id and nothing else,
/// a blank removes that element and nothing else.
private func checkInPlace(_ packet: [UInt8], elements: [RTPHeaderExtensionElement], oneByte: Bool) {
    guard let first = elements.first else { return }
    let ids = Set(elements.map(\.id))
    let read: String?
    do {
        read = try packet.withUnsafeBytes { try RTPStreamIdentifier.value(id: first.id, inPacket: $0) }
    } catch {
        // Only a value that is not UTF-8 may be refused.
        guard String(validating: first.data, as: UTF8.self) == nil else {
            fatalError("refused a UTF-8 value: \(error)")
        }
        return
    }
    guard read.map({ Array($0.utf8) }) == first.data else {
        fatalError("read \(String(describing: read)) for \(first)")
    }

    let usable: ClosedRange<UInt8> = oneByte ? 1...14 : 1...255
    if let free = usable.first(where: { !ids.contains($0) }) {
        var renamed = packet
        let done = try? renamed.withUnsafeMutableBytes {
            try RTPStreamIdentifier.renameElement(id: first.id, to: free, inPacket: $0)
        }
        guard done == true else { fatalError("could not rename element \(first.id) to the free id \(free)") }
        var expected = elements
        expected[0].id = free
        guard (try? RTPPacket.parse(renamed).header.headerExtension?.elements()) == expected else {
            fatalError("renaming element \(first.id) to \(free) changed more than its id")
        }
    }

    var blanked = packet
    let done = try? blanked.withUnsafeMutableBytes { try RTPStreamIdentifier.blankElement(id: first.id, inPacket: $0) }
    guard done == true else { fatalError("could not blank element \(first.id)") }
    guard (try? RTPPacket.parse(blanked).header.headerExtension?.elements()) == Array(elements.dropFirst()) else {
        fatalError("blanking element \(first.id) changed more than that element")
    }
}
