/// The RTP stream identification header extensions: RFC 8852 §3.1 `rtp-stream-id` (RID) and
/// §3.2 `repaired-rtp-stream-id` (RRID), and RFC 8843 §14 `mid`, each an SDES item carried as
/// an RFC 8285 element whose value is the item's text.
///
/// ```
/// |     0xBE     |     0xDE     |           length=2           |
/// | ID=3 | L=1  |  transport-wide number (stamped later)  | ID=4 | L=0 |
/// |     "0"      | ID=10 | L=0 |     "f"      |     0 (padding)     |
/// ```
///
/// Rid-based simulcast (RFC 8853) sends several encodings of one source in one m-section, each
/// on its own SSRC, and signals no SSRC in SDP: the receiver binds each SSRC to an `a=rid` layer
/// from the first packet that carries the RID element, and each RTX SSRC from the RRID
/// (RFC 8852). A layer's packets are cut with the template `headerExtension(...)` builds; its
/// RTX packets (`RTPRetransmission.write` copies the original's extension verbatim) then get the
/// RID element renamed to the RRID id in place (`renameElement`), because §3.2 has the RTX stream
/// name the stream it repairs, with the same value. `blankElement` turns an element into padding
/// for a receiver that did not agree on it; `value` reads one back. The in-place operations walk
/// the caller's bytes and allocate nothing; the two-byte form (RFC 8285 §4.3) is handled as well.
public enum RTPStreamIdentifier {
    /// RFC 8852: the `a=extmap` URI of the RID element (§3.1's RtpStreamId).
    public static let rtpStreamIDURI = "urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id"
    /// RFC 8852: the `a=extmap` URI of the RRID element (§3.2's RepairedRtpStreamId).
    public static let repairedRTPStreamIDURI = "urn:ietf:params:rtp-hdrext:sdes:repaired-rtp-stream-id"
    /// RFC 8843 §14: the `a=extmap` URI of the MID element.
    public static let midURI = "urn:ietf:params:rtp-hdrext:sdes:mid"

    /// RFC 8851 §10 puts no bound on a rid-id, but Janus reads each `a=rid` with `%15s`: a longer
    /// one is cut and never matches the packets' RID. 15 bytes also fit a one-byte element.
    public static let maximumRIDLength = 15
    /// RFC 8285 §4.2: a one-byte element carries 1–16 bytes.
    public static let maximumMIDLength = 16

    /// Checks a rid against RFC 8851 §10 `rid-id = 1*(alpha-numeric / "-" / "_")` and
    /// `maximumRIDLength`.
    public static func validateRID(_ rid: String) throws(RTPError) {
        guard (1...maximumRIDLength).contains(rid.utf8.count) else {
            throw RTPError(
                .invalidField,
                "rid \(quoted(rid)) has \(rid.utf8.count) bytes; 1–\(maximumRIDLength) allowed "
                    + "(RFC 8851 §10, and Janus reads at most 15)"
            )
        }
        guard rid.utf8.allSatisfy(isRIDCharacter) else {
            throw RTPError(
                .invalidField,
                "rid \(quoted(rid)) is not letters, digits, '-' and '_' (RFC 8851 §10 rid-id)"
            )
        }
    }

    /// Checks a mid for the one-byte element form: 1–16 bytes (RFC 8285 §4.2) of visible ASCII.
    /// Whether it is an SDP token (RFC 5888 §4) the SDP writer checks when the offer is written.
    public static func validateMID(_ mid: String) throws(RTPError) {
        guard (1...maximumMIDLength).contains(mid.utf8.count) else {
            throw RTPError(
                .invalidField,
                "mid \(quoted(mid)) has \(mid.utf8.count) bytes; a one-byte element carries 1–16 (RFC 8285 §4.2)"
            )
        }
        guard mid.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw RTPError(.invalidField, "mid \(quoted(mid)) is not visible ASCII (RFC 5888 §4: a token)")
        }
    }

    /// The header extension template for one simulcast layer, RFC 8285 one-byte form: the
    /// transport-wide sequence number slot (`transportWideID`, two zero bytes, stamped per packet
    /// by `RTPTransportSequenceNumber.stamp`) when given, then the MID element, then the RID
    /// element, then zero padding to a word. Built once per layer, not per packet.
    ///
    /// Every packet carries MID and RID: Janus binds an SSRC on the first packet with a RID and
    /// a viewer may join at any time, so the 8 bytes per packet buy never depending on which
    /// packet arrived first.
    public static func headerExtension(
        transportWideID: UInt8?,
        midID: UInt8,
        mid: String,
        ridID: UInt8,
        rid: String
    ) throws(RTPError) -> RTPHeaderExtension {
        try validateMID(mid)
        try validateRID(rid)
        let ids = [transportWideID, midID, ridID].compactMap { $0 }
        guard Set(ids).count == ids.count else {
            throw RTPError(
                .invalidExtension,
                "header extension ids \(ids.map(String.init).joined(separator: ", ")) repeat; "
                    + "each element needs its own"
            )
        }
        var elements: [RTPHeaderExtensionElement] = []
        if let transportWideID {
            elements.append(RTPTransportSequenceNumber.element(id: transportWideID, sequenceNumber: 0))
        }
        elements.append(RTPHeaderExtensionElement(id: midID, data: Array(mid.utf8)))
        elements.append(RTPHeaderExtensionElement(id: ridID, data: Array(rid.utf8)))
        return try RTPHeaderExtension.oneByte(elements)
    }

    /// The text of element `id` of a serialized RTP packet (RID, RRID or MID; RFC 8852 §3: the
    /// SDES item's UTF-8 text); nil when the packet has no header extension, one that is not
    /// RFC 8285, or no element `id` (0 is padding and, in the one-byte form, 15 ends the list).
    /// Allocates the string: for receivers and tests, not the send path.
    public static func value(id: UInt8, inPacket packet: UnsafeRawBufferPointer) throws(RTPError) -> String? {
        guard let element = try locate(id: id, inPacket: packet) else { return nil }
        let bytes = UnsafeRawBufferPointer(rebasing: packet[element.value])
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw RTPError(
                .invalidExtension,
                "extension element \(id) at offset \(element.header) is not UTF-8 text (RFC 8852 §3: an SDES item)"
            )
        }
        return text
    }

    /// Gives element `id` of a serialized RTP packet (before SRTP protects it) the id `newID`,
    /// value unchanged: an RTX packet copied from a layer's packet turns its RID into the RRID
    /// (RFC 8852 §3.2). False, writing nothing, when the packet has no element `id`. Throws when
    /// `newID` does not fit the element's form (one-byte 1–14, two-byte 1–255) or the packet
    /// already carries an element `newID`.
    @discardableResult
    public static func renameElement(
        id: UInt8,
        to newID: UInt8,
        inPacket packet: UnsafeMutableRawBufferPointer
    ) throws(RTPError) -> Bool {
        let readable = UnsafeRawBufferPointer(packet)
        guard let element = try locate(id: id, inPacket: readable) else { return false }
        guard newID != id else { return true }
        if element.isOneByte {
            guard (1...14).contains(newID) else {
                throw RTPError(
                    .invalidExtension,
                    "one-byte extension element ID \(newID) is outside 1–14 (RFC 8285 §4.2); "
                        + "element \(id) at offset \(element.header) keeps its ID"
                )
            }
        } else {
            guard newID != 0 else {
                throw RTPError(.invalidExtension, "two-byte extension element ID 0 is padding (RFC 8285 §4.3)")
            }
        }
        if let clash = try locate(id: newID, inPacket: readable) {
            throw RTPError(
                .invalidExtension,
                "cannot rename extension element \(id) at offset \(element.header) to \(newID): "
                    + "element \(newID) is already at offset \(clash.header)"
            )
        }
        if element.isOneByte {
            packet[element.header] = newID << 4 | packet[element.header] & 0x0F
        } else {
            packet[element.header] = newID
        }
        return true
    }

    /// Turns element `id` of a serialized RTP packet (before SRTP protects it) into padding, its
    /// header and value zero bytes (RFC 8285 §4.2, §4.3), for a receiver that did not agree on
    /// the extension: it never sees an id it did not negotiate. False, writing nothing, when the
    /// packet has no element `id`.
    @discardableResult
    public static func blankElement(id: UInt8, inPacket packet: UnsafeMutableRawBufferPointer) throws(RTPError) -> Bool
    {
        guard let element = try locate(id: id, inPacket: UnsafeRawBufferPointer(packet)) else { return false }
        for index in element.header..<element.value.upperBound { packet[index] = 0 }
        return true
    }

    /// Where element `id` of a serialized RTP packet starts (its ID byte), where its value is,
    /// and whether it is in the one-byte form; nil when absent.
    static func locate(
        id: UInt8,
        inPacket packet: UnsafeRawBufferPointer
    ) throws(RTPError) -> (header: Int, value: Range<Int>, isOneByte: Bool)? {
        let layout = try RTPHeaderLayout(packet, context: "RTP packet")
        guard packet[0] & 0x10 != 0 else { return nil }
        let start = RTPHeader.fixedLength + 4 * Int(packet[0] & 0x0F)
        let profile = UInt16(packet[start]) << 8 | UInt16(packet[start + 1])
        var found: (header: Int, value: Range<Int>, isOneByte: Bool)?
        try RTPHeaderExtension.walkElements(profile: profile, in: packet, body: start + 4..<layout.headerLength) {
            elementID,
            header,
            value in
            guard elementID == id else { return true }
            found = (header, value, profile == RTPHeaderExtension.oneByteProfile)
            return false
        }
        return found
    }

    /// RFC 8851 §10 (`alpha-numeric` from RFC 8866): ASCII letters and digits, `-`, `_`.
    static func isRIDCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, UInt8(ascii: "-"), UInt8(ascii: "_"): return true
        default: return false
        }
    }

    /// Caller-supplied text in a message: at most 20 characters, non-printable ones as `?`.
    private static func quoted(_ text: String) -> String {
        var out = "'"
        for (index, scalar) in text.unicodeScalars.enumerated() {
            if index == 20 { return out + "...'" }
            out.unicodeScalars.append((0x20..<0x7F).contains(scalar.value) ? scalar : "?")
        }
        return out + "'"
    }
}
