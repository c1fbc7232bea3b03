import ArgumentParser
import Dispatch
import Logging
import ProcessSupport
import PublishCommand
import Publisher

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// rtc-publish: streams the screen (the built-in test source by default) as H.264 + Opus over
/// SRTP into a room, to a local preview and to any static destinations.
///
/// The process around `PublishSession`: parse (`PublishArguments`, in PublishCommand), validate,
/// run, and map a `PublishError`'s code to the exit status. A synchronous command: the main
/// thread waits in `runBlocking` while the session runs on its own threads and the cooperative
/// pool (see `runBlocking` for why not `async`).
@main
struct RTCPublish: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rtc-publish",
        abstract: "Publish a screen share (H.264 + Opus over SRTP) into a room and to a local preview.",
        discussion: """
            With no input named, streams the built-in synthetic screen (1280x720, 30 fps) and its test \
            tone. Writes the preview SDP (<uid>.sdp) before the first packet; play it with
              ffplay -protocol_whitelist file,udp,rtp -i <uid>.sdp
            Share the X display with --video x11 (the one in $DISPLAY) or --video x11:DISPLAY; pick a \
            monitor, a window or a rectangle with --capture-monitor, --capture-window, --capture-region.
            """
    )

    @OptionGroup var arguments: PublishArguments

    func run() {
        do {
            let options = try arguments.publishOptions()
            FrameMemory.keepLargeBuffersMapped()
            FrameMemory.avoidHugePages()
            LoggingSystem.bootstrap { label in
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = .warning
                return handler
            }
            var logger = Logger(label: "rtc-publish")
            logger.logLevel = arguments.output.verbose ? .info : .warning
            let session = try PublishSession(
                options: options,
                logger: logger,
                output: PublishOutput(progress: { emit($0) }, problem: { writeLine($0, to: STDERR_FILENO) })
            )
            let signals = Self.onTermination { session.stop() }
            defer { signals.forEach { $0.cancel() } }
            let totals = try runBlocking { try await session.run() }.statistics
            emit(
                "\nstopped: \(totals.framesOut) frames, \(totals.audioPackets) audio packets, "
                    + "\(totals.packetsSent) packets sent, \(totals.framesDropped) frames dropped"
            )
        } catch let error as PublishError {
            writeLine("rtc-publish: \(error)", to: STDERR_FILENO)
            Glibc.exit(Self.exitStatus(error.code))
        } catch {
            writeLine("rtc-publish: \(error)", to: STDERR_FILENO)
            Glibc.exit(Self.exitStatus(.failure))
        }
    }

    /// 2: a usage error, found before anything started (the user must fix something); 1: the
    /// publishing failed.
    static func exitStatus(_ code: PublishError.Code) -> Int32 { code == .usage ? 2 : 1 }

    /// SIGINT and SIGTERM end the session cleanly (BYE, unpublish, leave) instead of killing it.
    static func onTermination(_ handler: @escaping @Sendable () -> Void) -> [DispatchSourceSignal] {
        [SIGINT, SIGTERM].map { number in
            Glibc.signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler(handler: handler)
            source.resume()
            return source
        }
    }
}

/// Writes a line to stdout unbuffered, so into a pipe too the SDP path and the status lines
/// appear in order and live.
func emit(_ line: String) {
    writeLine(line, to: STDOUT_FILENO)
}

/// `line` and a newline in as few `write(2)` calls as the descriptor takes; a closed pipe loses
/// the line, not the stream.
func writeLine(_ line: String, to descriptor: Int32) {
    var text = line + "\n"
    text.withUTF8 { bytes in
        guard let base = bytes.baseAddress else { return }
        var offset = 0
        while offset < bytes.count {
            let written = write(descriptor, base + offset, bytes.count - offset)
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { return }
            offset += written
        }
    }
}
