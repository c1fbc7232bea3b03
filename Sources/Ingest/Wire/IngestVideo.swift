import Media

/// A video message: one picture in any supported layout, with its timestamp as sent.
///
/// Body:
/// ```
/// 0  pixel format  u8: 1 NV12 full range, 2 NV12 video range, 3 I420, 4 BGRA
/// 1  reserved      u8, zero
/// 2  rotation      u16, clockwise degrees that make the picture upright: 0, 90, 180, 270
/// 4  width         u16
/// 6  height        u16
/// 8  strides       3 × u32, one per plane (Y, UV / Y, U, V / BGRA); 0 for planes the format lacks
/// 20 planes        each exactly stride × rows bytes, in plane order
/// ```
public struct IngestVideo: Sendable {
    /// The picture. On receipt its `captureTime` is the arrival time on the host's monotonic clock;
    /// the sender's own time is `timestamp`. Planes hold exactly `stride × rows` bytes each.
    public var frame: RawVideoFrame
    public var timestamp: IngestTimestamp
    public var flags: IngestFlags

    public init(frame: RawVideoFrame, timestamp: IngestTimestamp, flags: IngestFlags = []) {
        self.frame = frame
        self.timestamp = timestamp
        self.flags = flags
    }

    /// Bytes before the planes.
    static let fixedSize = 20
    /// Stride slots in the body, whatever the format.
    static let strideSlots = 3
}

extension PixelFormat {
    /// The format's code on the wire.
    var wireCode: UInt8 {
        switch self {
        case .nv12FullRange: 1
        case .nv12VideoRange: 2
        case .i420: 3
        case .bgra: 4
        }
    }

    init?(wireCode: UInt8) {
        switch wireCode {
        case 1: self = .nv12FullRange
        case 2: self = .nv12VideoRange
        case 3: self = .i420
        case 4: self = .bgra
        default: return nil
        }
    }
}
