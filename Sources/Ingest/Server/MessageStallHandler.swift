import NIOCore

/// Ends a session whose client stops in the middle of a message.
///
/// Between messages a capture client may be silent for as long as it likes (a paused broadcast
/// sends nothing), but once a message has begun, the rest of it must follow within the timeout:
/// otherwise a client that sends half a picture and stalls would hold the one capture slot
/// forever, as one that never says hello would without the hello deadline.
///
/// Sits before the frame decoder and counts the bytes that come in; ``SessionSignalHandler``
/// reports each message the decoder completes. While the two differ a message is in flight, and
/// its deadline runs from the read that began it.
final class MessageStallHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let timeout: TimeAmount
    private var bytesIn = 0
    private var bytesDecoded = 0
    private var completedDuringRead = false
    private var finished = false
    private var deadline: Scheduled<Void>?
    /// Told when the deadline passes (the session's signal handler, which ends the session).
    var onStall: ((String) -> Void)?

    init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        bytesIn += unwrapInboundIn(data).readableBytes
        completedDuringRead = false
        context.fireChannelRead(data)
        guard !finished else { return }
        if bytesIn == bytesDecoded {
            cancel()
        } else if deadline == nil || completedDuringRead {
            // A new message began in this read (or the one in flight just did).
            arm(context)
        }
    }

    /// The decoder produced a message of `wireLength` bytes.
    func messageDecoded(wireLength: Int) {
        bytesDecoded += wireLength
        completedDuringRead = true
    }

    /// The decoder gave up (a protocol error) or the session is ending: nothing more to time.
    func stop() {
        finished = true
        cancel()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        stop()
    }

    private func arm(_ context: ChannelHandlerContext) {
        cancel()
        let loopBound = NIOLoopBound(self, eventLoop: context.eventLoop)
        let seconds = Double(timeout.nanoseconds) / 1e9
        deadline = context.eventLoop.scheduleTask(in: timeout) {
            let handler = loopBound.value
            handler.deadline = nil
            guard !handler.finished else { return }
            handler.finished = true
            let partial = handler.bytesIn - handler.bytesDecoded
            handler.onStall?(
                "a message stalled: \(partial) bytes of it arrived and not the rest within \(seconds) s"
            )
        }
    }

    private func cancel() {
        deadline?.cancel()
        deadline = nil
    }
}
