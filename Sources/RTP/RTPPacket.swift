/// An RTP packet (RFC 3550 §5.1): header, payload, and optional padding.
///
/// This value type is for tests, receivers and cold paths; it owns its payload. The send path
/// does not build these: payloaders write headers straight into an `RTPPacketBuffer`.
public struct RTPPacket: Sendable, Hashable {
    /// Largest packet accepted: what a UDP datagram can carry.
    public static let maximumLength = 65_535

    public var header: RTPHeader
    public var payload: [UInt8]
    /// Number of padding bytes after the payload, including the final count byte; 0 means the
    /// padding bit is clear (RFC 3550 §5.1: "the last octet of the padding contains a count of
    /// how many padding octets should be ignored, including itself").
    public var paddingLength: UInt8

    public init(header: RTPHeader, payload: [UInt8], paddingLength: UInt8 = 0) {
        self.header = header
        self.payload = payload
        self.paddingLength = paddingLength
    }

    public var serializedLength: Int { header.serializedLength + payload.count + Int(paddingLength) }

    // MARK: Parsing

    public static func parse(_ bytes: [UInt8]) throws(RTPError) -> RTPPacket {
        try parse(bytes[...])
    }

    public static func parse(_ bytes: ArraySlice<UInt8>) throws(RTPError) -> RTPPacket {
        let result: Result<RTPPacket, RTPError> = bytes.withUnsafeBytes { raw in
            do throws(RTPError) { return .success(try parse(raw)) } catch { return .failure(error) }
        }
        return try result.get()
    }

    /// Parses one packet that fills `bytes` exactly, as a UDP datagram does.
    public static func parse(_ bytes: UnsafeRawBufferPointer) throws(RTPError) -> RTPPacket {
        guard bytes.count <= maximumLength else {
            throw RTPError(.tooLarge, "RTP packet is \(bytes.count) bytes; at most \(maximumLength) accepted")
        }
        let (header, payloadOffset, hasPadding) = try RTPHeader.parse(bytes)
        var paddingLength = 0
        if hasPadding {
            guard bytes.count > payloadOffset else {
                throw RTPError(
                    .invalidPadding,
                    "RTP packet: padding bit set but nothing follows the \(payloadOffset)-byte header"
                )
            }
            paddingLength = Int(bytes[bytes.count - 1])
            guard paddingLength > 0 else {
                throw RTPError(
                    .invalidPadding,
                    "RTP packet: padding count 0 at offset \(bytes.count - 1); it counts itself, so at least 1"
                )
            }
            guard paddingLength <= bytes.count - payloadOffset else {
                throw RTPError(
                    .invalidPadding,
                    "RTP packet: padding count \(paddingLength) at offset \(bytes.count - 1) exceeds the "
                        + "\(bytes.count - payloadOffset) bytes after the header"
                )
            }
        }
        let payload = [UInt8](UnsafeRawBufferPointer(rebasing: bytes[payloadOffset..<bytes.count - paddingLength]))
        return RTPPacket(header: header, payload: payload, paddingLength: UInt8(paddingLength))
    }

    // MARK: Serializing

    /// A new array holding the packet. Padding bytes are zero except the final count.
    public func serialize() throws(RTPError) -> [UInt8] {
        try checkSerializable()
        return try [UInt8].writing(count: serializedLength) { (writer: inout ByteWriter) throws(RTPError) in
            write(to: &writer)
        }
    }

    /// Writes the packet at the start of `buffer` and returns its length.
    @discardableResult
    public func serialize(into buffer: UnsafeMutableRawBufferPointer) throws(RTPError) -> Int {
        try checkSerializable()
        try ByteWriter.ensure(serializedLength, fits: buffer.count, what: "RTP packet")
        var writer = ByteWriter(buffer)
        write(to: &writer)
        return writer.offset
    }

    /// Writes the packet into a reusable packet buffer, setting its count.
    public func serialize(into buffer: RTPPacketBuffer) throws(RTPError) {
        let length = try buffer.withUnsafeMutableStorage { (storage, _) throws(RTPError) in
            try serialize(into: storage)
        }
        try buffer.setCount(length)
    }

    private func checkSerializable() throws(RTPError) {
        try header.validate()
        guard serializedLength <= Self.maximumLength else {
            throw RTPError(.tooLarge, "RTP packet would be \(serializedLength) bytes; at most \(Self.maximumLength)")
        }
    }

    private func write(to writer: inout ByteWriter) {
        header.write(to: &writer, padding: paddingLength > 0)
        writer.write(payload)
        if paddingLength > 0 {
            writer.writeZeros(Int(paddingLength) - 1)
            writer.write(paddingLength)
        }
    }
}
