import Media
import NIOCore

/// Reads ingest messages from bytes (no sockets), checking every field against the protocol and
/// the limits before anything is allocated from it.
///
/// A stream decoder uses it in three steps, so a bad message is refused as early as possible:
/// ``header(in:)`` as soon as the header is buffered (bad magic already at 4 bytes),
/// ``checkBodyPrefix(_:in:)`` once the fixed body fields are in (a frame whose sizes disagree with
/// its length is refused before its planes are buffered), and ``message(_:in:)`` once the whole
/// message is there. ``parse(_:)`` does all three on an array, for tests and cold paths.
public struct IngestParser: Sendable {
    public var limits: IngestLimits
    public var supportedVersions: ClosedRange<UInt16>

    public init(
        limits: IngestLimits = IngestLimits(),
        supportedVersions: ClosedRange<UInt16> = IngestProtocol.supportedVersions
    ) {
        self.limits = limits
        self.supportedVersions = supportedVersions
    }

    /// The checked header at the buffer's reader index (which is not moved); nil while fewer
    /// than 24 bytes are buffered. A bad magic is reported as soon as its bytes are in.
    public func header(in buffer: ByteBuffer) throws(IngestError) -> IngestHeader? {
        let bytes = MessageBytes(buffer: buffer, start: buffer.readerIndex)
        let magicBytes = min(buffer.readableBytes, IngestProtocol.magic.count)
        let magic = try bytes.bytes(0, count: magicBytes, "magic")
        guard magic == Array(IngestProtocol.magic.prefix(magicBytes)) else {
            throw .field(.badMagic, "magic", at: 0, "expected 52 54 43 49 (\"RTCI\"), got \(magic.hexDescription)")
        }
        guard buffer.readableBytes >= IngestProtocol.headerSize else { return nil }

        let type = IngestMessageType(rawValue: try bytes.integer(4, "type"))
        guard let lengths = limits.payloadRange(for: type) else {
            throw .field(
                .unknownType,
                "type",
                at: 4,
                "\(type) is not a message type of version \(IngestProtocol.version) "
                    + "(1 hello, 2 video, 3 audio, 4 control)"
            )
        }
        let flags = IngestFlags(rawValue: try bytes.integer(5, "flags"))
        let isMedia = type == .video || type == .audio
        let allowedFlags: IngestFlags = isMedia ? .definedForMedia : []
        guard allowedFlags.isSuperset(of: flags) else {
            throw .field(
                .invalidField,
                "flags",
                at: 5,
                "0x\(String(flags.rawValue, radix: 16)) sets bits not defined for a \(type) message"
            )
        }
        let reserved = try bytes.integer(6, "reserved", as: UInt16.self)
        guard reserved == 0 else {
            throw .field(.invalidField, "reserved", at: 6, "must be 0, got \(reserved)")
        }
        let length = Int(try bytes.integer(8, "length", as: UInt32.self))
        guard length >= lengths.lowerBound else {
            throw .field(
                .impossibleLength,
                "length",
                at: 8,
                "\(length) bytes cannot hold a \(type) body, which needs at least \(lengths.lowerBound)"
            )
        }
        guard length <= lengths.upperBound else {
            throw .field(
                .payloadTooLarge,
                "length",
                at: 8,
                "\(length) bytes is over the \(lengths.upperBound)-byte limit for \(type) messages"
            )
        }
        let timestamp = IngestTimestamp(
            value: try bytes.integer(12, "timestamp value"),
            timescale: try bytes.integer(20, "timescale")
        )
        try checkTimestamp(timestamp, isMedia: isMedia, type: type)
        return IngestHeader(type: type, flags: flags, payloadLength: length, timestamp: timestamp)
    }

    private func checkTimestamp(
        _ timestamp: IngestTimestamp,
        isMedia: Bool,
        type: IngestMessageType
    )
        throws(IngestError)
    {
        guard timestamp.timescale >= 0 else {
            throw .field(.invalidField, "timescale", at: 20, "\(timestamp.timescale) is negative")
        }
        guard timestamp.timescale != 0 || timestamp.value == 0 else {
            throw .field(
                .invalidField,
                "timestamp value",
                at: 12,
                "\(timestamp.value) with timescale 0 (no timestamp) must be 0"
            )
        }
        guard isMedia || !timestamp.isPresent else {
            throw .field(.invalidField, "timescale", at: 20, "a \(type) message carries no timestamp; must be 0")
        }
    }

    /// Once the fixed fields of a video or audio body are buffered, checks them and that the
    /// header's length is exactly what they imply; does nothing before that or for other types.
    public func checkBodyPrefix(_ header: IngestHeader, in buffer: ByteBuffer) throws(IngestError) {
        let bytes = MessageBytes(buffer: buffer, start: buffer.readerIndex)
        let available = buffer.readableBytes - IngestProtocol.headerSize
        switch header.type {
        case .video where available >= IngestVideo.fixedSize:
            _ = try videoLayout(header, bytes)
        case .audio where available >= IngestAudio.fixedSize:
            _ = try audioLayout(header, bytes)
        default:
            return
        }
    }

    /// The whole message at the buffer's reader index (not moved), whose header is `header`.
    /// A video frame's `captureTime` is 0: the receiver stamps its arrival time.
    public func message(_ header: IngestHeader, in buffer: ByteBuffer) throws(IngestError) -> IngestMessage {
        guard buffer.readableBytes >= header.messageLength else {
            throw .field(
                .truncated,
                "payload",
                at: buffer.readableBytes,
                "the message ends after \(buffer.readableBytes) of its \(header.messageLength) bytes"
            )
        }
        let bytes = MessageBytes(buffer: buffer, start: buffer.readerIndex)
        switch header.type {
        case .hello: return .hello(try hello(header, bytes))
        case .video: return .video(try video(header, bytes))
        case .audio: return .audio(try audio(header, bytes))
        case .control: return .control(try control(header, bytes))
        default:
            throw .field(.unknownType, "type", at: 4, "\(header.type) is not a message type")
        }
    }

    /// One message from the start of `bytes`, and how many bytes it took.
    public func parse(_ bytes: [UInt8]) throws(IngestError) -> (message: IngestMessage, length: Int) {
        let buffer = ByteBuffer(bytes: bytes)
        guard let header = try header(in: buffer) else {
            throw .field(
                .truncated,
                "header",
                at: bytes.count,
                "the message ends after \(bytes.count) bytes; the header has \(IngestProtocol.headerSize)"
            )
        }
        try checkBodyPrefix(header, in: buffer)
        return (try message(header, in: buffer), header.messageLength)
    }
}
