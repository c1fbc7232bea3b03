import NIOCore
import Synchronization

/// The queue of encoded lines waiting to be written to one connection.
///
/// The room actor hands lines over without waiting, so one slow client never stalls a room; the
/// connection's writer task drains the queue in order. The queue is bounded in bytes: a client that
/// stops reading is disconnected instead of making the server buffer without bound.
final class Outbox: Sendable {
    let lines: AsyncStream<ByteBuffer>
    private let continuation: AsyncStream<ByteBuffer>.Continuation
    private let channel: any Channel
    private let limitBytes: Int
    private let queuedBytes = Mutex(0)

    init(channel: any Channel, limitBytes: Int) {
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
        let fits = queuedBytes.withLock { queued -> Bool in
            guard queued + line.readableBytes <= limitBytes else { return false }
            queued += line.readableBytes
            return true
        }
        guard fits else {
            continuation.finish()
            channel.close(promise: nil)
            return .overflowed
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
        queuedBytes.withLock { $0 -= line.readableBytes }
    }

    /// No more lines: the writer drains what is queued, then closes the connection.
    func finish() {
        continuation.finish()
    }

    /// Closes the connection now, dropping whatever is still queued.
    func forceClose() {
        continuation.finish()
        channel.close(promise: nil)
    }
}
