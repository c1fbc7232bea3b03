import Media
import NIOCore

/// Splits the byte stream into ingest messages, refusing a bad one before it is buffered: the
/// header is checked as soon as it is in (bad magic at 4 bytes), a payload over the type's limit
/// is refused on its length alone, and a video or audio body whose sizes disagree with the length
/// is refused once its fixed fields are in, before its planes or samples are buffered.
///
/// After a protocol error it reports the error once and then discards everything that follows:
/// the session answers with an end message and closes, and no further byte is interpreted.
struct IngestFrameDecoder: NIOSingleStepByteToMessageDecoder {
    typealias InboundOut = IngestInbound

    let parser: IngestParser
    private var pending: IngestHeader?
    private var failed = false

    init(parser: IngestParser) {
        self.parser = parser
    }

    mutating func decode(buffer: inout ByteBuffer) throws -> IngestInbound? {
        guard !failed else {
            buffer.moveReaderIndex(to: buffer.writerIndex)
            return nil
        }
        do {
            let header: IngestHeader
            if let pending {
                header = pending
            } else {
                guard let fresh = try parser.header(in: buffer) else { return nil }
                header = fresh
                pending = fresh
                // One allocation for the whole message instead of doubling as reads arrive.
                buffer.reserveCapacity(minimumWritableBytes: max(0, fresh.messageLength - buffer.readableBytes))
            }
            try parser.checkBodyPrefix(header, in: buffer)
            guard buffer.readableBytes >= header.messageLength else { return nil }
            let message = try parser.message(header, in: buffer)
            buffer.moveReaderIndex(forwardBy: header.messageLength)
            pending = nil
            return .message(message, wireLength: header.messageLength, arrival: MonotonicClock.now())
        } catch {
            failed = true
            buffer.moveReaderIndex(to: buffer.writerIndex)
            return .protocolError(error)
        }
    }

    mutating func decodeLast(buffer: inout ByteBuffer, seenEOF: Bool) throws -> IngestInbound? {
        if let decoded = try decode(buffer: &buffer) {
            return decoded
        }
        guard !failed, buffer.readableBytes > 0 else { return nil }
        let partial = buffer.readableBytes
        buffer.moveReaderIndex(to: buffer.writerIndex)
        let what = pending.map { "a \($0.type) message of \($0.messageLength) bytes" } ?? "a message header"
        return .closedMidMessage("the connection closed \(partial) bytes into \(what)")
    }
}
