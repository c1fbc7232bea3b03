/// A pause, resume or end, in either direction (the host sends only ends).
///
/// Body:
/// ```
/// 0  command      u8: 1 pause, 2 resume, 3 end
/// 1  reserved     u8, zero
/// 2  reason       u16: an IngestEndReason for end, zero otherwise
/// 4  text length  u16, 0…256; zero except for end
/// 6  text         UTF-8, a message for the user ("closed after bad magic at byte 0")
/// ```
public enum IngestControl: Sendable, Hashable {
    /// The capture paused (ReplayKit's `broadcastPaused`): no media follows until `resume`.
    case pause
    /// The capture resumed; media follows again, its timestamps showing the gap.
    case resume
    /// The session ends; the sender closes the connection after this message.
    case end(IngestEndReason, String)

    public static let maxTextBytes = 256
    static let fixedSize = 6

    static let pauseCommand: UInt8 = 1
    static let resumeCommand: UInt8 = 2
    static let endCommand: UInt8 = 3
}
