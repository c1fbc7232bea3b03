import ArgumentParser
import Dispatch
import Foundation
import Logging
import Viewer

/// rtc-subscribe: a viewer in a room. Subscribes to a publisher, writes the SDP its answer
/// carries (own keys), prints the ffplay command, and stays until interrupted.
@main
struct RTCSubscribe: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rtc-subscribe",
        abstract: "Join a room as a viewer, subscribe to a publisher, and write the SDP a player opens."
    )

    @Option(help: "Room to join.") var room: String
    @Option(help: "Your uid in the room.") var uid: String
    @Option(help: "The publisher to watch (e.g. alice_sub).") var from: String
    @Option(help: "Signaling server HOST:PORT.") var signal = "127.0.0.1:8443"
    @Option(help: "Join token (rtc-signal --secret).") var token: String?
    @Option(help: "SDP file to write (default <uid>.sdp).") var sdp: String?
    @Option(help: "First of four local ports (video, RTCP, audio, RTCP); default: free ones.") var port: Int?
    @Option(help: "Address the publisher sends to (this host as the publisher reaches it).") var address = "127.0.0.1"
    @Option(help: "Start this player on the SDP ({sdp} is replaced by its path, else appended).") var play: String?
    @Option(help: "Leave after this many seconds.") var duration: Double?

    mutating func run() async throws {
        guard let colon = signal.lastIndex(of: ":"), let signalPort = Int(signal[signal.index(after: colon)...]),
            (1...65535).contains(signalPort)
        else { fail("--signal '\(signal)' is not HOST:PORT") }
        var options = SubscribeSession.Options(room: room, uid: uid, from: from)
        options.signal = (String(signal[..<colon]), signalPort)
        options.token = token
        options.sdpPath = sdp
        options.port = port
        options.address = address
        options.play = play
        options.duration = duration
        LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
        var logger = Logger(label: "rtc-subscribe")
        logger.logLevel = .warning
        let session: SubscribeSession
        do {
            session = try SubscribeSession(options: options, logger: logger) { line in
                FileHandle.standardOutput.write(Data((line + "\n").utf8))
            }
        } catch {
            fail("\(error)")
        }
        let sources = [SIGINT, SIGTERM].map { number in
            Glibc.signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { session.stop() }
            source.resume()
            return source
        }
        defer { sources.forEach { $0.cancel() } }
        do {
            try await session.run()
        } catch {
            FileHandle.standardError.write(Data("rtc-subscribe: \(error)\n".utf8))
            throw ExitCode(1)
        }
    }
}

/// One line naming the problem, exit code 2, before anything has started.
func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("rtc-subscribe: \(message)\n".utf8))
    exit(2)
}
