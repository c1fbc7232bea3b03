import NIOCore

/// Splits a byte stream into lines at `\n` (dropping a `\r` right before it) and fails as soon as a
/// line grows past the limit, without waiting for its end.
///
/// NIOExtras' `LineBasedFrameDecoder` has no length limit, so a peer could make us buffer without
/// bound; this decoder stops at ``SignalingProtocol/maxLineBytes`` + 1 bytes of a line.
public struct BoundedLineDecoder: NIOSingleStepByteToMessageDecoder {
    public typealias InboundOut = ByteBuffer

    public let maxLineBytes: Int
    /// How far into the current line the newline search already went, so each byte is scanned once.
    private var scannedBytes = 0

    public init(maxLineBytes: Int = SignalingProtocol.maxLineBytes) {
        self.maxLineBytes = maxLineBytes
    }

    public mutating func decode(buffer: inout ByteBuffer) throws -> ByteBuffer? {
        let view = buffer.readableBytesView
        // A line of exactly maxLineBytes has its newline at offset maxLineBytes.
        let searchEnd = view.startIndex + min(view.count, maxLineBytes + 1)
        let searchStart = view.startIndex + min(scannedBytes, view.count)
        if let newline = view[searchStart..<searchEnd].firstIndex(of: UInt8(ascii: "\n")) {
            scannedBytes = 0
            return try takeLine(length: newline - view.startIndex, from: &buffer, dropping: 1)
        }
        if view.count > maxLineBytes {
            throw SignalingError(
                .lineTooLong,
                "a line is longer than \(maxLineBytes) bytes; the connection will be closed"
            )
        }
        scannedBytes = view.count
        return nil
    }

    /// At end of input an unterminated last line still counts as a line, so nothing is left over.
    public mutating func decodeLast(buffer: inout ByteBuffer, seenEOF: Bool) throws -> ByteBuffer? {
        if let line = try decode(buffer: &buffer) {
            return line
        }
        guard buffer.readableBytes > 0 else { return nil }
        scannedBytes = 0
        return try takeLine(length: buffer.readableBytes, from: &buffer, dropping: 0)
    }

    private func takeLine(length: Int, from buffer: inout ByteBuffer, dropping terminator: Int) throws -> ByteBuffer {
        guard var line = buffer.readSlice(length: length) else {
            throw SignalingError(.badJSON, "line framing lost track of the input")
        }
        buffer.moveReaderIndex(forwardBy: terminator)
        if line.readableBytesView.last == UInt8(ascii: "\r") {
            line.moveWriterIndex(to: line.writerIndex - 1)
        }
        return line
    }
}

/// What ``SkippingLineDecoder`` reads: a line, or the length of one it dropped for being too long.
public enum DecodedLine: Sendable, Equatable {
    case line(ByteBuffer)
    /// A line of `bytes` bytes (without its `\n`) longer than the limit, read past and dropped.
    case skipped(bytes: Int)
}

/// Like ``BoundedLineDecoder``, but a line over the limit is read past and reported as
/// ``DecodedLine/skipped(bytes:)`` instead of failing the stream: what a client reads from its
/// server. One line it cannot take is the server's mistake (or a newer server's message), not a
/// reason to leave the room; the lines around it are whole and in order. Nothing past the limit
/// is ever buffered.
public struct SkippingLineDecoder: NIOSingleStepByteToMessageDecoder {
    public typealias InboundOut = DecodedLine

    public let maxLineBytes: Int
    private var lines: BoundedLineDecoder
    /// Bytes of the over-long line dropped so far; nil while reading an ordinary line.
    private var skipping: Int?

    public init(maxLineBytes: Int = SignalingProtocol.maxLineBytes) {
        self.maxLineBytes = maxLineBytes
        self.lines = BoundedLineDecoder(maxLineBytes: maxLineBytes)
    }

    public mutating func decode(buffer: inout ByteBuffer) throws -> DecodedLine? {
        if let dropped = skipping {
            let view = buffer.readableBytesView
            guard let newline = view.firstIndex(of: UInt8(ascii: "\n")) else {
                skipping = dropped + view.count
                buffer.moveReaderIndex(forwardBy: view.count)
                return nil
            }
            let length = newline - view.startIndex
            buffer.moveReaderIndex(forwardBy: length + 1)
            skipping = nil
            return .skipped(bytes: dropped + length)
        }
        do {
            return try lines.decode(buffer: &buffer).map(DecodedLine.line)
        } catch let error as SignalingError where error.code == .lineTooLong {
            lines = BoundedLineDecoder(maxLineBytes: maxLineBytes)
            skipping = 0
            return try decode(buffer: &buffer)
        }
    }

    /// An unterminated last line counts as a line, as in ``BoundedLineDecoder``; an over-long
    /// one cut off by the end is reported skipped.
    public mutating func decodeLast(buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodedLine? {
        if let line = try decode(buffer: &buffer) { return line }
        if let dropped = skipping {
            skipping = nil
            let rest = buffer.readableBytes
            buffer.moveReaderIndex(forwardBy: rest)
            return dropped + rest > 0 ? .skipped(bytes: dropped + rest) : nil
        }
        return try lines.decodeLast(buffer: &buffer, seenEOF: seenEOF).map(DecodedLine.line)
    }
}
