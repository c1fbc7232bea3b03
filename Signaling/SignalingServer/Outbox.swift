import NIOCore
import Synchronization

/// The queue of encoded lines waiting to be written to one connection.
///
/// The room actor hands lines over without waiting, so one slow client never stalls a room; the
/// connection's writer task drains the queue in order. The queue is bounded in bytes: a client that
/// stops reading is disconnected instead of making the server buffer without bound.
///
/// A WHEP session is a member without a connection of its own (`channel` nil): its task reads
/// `lines` itself.
final class Outbox: Sendable {
    let lines: AsyncStream<ByteBuffer>
    private let continuation: AsyncStream<ByteBuffer>.Continuation
    private let channel: (any Channel)?
    private let limitBytes: Int
    /// Bytes queued now, and whether the queue was finished (later lines are discarded).
    private let state = Mutex((queuedBytes: 0, finished: false))

    init(channel: (any Channel)?, limitBytes: Int) {
        (self.lines, self.continuation) = AsyncStream.makeStream(of: ByteBuffer.self)
        self.channel = channel
        self.limitBytes = limitBytes
    }

    enum SendResult {
        case queued
        /// The queue is over its limit; the connection is being closed.
        case overflowed
        /// The outbox was finished earlier; the line was discarded.
        case closed
    }

    @discardableResult
    func send(_ line: ByteBuffer) -> SendResult {
        let result = state.withLock { state -> SendResult in
            guard !state.finished else { return .closed }
            guard state.queuedBytes + line.readableBytes <= limitBytes else {
                state.finished = true
                return .overflowed
            }
            state.queuedBytes += line.readableBytes
            return .queued
        }
        guard result == .queued else {
            if result == .overflowed {
                // Reported once: later lines to this connection are simply `.closed`.
                continuation.finish()
                channel?.close(promise: nil)
            }
            return result
        }
        switch continuation.yield(line) {
        case .enqueued:
            return .queued
        case .dropped, .terminated:
            return .closed
        @unknown default:
            return .closed
        }
    }

    /// The writer wrote `line`; its bytes no longer count against the limit.
    func written(_ line: ByteBuffer) {
        state.withLock { $0.queuedBytes -= line.readableBytes }
    }

    /// No more lines: the writer drains what is queued, then closes the connection.
    func finish() {
        state.withLock { $0.finished = true }
        continuation.finish()
    }

    /// Closes the connection now, dropping whatever is still queued.
    func forceClose() {
        finish()
        channel?.close(promise: nil)
    }
}
