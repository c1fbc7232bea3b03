/// The transport-wide sequence number header extension
/// (draft-holmer-rmcat-transport-wide-cc-extensions-01 §2.2): one 16-bit counter for every
/// packet sent on a transport (all streams of a BUNDLE), in an RFC 8285 one-byte element whose
/// ID the SDP `a=extmap` line for `uri` gives (§2.3).
///
/// ```
/// |     0xBE     |     0xDE     |           length=1           |
/// |  ID  | L=1  | transport-wide sequence number | zero padding |
/// ```
///
/// `RTCPTransportFeedback` reports packets by this number. On the send path a stream's header
/// extension template (`RTPStreamState.headerExtension`) carries the element, built with
/// `element(id:sequenceNumber:)`, and each packet gets its number with `stamp`, in place,
/// after the payloader wrote it; a packet cut once and copied per receiver gets each receiver's
/// ID and number in its copy (`stamp(_:id:as:inPacket:)`), or the element blanked to padding
/// for a receiver that did not agree on it (`blank(id:inPacket:)`). Reading and stamping walk
/// the elements in the caller's bytes and allocate nothing. The two-byte form (RFC 8285 §4.3)
/// is read and stamped as well.
public enum RTPTransportSequenceNumber {
    /// §2.3: the `a=extmap` URI.
    public static let uri = "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01"
    /// Bytes of the value: a 16-bit big-endian number.
    public static let valueLength = 2
    /// Bytes of the one-byte-form element: the ID/length byte and the value.
    public static let elementLength = 3

    /// The element carrying `sequenceNumber`, for `RTPHeaderExtension.oneByte` (allocates its
    /// 2-byte data: for building a template once, not per packet).
    public static func element(id: UInt8, sequenceNumber: UInt16) -> RTPHeaderExtensionElement {
        RTPHeaderExtensionElement(
            id: id,
            data: [UInt8(truncatingIfNeeded: sequenceNumber >> 8), UInt8(truncatingIfNeeded: sequenceNumber)]
        )
    }

    /// The number an element carries; its data must be exactly 2 bytes.
    public static func value(of element: RTPHeaderExtensionElement) throws(RTPError) -> UInt16 {
        guard element.data.count == valueLength else {
            throw wrongLength(id: element.id, length: element.data.count, offset: nil)
        }
        return UInt16(element.data[0]) << 8 | UInt16(element.data[1])
    }

    /// Writes the one-byte-form element (§2.2: ID, L=1, the number) at `offset` in `buffer` and
    /// returns the offset after it. The caller writes the 0xBEDE preamble and the padding.
    @discardableResult
    public static func write(
        _ sequenceNumber: UInt16,
        id: UInt8,
        into buffer: UnsafeMutableRawBufferPointer,
        at offset: Int
    ) throws(RTPError) -> Int {
        guard (1...14).contains(id) else {
            throw RTPError(
                .invalidExtension,
                "transport-wide sequence number element ID \(id) is outside 1–14 (RFC 8285 §4.2)"
            )
        }
        guard offset >= 0 else {
            throw RTPError(.bufferTooSmall, "transport-wide sequence number element at negative offset \(offset)")
        }
        try ByteWriter.ensure(
            offset + elementLength,
            fits: buffer.count,
            what: "transport-wide sequence number element at offset \(offset)"
        )
        var writer = ByteWriter(buffer, offset: offset)
        writer.write(id << 4 | UInt8(valueLength - 1))
        writer.write(sequenceNumber)
        return writer.offset
    }

    /// The number in element `id` of a serialized RTP packet; nil when the packet has no header
    /// extension, one that is not RFC 8285, or no element `id`.
    public static func read(id: UInt8, inPacket packet: UnsafeRawBufferPointer) throws(RTPError) -> UInt16? {
        guard let offset = try valueOffset(id: id, inPacket: packet) else { return nil }
        return UInt16(packet[offset]) << 8 | UInt16(packet[offset + 1])
    }

    /// Overwrites the number in element `id` of a serialized RTP packet (before SRTP protects
    /// it). Throws when the packet does not carry the element.
    public static func stamp(
        _ sequenceNumber: UInt16,
        id: UInt8,
        inPacket packet: UnsafeMutableRawBufferPointer
    ) throws(RTPError) {
        guard try stamp(sequenceNumber, id: id, as: id, inPacket: packet) else {
            throw RTPError(
                .invalidExtension,
                "RTP packet of \(packet.count) bytes has no transport-wide sequence number element with ID \(id)"
            )
        }
    }

    /// Gives element `id` of a serialized RTP packet (before SRTP protects it) to one receiver:
    /// `sequenceNumber` under `receiverID`, the ID that receiver agreed on for the extension. A
    /// packet cut once from a template and copied per receiver gets each receiver's own ID and
    /// number this way. False, allocating nothing, when the packet carries no element `id`.
    @discardableResult
    public static func stamp(
        _ sequenceNumber: UInt16,
        id: UInt8,
        as receiverID: UInt8,
        inPacket packet: UnsafeMutableRawBufferPointer
    ) throws(RTPError) -> Bool {
        guard let element = try element(id: id, inPacket: UnsafeRawBufferPointer(packet)) else { return false }
        if element.value - element.header == 1 {
            try write(sequenceNumber, id: receiverID, into: packet, at: element.header)
            return true
        }
        guard receiverID != 0 else {
            throw RTPError(.invalidExtension, "transport-wide sequence number element ID 0 is padding (RFC 8285 §4.3)")
        }
        packet[element.header] = receiverID
        packet[element.value] = UInt8(truncatingIfNeeded: sequenceNumber >> 8)
        packet[element.value + 1] = UInt8(truncatingIfNeeded: sequenceNumber)
        return true
    }

    /// Turns element `id` of a serialized RTP packet into padding (RFC 8285 §4.2, §4.3: zero
    /// bytes), for a receiver that did not agree on the extension: it never sees an ID it did
    /// not negotiate. False, allocating nothing, when the packet carries no element `id`.
    @discardableResult
    public static func blank(id: UInt8, inPacket packet: UnsafeMutableRawBufferPointer) throws(RTPError) -> Bool {
        guard let element = try element(id: id, inPacket: UnsafeRawBufferPointer(packet)) else { return false }
        for index in element.header..<element.value + valueLength { packet[index] = 0 }
        return true
    }

    /// Where the 2-byte value of element `id` sits in a serialized RTP packet; nil when absent.
    /// For a stream whose extension never changes this is the same for every packet.
    public static func valueOffset(id: UInt8, inPacket packet: UnsafeRawBufferPointer) throws(RTPError) -> Int? {
        try element(id: id, inPacket: packet)?.value
    }

    /// Where element `id` of a serialized RTP packet starts (its ID byte) and where its value
    /// does; nil when absent.
    static func element(
        id: UInt8,
        inPacket packet: UnsafeRawBufferPointer
    ) throws(RTPError) -> (header: Int, value: Int)? {
        let layout = try RTPHeaderLayout(packet, context: "RTP packet")
        guard packet[0] & 0x10 != 0 else { return nil }
        let start = RTPHeader.fixedLength + 4 * Int(packet[0] & 0x0F)
        let profile = UInt16(packet[start]) << 8 | UInt16(packet[start + 1])
        return try locate(id: id, profile: profile, in: packet, body: start + 4..<layout.headerLength)
    }

    /// Walks the RFC 8285 elements in `bytes[body]` for element `id`; returns the offsets of its
    /// ID byte and its value, nil when absent or when `profile` does not announce elements.
    static func locate(
        id: UInt8,
        profile: UInt16,
        in bytes: UnsafeRawBufferPointer,
        body: Range<Int>
    ) throws(RTPError) -> (header: Int, value: Int)? {
        var found: (header: Int, value: Int)?
        try RTPHeaderExtension.walkElements(profile: profile, in: bytes, body: body) {
            (elementID, header, value) throws(RTPError) -> Bool in
            guard elementID == id else { return true }
            guard value.count == valueLength else {
                throw wrongLength(id: id, length: value.count, offset: header)
            }
            found = (header, value.lowerBound)
            return false
        }
        return found
    }

    private static func wrongLength(id: UInt8, length: Int, offset: Int?) -> RTPError {
        RTPError(
            .invalidExtension,
            "transport-wide sequence number element \(id)\(offset.map { " at offset \($0)" } ?? "") has \(length) "
                + "bytes; it holds 2 (draft-holmer-rmcat-transport-wide-cc-extensions-01 §2.2)"
        )
    }
}

extension RTPHeaderExtension {
    /// The transport-wide sequence number in element `id`; nil when the extension has no such
    /// element or is not RFC 8285. Reads the body in place, without building the element list.
    public func transportSequenceNumber(id: UInt8) throws(RTPError) -> UInt16? {
        let result: Result<UInt16?, RTPError> = data.withUnsafeBytes { raw in
            do throws(RTPError) {
                guard
                    let offset = try RTPTransportSequenceNumber.locate(
                        id: id,
                        profile: profile,
                        in: raw,
                        body: 0..<raw.count
                    )?.value
                else { return .success(nil) }
                return .success(UInt16(raw[offset]) << 8 | UInt16(raw[offset + 1]))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}
