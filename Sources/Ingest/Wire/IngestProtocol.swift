/// Constants of the ingest wire format (Docs/ingest.md is the byte-by-byte specification).
///
/// Every integer is little-endian: both ends are little-endian machines (iOS on ARM64, Linux on
/// x86-64 or ARM64), so planes and samples travel exactly as they lie in memory and neither side
/// swaps bytes per sample.
public enum IngestProtocol {
    /// `RTCI` ("RTC ingest"), the first four bytes of every message.
    public static let magic: [UInt8] = [0x52, 0x54, 0x43, 0x49]
    /// The version this implementation speaks.
    public static let version: UInt16 = 1
    /// Versions a host built from this code accepts in a capture client's hello.
    public static let supportedVersions: ClosedRange<UInt16> = 1...1
    /// Bytes in the fixed header before every payload.
    public static let headerSize = 24
}

/// The message type, byte 4 of the header.
public struct IngestMessageType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let hello = IngestMessageType(rawValue: 0x01)
    public static let video = IngestMessageType(rawValue: 0x02)
    public static let audio = IngestMessageType(rawValue: 0x03)
    public static let control = IngestMessageType(rawValue: 0x04)

    /// The types version 1 defines.
    public static let known: [IngestMessageType] = [.hello, .video, .audio, .control]

    public var description: String {
        switch self {
        case .hello: "hello"
        case .video: "video"
        case .audio: "audio"
        case .control: "control"
        default: "type 0x\(String(rawValue, radix: 16))"
        }
    }
}

/// Flag bits, byte 5 of the header. Bits this version does not define must be zero.
public struct IngestFlags: OptionSet, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// On video and audio only: the sender knowingly skipped media before this message (its
    /// capture dropped frames, or this is the first after a resume), so a gap before it is real.
    public static let discontinuity = IngestFlags(rawValue: 0x01)

    /// Bits allowed on media messages; hello and control carry none.
    public static let definedForMedia: IngestFlags = [.discontinuity]
}

/// The fixed 24-byte header in front of every message.
///
/// ```
/// 0  magic      4 bytes "RTCI"
/// 4  type       u8
/// 5  flags      u8
/// 6  reserved   u16, zero
/// 8  length     u32, payload bytes after the header
/// 12 value      i64, capture timestamp value as sent
/// 20 timescale  i32, units per second of the value; 0 = no timestamp
/// ```
public struct IngestHeader: Sendable, Hashable {
    public var type: IngestMessageType
    public var flags: IngestFlags
    public var payloadLength: Int
    public var timestamp: IngestTimestamp

    public init(type: IngestMessageType, flags: IngestFlags, payloadLength: Int, timestamp: IngestTimestamp) {
        self.type = type
        self.flags = flags
        self.payloadLength = payloadLength
        self.timestamp = timestamp
    }

    /// Header plus payload.
    public var messageLength: Int { IngestProtocol.headerSize + payloadLength }
}
