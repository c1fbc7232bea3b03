/// Why an ingest session ended: the 16-bit code an end message carries, in both directions.
///
/// Modelled on the seeds' broadcast end reasons (seed 003: requested by host, disconnected,
/// version mismatch), plus one code per way the host refuses input, so a capture process can
/// tell its user what happened. The set is open: a peer shows a code it does not know by number.
public struct IngestEndReason: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// The capture side finished the broadcast on purpose (the user stopped it).
    public static let captureFinished = IngestEndReason(rawValue: 1)
    /// The host ended the broadcast on purpose (seed 003's "requested by host").
    public static let requestedByHost = IngestEndReason(rawValue: 2)
    /// The connection dropped without an end message (seed 003's "disconnected"); never sent,
    /// only reported locally.
    public static let disconnected = IngestEndReason(rawValue: 3)
    /// The hello named a protocol version the other side does not speak (seed 003's "version
    /// mismatch").
    public static let versionMismatch = IngestEndReason(rawValue: 4)
    /// A message broke the framing or its body's rules: bad magic, impossible length, sizes that
    /// disagree, a bad field.
    public static let malformedMessage = IngestEndReason(rawValue: 5)
    /// A message or picture was over the receiver's limits.
    public static let tooLarge = IngestEndReason(rawValue: 6)
    /// The message type is unknown to the receiver.
    public static let unknownMessageType = IngestEndReason(rawValue: 7)
    /// Another capture client already streams to this host.
    public static let busy = IngestEndReason(rawValue: 8)
    /// No hello arrived in time.
    public static let timeout = IngestEndReason(rawValue: 9)
    /// A well-formed message out of place (media before the hello, a second hello, wrong role).
    public static let unexpectedMessage = IngestEndReason(rawValue: 10)
    /// The host is shutting down.
    public static let hostShutdown = IngestEndReason(rawValue: 11)
    /// A picture the stream cannot take: under the host's smallest stream picture on a side,
    /// or a sliver that would fit the stream's box as such (Docs/ingest.md).
    public static let pictureTooSmall = IngestEndReason(rawValue: 12)
    /// The capture's display went away (the X server ended or dropped the connection): the
    /// capture side ends its session with this, and the host's stream goes on without it.
    public static let displayGone = IngestEndReason(rawValue: 13)
    /// What the capture followed is gone (the captured window was closed).
    public static let targetGone = IngestEndReason(rawValue: 14)

    static let names: [UInt16: String] = [
        1: "capture-finished", 2: "requested-by-host", 3: "disconnected", 4: "version-mismatch",
        5: "malformed-message", 6: "too-large", 7: "unknown-message-type", 8: "busy", 9: "timeout",
        10: "unexpected-message", 11: "host-shutdown", 12: "picture-too-small", 13: "display-gone",
        14: "target-gone",
    ]

    /// The kebab-case name, or `reason-N` for a code this version does not know.
    public var description: String { Self.names[rawValue] ?? "reason-\(rawValue)" }
}
