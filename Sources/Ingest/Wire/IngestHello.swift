/// Which end of the socket a hello comes from.
public struct IngestRole: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// The capture process (on iOS, the broadcast extension): connects and sends media.
    public static let capture = IngestRole(rawValue: 1)
    /// The host (rtc-publish): listens, receives media, encodes and publishes it.
    public static let host = IngestRole(rawValue: 2)

    public var description: String {
        switch self {
        case .capture: "capture"
        case .host: "host"
        default: "role \(rawValue)"
        }
    }
}

/// What a side sends or accepts, as bits of a u32. A capture hello says what it will send; the
/// host's hello says what it accepts. Unknown bits are kept and ignored.
public struct IngestCapabilities: OptionSet, Hashable, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let video = IngestCapabilities(rawValue: 1 << 0)
    public static let appAudio = IngestCapabilities(rawValue: 1 << 1)
    public static let micAudio = IngestCapabilities(rawValue: 1 << 2)
    /// Pause and resume control messages.
    public static let pauseResume = IngestCapabilities(rawValue: 1 << 3)

    public static let all: IngestCapabilities = [.video, .appAudio, .micAudio, .pauseResume]
}

/// The first message in each direction.
///
/// Body (version 1):
/// ```
/// 0  version       u16
/// 2  role          u8
/// 3  name length   u8, 0…64
/// 4  capabilities  u32
/// 8  name          UTF-8
/// ```
/// The first two bytes mean the same in every version, so a side can always read the version
/// and answer a mismatch in words the other side understands.
public struct IngestHello: Sendable, Hashable {
    public var version: UInt16
    public var role: IngestRole
    public var capabilities: IngestCapabilities
    /// Who is talking, for logs and the host's status ("ReplayKit extension 2.3", "rtc-publish").
    public var name: String

    public static let maxNameBytes = 64
    /// Bytes before the name.
    static let fixedSize = 8

    public init(
        version: UInt16 = IngestProtocol.version,
        role: IngestRole,
        capabilities: IngestCapabilities,
        name: String
    ) {
        self.version = version
        self.role = role
        self.capabilities = capabilities
        self.name = name
    }
}
