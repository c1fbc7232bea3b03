import Logging
import NIOCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// How many connections the process's file descriptors allow.
///
/// A server that accepts until `accept` fails with `EMFILE` has already lost: the pending
/// connection stays in the backlog, the listening socket stays readable, and an event loop
/// retries at full speed (SwiftNIO's `AcceptBackoffHandler` cannot stop it, because the failed
/// accept leaves the read pending). So the server raises its soft limit to the hard one at start
/// and admits at most the limit less a reserve for its own descriptors; the rest are refused with
/// a `goodbye` while descriptors remain to say it.
enum FileDescriptorBudget {
    /// Descriptors kept for the process itself: event loops, standard streams, TLS files, logs.
    static let reserved = 64

    /// Raises the soft `RLIMIT_NOFILE` to the hard limit and returns the soft limit now in force.
    static func raiseLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return Int.max }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return limit.rlim_cur == rlim_t.max ? Int.max : Int(clamping: limit.rlim_cur)
    }

    /// The connection limit that fits `descriptors`, never above `configured`, at least 1.
    static func connections(configured: Int, descriptors: Int) -> Int {
        max(1, min(configured, descriptors - reserved))
    }
}

/// On the listening channel: when `accept` fails for want of descriptors (`EMFILE`, or the
/// system's table full, `ENFILE`), stops watching the listening socket for a second and then
/// accepts again, instead of retrying at full speed. Logs the first failure, then at most one
/// line a minute with the count, not one per failure.
///
/// NIO's own `AcceptBackoffHandler` (which the bootstrap also installs) delays the next *read
/// request*, but a failed accept leaves the read pending and the socket registered, so without
/// this the event loop spins on `accept4` (seen at 100 % of a core under `ulimit -n 256`).
final class AcceptErrorHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = Channel
    typealias InboundOut = Channel

    /// How long accepting pauses after a failure; connections wait in the backlog meanwhile.
    static let pause = TimeAmount.seconds(1)
    static let logInterval = TimeAmount.seconds(60)

    private let logger: Logger
    private var paused = false
    private var failures = 0
    private var lastLog: NIODeadline?

    init(logger: Logger) {
        self.logger = logger
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        guard let ioError = error as? IOError, ioError.errnoCode == EMFILE || ioError.errnoCode == ENFILE else {
            context.fireErrorCaught(error)
            return
        }
        failures += 1
        let now = NIODeadline.now()
        if lastLog.map({ now - $0 >= Self.logInterval }) ?? true {
            logger.error(
                "out of file descriptors: accepting paused for a second at a time",
                metadata: ["error": "\(ioError)", "acceptFailures": "\(failures)"]
            )
            lastLog = now
            failures = 0
        }
        guard !paused, let options = context.channel.syncOptions else { return }
        // Turning autoRead off unregisters the socket from the event loop; on again re-arms it.
        paused = (try? options.setOption(.autoRead, value: false)) != nil
        let loopBound = NIOLoopBound(self, eventLoop: context.eventLoop)
        let channel = NIOLoopBound(context.channel, eventLoop: context.eventLoop)
        context.eventLoop.scheduleTask(in: Self.pause) {
            loopBound.value.paused = false
            try? channel.value.syncOptions?.setOption(.autoRead, value: true)
        }
    }
}
