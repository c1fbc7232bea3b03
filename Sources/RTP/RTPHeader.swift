/// The fixed RTP header and what follows it up to the payload (RFC 3550 §5.1): CSRC list and
/// header extension.
///
/// ```
///  0                   1                   2                   3
/// |V=2|P|X|  CC   |M|     PT      |       sequence number         |
/// |                           timestamp                           |
/// |           synchronization source (SSRC) identifier            |
/// |            contributing source (CSRC) identifiers             |
/// ```
///
/// The padding bit belongs to the packet (`RTPPacket.paddingLength`), because only the packet
/// knows how many padding bytes follow the payload; the extension bit is `headerExtension != nil`
/// and the CSRC count is `csrcs.count`, so the header cannot disagree with itself.
public struct RTPHeader: Sendable, Hashable {
    /// RFC 3550 §5.1: "This document defines version 2"; nothing else is accepted.
    public static let supportedVersion: UInt8 = 2
    /// Bytes of the fixed part (V … SSRC).
    public static let fixedLength = 12
    /// CC is a 4-bit field.
    public static let maximumCSRCCount = 15

    public var version: UInt8 { Self.supportedVersion }
    public var marker: Bool
    /// 7 bits: 0–127.
    public var payloadType: UInt8
    public var sequenceNumber: UInt16
    public var timestamp: UInt32
    public var ssrc: UInt32
    /// Up to 15 contributing sources (mixers only; a publisher sends none).
    public var csrcs: [UInt32]
    public var headerExtension: RTPHeaderExtension?

    public init(
        marker: Bool = false,
        payloadType: UInt8,
        sequenceNumber: UInt16,
        timestamp: UInt32,
        ssrc: UInt32,
        csrcs: [UInt32] = [],
        headerExtension: RTPHeaderExtension? = nil
    ) {
        self.marker = marker
        self.payloadType = payloadType
        self.sequenceNumber = sequenceNumber
        self.timestamp = timestamp
        self.ssrc = ssrc
        self.csrcs = csrcs
        self.headerExtension = headerExtension
    }

    /// Header bytes on the wire: 12 + 4 per CSRC + the extension with its preamble.
    public var serializedLength: Int {
        Self.fixedLength + 4 * csrcs.count + (headerExtension?.serializedLength ?? 0)
    }

    /// Checks the fields that have narrower ranges than their Swift types.
    public func validate() throws(RTPError) {
        guard payloadType <= 127 else {
            throw RTPError(.invalidField, "RTP payload type \(payloadType) does not fit in 7 bits (0–127)")
        }
        guard csrcs.count <= Self.maximumCSRCCount else {
            throw RTPError(
                .invalidField,
                "RTP header has \(csrcs.count) CSRCs; the 4-bit CC field allows \(Self.maximumCSRCCount)"
            )
        }
        try headerExtension?.validate()
    }

    /// Writes the header; the caller has validated it and checked the buffer's room.
    func write(to writer: inout ByteWriter, padding: Bool) {
        writer.write(
            Self.supportedVersion << 6 | (padding ? 0x20 : 0) | (headerExtension == nil ? 0 : 0x10)
                | UInt8(truncatingIfNeeded: csrcs.count)
        )
        writer.write((marker ? 0x80 : 0) | (payloadType & 0x7F))
        writer.write(sequenceNumber)
        writer.write(timestamp)
        writer.write(ssrc)
        for csrc in csrcs {
            writer.write(csrc)
        }
        headerExtension?.write(to: &writer)
    }

    /// Parses the header at the start of `bytes` (RFC 3550 §5.1, §5.3.1).
    ///
    /// Returns the header, the offset at which the payload starts, and whether the padding bit
    /// is set (the packet decides what that means).
    public static func parse(
        _ bytes: UnsafeRawBufferPointer
    ) throws(RTPError) -> (header: RTPHeader, payloadOffset: Int, hasPadding: Bool) {
        var reader = ByteReader(bytes, context: "RTP header")
        try reader.need(fixedLength, for: "12-byte fixed header")
        let first = try reader.readUInt8("V/P/X/CC byte")
        let version = first >> 6
        guard version == supportedVersion else {
            throw RTPError(
                .unsupportedVersion,
                "RTP header: version \(version) at offset 0; only version 2 exists (RFC 3550 §5.1)"
            )
        }
        let hasPadding = first & 0x20 != 0
        let hasExtension = first & 0x10 != 0
        let csrcCount = Int(first & 0x0F)
        let second = try reader.readUInt8("M/PT byte")
        let sequenceNumber = try reader.readUInt16("sequence number")
        let timestamp = try reader.readUInt32("timestamp")
        let ssrc = try reader.readUInt32("SSRC")

        try reader.need(4 * csrcCount, for: "\(csrcCount) CSRCs announced by CC")
        var csrcs: [UInt32] = []
        if csrcCount > 0 {
            csrcs.reserveCapacity(csrcCount)
            for index in 0..<csrcCount {
                csrcs.append(try reader.readUInt32("CSRC \(index)"))
            }
        }

        var headerExtension: RTPHeaderExtension?
        if hasExtension {
            let profile = try reader.readUInt16("header extension profile")
            let words = Int(try reader.readUInt16("header extension length"))
            let data = try reader.readBytes(4 * words, "header extension body of \(words) words")
            headerExtension = RTPHeaderExtension(profile: profile, data: data)
        }

        let header = RTPHeader(
            marker: second & 0x80 != 0,
            payloadType: second & 0x7F,
            sequenceNumber: sequenceNumber,
            timestamp: timestamp,
            ssrc: ssrc,
            csrcs: csrcs,
            headerExtension: headerExtension
        )
        return (header, reader.offset, hasPadding)
    }
}
