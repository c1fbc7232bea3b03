/// One element of an RFC 8285 header extension: a local identifier negotiated in SDP
/// (`a=extmap`) and its value.
public struct RTPHeaderExtensionElement: Sendable, Hashable {
    public var id: UInt8
    public var data: [UInt8]

    public init(id: UInt8, data: [UInt8]) {
        self.id = id
        self.data = data
    }
}

// RFC 8285 §4.2 (one-byte header) and §4.3 (two-byte header).
extension RTPHeaderExtension {
    /// RFC 8285 §4.2: the profile value that announces one-byte element headers.
    public static let oneByteProfile: UInt16 = 0xBEDE
    /// RFC 8285 §4.3: two-byte element headers use 0x100 in the top 12 bits; the low 4 bits
    /// ("appbits") are application-defined.
    public static let twoByteProfileBase: UInt16 = 0x1000

    /// True when the profile announces RFC 8285 elements of either form.
    public var usesElements: Bool {
        profile == Self.oneByteProfile || profile & 0xFFF0 == Self.twoByteProfileBase
    }

    /// RFC 8285 §4.2: each element is one byte (ID in the high nibble, length − 1 in the low
    /// nibble) and 1–16 bytes of data. IDs 1–14 only: 0 is padding and 15 is reserved.
    /// The body is zero-padded to a word boundary.
    public static func oneByte(_ elements: [RTPHeaderExtensionElement]) throws(RTPError) -> RTPHeaderExtension {
        var size = 0
        for element in elements {
            guard (1...14).contains(element.id) else {
                throw RTPError(
                    .invalidExtension,
                    "one-byte extension element ID \(element.id) is outside 1–14 (RFC 8285 §4.2)"
                )
            }
            guard (1...16).contains(element.data.count) else {
                throw RTPError(
                    .invalidExtension,
                    "one-byte extension element \(element.id) has \(element.data.count) bytes; 1–16 allowed (RFC 8285 §4.2)"
                )
            }
            size += 1 + element.data.count
        }
        var body: [UInt8] = []
        body.reserveCapacity((size + 3) & ~3)
        for element in elements {
            body.append(element.id << 4 | UInt8(element.data.count - 1))
            body.append(contentsOf: element.data)
        }
        body.append(contentsOf: repeatElement(0, count: (4 - body.count % 4) % 4))
        let result = RTPHeaderExtension(profile: oneByteProfile, data: body)
        try result.validate()
        return result
    }

    /// RFC 8285 §4.3: each element has a one-byte ID (1–255) and a one-byte length (0–255).
    public static func twoByte(
        _ elements: [RTPHeaderExtensionElement],
        appBits: UInt8 = 0
    ) throws(RTPError) -> RTPHeaderExtension {
        guard appBits <= 0x0F else {
            throw RTPError(
                .invalidExtension,
                "two-byte extension appbits \(appBits) do not fit in 4 bits (RFC 8285 §4.3)"
            )
        }
        var body: [UInt8] = []
        for element in elements {
            guard element.id != 0 else {
                throw RTPError(
                    .invalidExtension,
                    "two-byte extension element ID 0 is reserved for padding (RFC 8285 §4.3)"
                )
            }
            guard element.data.count <= 255 else {
                throw RTPError(
                    .invalidExtension,
                    "two-byte extension element \(element.id) has \(element.data.count) bytes; at most 255 allowed"
                )
            }
            body.append(element.id)
            body.append(UInt8(element.data.count))
            body.append(contentsOf: element.data)
        }
        body.append(contentsOf: repeatElement(0, count: (4 - body.count % 4) % 4))
        let result = RTPHeaderExtension(profile: twoByteProfileBase | UInt16(appBits), data: body)
        try result.validate()
        return result
    }

    /// Reads the RFC 8285 elements of this extension, skipping padding bytes (ID 0) and, for the
    /// one-byte form, stopping at the reserved ID 15 as §4.2 requires.
    public func elements() throws(RTPError) -> [RTPHeaderExtensionElement] {
        guard usesElements else {
            throw RTPError(
                .invalidExtension,
                "header extension profile 0x\(String(profile, radix: 16)) does not use RFC 8285 elements"
            )
        }
        var result: [RTPHeaderExtensionElement] = []
        let walked: Result<Void, RTPError> = data.withUnsafeBytes { raw in
            do throws(RTPError) {
                try Self.walkElements(profile: profile, in: raw, body: 0..<raw.count) { id, _, value in
                    result.append(RTPHeaderExtensionElement(id: id, data: Array(raw[value])))
                    return true
                }
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try walked.get()
        return result
    }

    /// Walks the RFC 8285 elements in `bytes[body]` in place: `visit` gets each element's ID, the
    /// offset of its element header and the range of its value, and returns false to stop.
    /// Padding (ID 0) is skipped; the one-byte form ends at the reserved ID 15 (§4.2). Throws for
    /// an element that claims more bytes than remain; offsets in messages are into `bytes`. Does
    /// nothing when `profile` announces no elements. `elements()` and the in-place readers of the
    /// send path (`RTPTransportSequenceNumber`) share it.
    static func walkElements(
        profile: UInt16,
        in bytes: UnsafeRawBufferPointer,
        body: Range<Int>,
        _ visit: (_ id: UInt8, _ header: Int, _ value: Range<Int>) throws(RTPError) -> Bool
    ) throws(RTPError) {
        var index = body.lowerBound
        if profile == oneByteProfile {
            // §4.2: ID in the high nibble, length − 1 in the low one.
            while index < body.upperBound {
                let id = bytes[index] >> 4
                if id == 0 {
                    index += 1
                    continue
                }
                if id == 15 { return }
                let length = Int(bytes[index] & 0x0F) + 1
                guard length <= body.upperBound - index - 1 else {
                    throw RTPError(
                        .invalidExtension,
                        "one-byte extension element \(id) at offset \(index) claims \(length) bytes, "
                            + "\(body.upperBound - index - 1) remain"
                    )
                }
                guard try visit(id, index, index + 1..<index + 1 + length) else { return }
                index += 1 + length
            }
            return
        }
        guard profile & 0xFFF0 == twoByteProfileBase else { return }
        // §4.3: an ID byte (0 pads) and a length byte.
        while index < body.upperBound {
            let id = bytes[index]
            if id == 0 {
                index += 1
                continue
            }
            guard index + 1 < body.upperBound else {
                throw RTPError(
                    .invalidExtension,
                    "two-byte extension element \(id) at offset \(index) has no length byte"
                )
            }
            let length = Int(bytes[index + 1])
            guard length <= body.upperBound - index - 2 else {
                throw RTPError(
                    .invalidExtension,
                    "two-byte extension element \(id) at offset \(index) claims \(length) bytes, "
                        + "\(body.upperBound - index - 2) remain"
                )
            }
            guard try visit(id, index, index + 2..<index + 2 + length) else { return }
            index += 2 + length
        }
    }
}
