/// Receiver estimated maximum bitrate, an application-layer feedback message (PSFB FMT 15,
/// draft-alvestrand-rmcat-remb §2.2): the bitrate the receiver estimates the path can carry
/// for the listed SSRCs, as an 18-bit mantissa times 2 to a 6-bit exponent.
///
/// ```
/// | sender SSRC | media SSRC (0) | 'R' 'E' 'M' 'B' | num SSRC(8) BR exp(6) BR mantissa(18) | SSRCs… |
/// ```
public struct RTCPReceiverEstimatedMaximumBitrate: Sendable, Hashable {
    static let format: UInt8 = 15
    /// The unique identifier "REMB".
    static let identifier: UInt32 = 0x5245_4D42
    public static let maximumMantissa: UInt32 = (1 << 18) - 1

    public var senderSSRC: UInt32
    public var mediaSSRC: UInt32
    /// 6 bits on the wire.
    public var exponent: UInt8
    /// 18 bits on the wire.
    public var mantissa: UInt32
    /// At most 255 SSRCs.
    public var ssrcs: [UInt32]

    public init(senderSSRC: UInt32, mediaSSRC: UInt32 = 0, exponent: UInt8, mantissa: UInt32, ssrcs: [UInt32]) {
        self.senderSSRC = senderSSRC
        self.mediaSSRC = mediaSSRC
        self.exponent = exponent
        self.mantissa = mantissa
        self.ssrcs = ssrcs
    }

    /// Encodes `bitrate` (bits per second) with the smallest exponent whose mantissa fits,
    /// rounding down as the draft's receivers do.
    public init(senderSSRC: UInt32, bitrate: UInt64, ssrcs: [UInt32]) {
        var exponent: UInt8 = 0
        var mantissa = bitrate
        while mantissa > UInt64(Self.maximumMantissa) {
            mantissa >>= 1
            exponent += 1
        }
        self.init(senderSSRC: senderSSRC, exponent: exponent, mantissa: UInt32(mantissa), ssrcs: ssrcs)
    }

    /// mantissa × 2^exponent in bits per second, saturating at UInt64.max.
    public var bitrate: UInt64 {
        let value = UInt64(mantissa)
        guard value != 0 else { return 0 }
        guard Int(exponent) <= value.leadingZeroBitCount else { return .max }
        return value << exponent
    }

    /// Reads the body after the two SSRCs when the identifier says "REMB"; returns nil for
    /// any other application-layer feedback, which the compound parser then skips.
    static func read(
        from reader: inout ByteReader,
        senderSSRC: UInt32,
        mediaSSRC: UInt32
    ) throws(RTPError) -> RTCPReceiverEstimatedMaximumBitrate? {
        guard reader.remaining >= 8 else { return nil }
        guard try reader.readUInt32("AFB identifier") == identifier else { return nil }
        let count = Int(try reader.readUInt8("REMB SSRC count"))
        let packed = try reader.readUInt24("REMB exponent and mantissa")
        try reader.need(4 * count, for: "\(count) REMB SSRCs")
        var ssrcs: [UInt32] = []
        ssrcs.reserveCapacity(count)
        for index in 0..<count {
            ssrcs.append(try reader.readUInt32("REMB SSRC \(index)"))
        }
        return RTCPReceiverEstimatedMaximumBitrate(
            senderSSRC: senderSSRC,
            mediaSSRC: mediaSSRC,
            exponent: UInt8(packed >> 18),
            mantissa: packed & maximumMantissa,
            ssrcs: ssrcs
        )
    }
}

extension RTCPReceiverEstimatedMaximumBitrate: RTCPPacketBody {
    var packetType: RTCPPacketType { .payloadFeedback }
    var countField: UInt8 { Self.format }
    var bodyLength: Int { 16 + 4 * ssrcs.count }

    func validate() throws(RTPError) {
        guard exponent < 64, mantissa <= Self.maximumMantissa else {
            throw RTPError(
                .invalidField,
                "REMB exponent \(exponent) or mantissa \(mantissa) exceeds its 6- or 18-bit field"
            )
        }
        guard ssrcs.count <= 255 else {
            throw RTPError(.invalidField, "REMB lists \(ssrcs.count) SSRCs; the count field allows 255")
        }
    }

    func writeBody(to writer: inout ByteWriter) {
        writer.write(senderSSRC)
        writer.write(mediaSSRC)
        writer.write(Self.identifier)
        writer.write(UInt8(truncatingIfNeeded: ssrcs.count))
        writer.writeUInt24(UInt32(exponent) << 18 | mantissa)
        for ssrc in ssrcs {
            writer.write(ssrc)
        }
    }
}
