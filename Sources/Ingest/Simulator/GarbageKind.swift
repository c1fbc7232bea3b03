/// The malformed message `rtc-capture-sim --garbage` sends, one per way the host must refuse input.
public enum GarbageKind: String, Sendable, CaseIterable, CustomStringConvertible {
    /// A message in the seeds' framing, an '&' marker byte where the magic belongs: what a
    /// capture side written for the old host sends.
    case badMagic = "bad-magic"
    /// A well-framed message of type 0x7F.
    case unknownType = "unknown-type"
    /// A 886x1920 NV12 video header whose length is one byte short of what its strides imply.
    case sizeMismatch = "size-mismatch"
    /// A video header announcing a payload of almost 4 GiB.
    case tooLarge = "too-large"

    public var description: String { rawValue }

    /// The end reason a conforming host answers with.
    public var expectedReason: IngestEndReason {
        switch self {
        case .badMagic, .sizeMismatch: .malformedMessage
        case .unknownType: .unknownMessageType
        case .tooLarge: .tooLarge
        }
    }

    /// The bytes to send: only a header and a fixed body at most, never the payload it announces.
    public var bytes: [UInt8] {
        var header = Self.header(type: 0x02, length: 0)
        switch self {
        case .badMagic:
            header.replaceSubrange(0..<4, with: [UInt8(ascii: "&"), 0, 0, 0])
            return header
        case .unknownType:
            return Self.header(type: 0x7F, length: 0)
        case .sizeMismatch:
            let (width, height, stride) = (886, 1920, 896)
            let length = IngestVideo.fixedSize + stride * height + stride * (height / 2) - 1
            header = Self.header(type: 0x02, length: length)
            var body: [UInt8] = [1, 0, 0, 0]
            body += Self.little(UInt16(width)) + Self.little(UInt16(height))
            body += Self.little(UInt32(stride)) + Self.little(UInt32(stride)) + Self.little(UInt32(0))
            return header + body
        case .tooLarge:
            return Self.header(type: 0x02, length: 0xFFFF_FFF0)
        }
    }

    private static func header(type: UInt8, length: Int) -> [UInt8] {
        IngestProtocol.magic + [type, 0] + little(UInt16(0)) + little(UInt32(truncatingIfNeeded: length))
            + little(Int64(0)) + little(Int32(0))
    }

    private static func little<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value.littleEndian) { Array($0) }
    }
}
