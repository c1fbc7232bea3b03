import ArgumentParser
import Ingest
import Logging
import Media

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// `rtc-capture-sim`: the iOS broadcast extension's part, played against `rtc-publish --ingest`.
@main
struct CaptureSim: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rtc-capture-sim",
        abstract: "Send a synthetic screen share (NV12 video, app and mic audio) to an ingest host.",
        discussion: """
            Connects like an iOS broadcast extension: full-range NV12 frames at a portrait phone size, \
            app audio (44.1 kHz stereo) and mic audio (32 kHz mono) in uneven chunks, paced in real time. \
            Prints one summary line at the end. Exit status: 0 when the run finished (or --garbage got the \
            host's answer), 1 when the host could not be reached or ended the session, 2 for bad arguments.
            """
    )

    @Option(help: "Host address: unix:/path or tcp:HOST:PORT (loopback only).")
    var ingest: String

    @Option(help: "Seconds to stream.")
    var duration: Double = 10

    @Option(help: "Picture size WxH (portrait phone by default).")
    var size: String = "886x1920"

    @Option(help: "Frames per second.")
    var fps: Int = 30

    @Option(help: "Audio sources: app,mic | app | mic | none.")
    var audio: String = "app,mic"

    @Flag(help: "Stamp frames like the seed's bug: frameTime += 1000 on a 1000 timescale (1 s per frame).")
    var bogusTimestamps = false

    @Option(help: "Pause at this second (a control message; nothing is sent while paused).")
    var pauseAt: Double?

    @Option(help: "Resume at this second.")
    var resumeAt: Double?

    @Option(help: "Drop the connection at this second and reconnect shortly after.")
    var disconnectAt: Double?

    @Option(help: "Seconds to wait before reconnecting after --disconnect-at.")
    var reconnectDelay: Double = 0.3

    @Flag(help: "Send one malformed message after the first frame and report the host's end reason.")
    var garbage = false

    @Option(help: "What --garbage sends: \(GarbageKind.allCases.map(\.rawValue).joined(separator: ", ")).")
    var garbageKind: String = GarbageKind.sizeMismatch.rawValue

    @Option(help: "Rotation each frame carries (0, 90, 180, 270): the buffer holds the picture turned back by it.")
    var rotation: Int = 0

    @Flag(help: "Send video as fast as the host takes it (stamped as if at --fps), to test that the host drops.")
    var flood = false

    @Option(help: "Name sent in the hello.")
    var name: String = "rtc-capture-sim"

    @Flag(help: "Log what happens on standard error.")
    var verbose = false

    /// Argument errors are one line and status 2 (ArgumentParser's default is the usage text and
    /// status 64); `--help` still prints the help.
    static func main() async {
        let command: CaptureSim
        do {
            command = try parse()
        } catch {
            guard exitCode(for: error) == .validationFailure else { exit(withError: error) }
            fail(message(for: error), status: 2)
        }
        do {
            try await command.run()
        } catch {
            exit(withError: error)
        }
    }

    func run() async throws {
        let options: CaptureSimulatorOptions
        do {
            options = try makeOptions()
            try options.validate()
        } catch {
            Self.fail(error.message, status: 2)
        }
        var logger = Logger(label: "rtc-capture-sim")
        logger.logLevel = verbose ? .info : .warning
        do {
            let summary = try await CaptureSimulator.run(options, logger: logger)
            print(summary)
            let answered = options.garbage != nil && summary.hostEnd != nil
            if !summary.completed && !answered { throw ExitCode(1) }
        } catch let error as IngestError {
            Self.fail(error.message, status: 1)
        }
    }

    private func makeOptions() throws(IngestError) -> CaptureSimulatorOptions {
        var options = CaptureSimulatorOptions(address: try IngestAddress(parsing: ingest), duration: duration)
        let parts = size.split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, let width = Int(parts[0]), let height = Int(parts[1]) else {
            throw IngestError(.invalidOption, "--size '\(size)' is not WxH, as in 886x1920")
        }
        options.width = width
        options.height = height
        options.frameRate = fps
        options.audioSources = try Self.audioSources(audio)
        options.bogusTimestamps = bogusTimestamps
        options.pauseAt = pauseAt
        options.resumeAt = resumeAt
        options.disconnectAt = disconnectAt
        options.reconnectDelay = reconnectDelay
        if garbage {
            guard let kind = GarbageKind(rawValue: garbageKind) else {
                throw IngestError(
                    .invalidOption,
                    "--garbage-kind '\(garbageKind)' is not one of \(GarbageKind.allCases.map(\.rawValue).joined(separator: ", "))"
                )
            }
            options.garbage = kind
        }
        guard let turn = Rotation(rawValue: rotation) else {
            throw IngestError(.invalidOption, "--rotation \(rotation) is not 0, 90, 180 or 270")
        }
        options.rotation = turn
        options.flood = flood
        options.name = name
        return options
    }

    private static func audioSources(_ text: String) throws(IngestError) -> [AudioSource] {
        if text == "none" { return [] }
        var sources: [AudioSource] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            switch part {
            case "app": sources.append(.app)
            case "mic": sources.append(.mic)
            default:
                throw IngestError(.invalidOption, "--audio '\(text)' is not app,mic, app, mic or none")
            }
        }
        return sources
    }

    /// One line on standard error and the exit status; what a script or a person reads.
    private static func fail(_ message: String, status: Int32) -> Never {
        let line = "rtc-capture-sim: \(message.split(separator: "\n").joined(separator: " "))\n"
        _ = line.withCString { write(STDERR_FILENO, $0, strlen($0)) }
        terminate(status)
    }
}

/// The C library's `exit`, which `ParsableCommand.exit(withError:)` hides inside the command.
private func terminate(_ status: Int32) -> Never {
    exit(status)
}
