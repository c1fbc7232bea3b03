import Foundation
import Logging
import SignalingProtocol
import SignalingServer
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What an abuse campaign found against rtc-signal (issue 22), each over real sockets: running
/// out of file descriptors, the connection cap, half-closing clients, the line-too-long reply
/// racing a client that keeps sending, and error codes that named the wrong problem.
@Suite("Hardening")
struct HardeningTests {
    @Test("a client that sends its requests and half-closes still gets every reply, then end of file")
    func halfClosedClientGetsItsReplies() async throws {
        try await withServer { server in
            let port = server.port
            let (lines, end) = try await offPool {
                let client = try RawTCPClient(port: port)
                try client.send(#"{"type":"ping","id":1}"# + "\n" + #"{"type":"ping","id":2}"# + "\n")
                client.shutdownWrite()
                return client.linesUntilEnd()
            }
            #expect(lines == [#"{"id":1,"type":"pong"}"#, #"{"id":2,"type":"pong"}"#])
            #expect(end == .endOfFile)
        }
    }

    @Test("line-too-long and its goodbye arrive although the client is still sending, and the end is not a reset")
    func lineTooLongReachesAClientStillSending() async throws {
        try await withServer { server in
            let port = server.port
            let (lines, end, sent) = try await offPool { () -> ([String], RawTCPClient.End, Int) in
                let client = try RawTCPClient(port: port)
                let chunk = [UInt8](repeating: UInt8(ascii: "x"), count: 65_536)
                var received: [UInt8] = []
                var end: RawTCPClient.End?
                var sent = 0
                let deadline = Date().addingTimeInterval(10)
                // Keep the server's receive buffer full for a second after it answered.
                var answeredAt: Date?
                while end == nil, Date() < deadline, answeredAt.map({ Date().timeIntervalSince($0) < 1 }) ?? true {
                    sent += client.sendSome(chunk)
                    let (bytes, ended) = client.receive(waitingMilliseconds: 5)
                    received += bytes
                    end = ended
                    if answeredAt == nil, !received.isEmpty { answeredAt = Date() }
                }
                client.shutdownWrite()
                let rest = client.linesUntilEnd()
                return (RawTCPClient.lines(received) + rest.lines, end ?? rest.end, sent)
            }
            let message = "a line is longer than 65536 bytes; the connection will be closed"
            #expect(
                lines == [
                    #"{"code":"line-too-long","message":"\#(message)","type":"error"}"#,
                    #"{"message":"\#(message)","reason":"line-too-long","type":"goodbye"}"#,
                ],
                "after \(sent) bytes sent"
            )
            #expect(end == .endOfFile, "after \(sent) bytes sent")
            #expect(sent > 2 * 65_536, "the client kept sending after the limit")
        }
    }

    @Test("the connection cap refuses one more with goodbye too-many-connections; a freed place is taken again")
    func connectionCapRefusesWithGoodbye() async throws {
        try await withServer({ $0.maxConnections = 3 }) { server in
            let port = server.port
            let admittedAgain = try await offPool { () -> (refused: [String], end: RawTCPClient.End, again: Bool) in
                var clients = try (0..<3).map { _ in try RawTCPClient(port: port) }
                for (index, client) in clients.enumerated() {
                    try client.send(#"{"type":"ping","id":\#(index)}"# + "\n")
                    _ = client.receive(waitingMilliseconds: 5_000)
                }
                let refused = try RawTCPClient(port: port).linesUntilEnd()
                clients.removeFirst()
                // The server notices the close, then admits the next client.
                var again = false
                for _ in 0..<50 where !again {
                    let next = try RawTCPClient(port: port)
                    try next.send(#"{"type":"ping","id":"again"}"# + "\n")
                    again = next.linesUntilEnd(seconds: 0.3).lines.first == #"{"id":"again","type":"pong"}"#
                    if again { clients.append(next) }
                }
                return (refused.lines, refused.end, again)
            }
            #expect(
                admittedAgain.refused == [
                    #"{"message":"the server holds its most connections (3); try again later","reason":"too-many-connections","type":"goodbye"}"#
                ]
            )
            #expect(admittedAgain.end == .endOfFile)
            #expect(admittedAgain.again)
        }
    }

    /// `ulimit -n 256` and 400 clients: the server lowers its cap to fit, refuses the rest with a
    /// goodbye instead of leaving them hanging, says so once, and does not spin on `accept`.
    @Test("out of file descriptors: no busy loop, the rest refused with a goodbye, logged once")
    func fileDescriptorExhaustionIsRefusedNotSpun() async throws {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        if limit.rlim_cur < 2048 {
            limit.rlim_cur = min(limit.rlim_max, 2048)
            setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["-c", "ulimit -n 256 && exec \"$0\" --port 0 --log-level info", try rtcSignalExecutable()]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        let log = StreamedOutput(errors)
        try process.run()
        defer {
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
        }
        let port = try await log.waitFor { text -> Int? in
            guard let line = text.split(separator: "\n").first(where: { $0.hasSuffix("listening") }),
                let field = line.split(separator: " ").first(where: { $0.hasPrefix("port=") })
            else { return nil }
            return Int(field.dropFirst(5))
        }
        let pid = process.processIdentifier
        let outcome = try await offPool {
            () -> (ticks: Int, lines: [String], end: RawTCPClient.End, served: Bool, logAtCap: String) in
            var clients: [RawTCPClient] = []
            for _ in 0..<400 { clients.append(try RawTCPClient(port: port)) }
            Thread.sleep(forTimeInterval: 1)
            let before = try Self.cpuTicks(of: pid)
            Thread.sleep(forTimeInterval: 2)
            let ticks = try Self.cpuTicks(of: pid) - before
            // Those past the cap were told why: the last one to connect, for one.
            let (lines, end) = try #require(clients.last).linesUntilEnd(seconds: 5)
            // The log while the cap held: a newcomer below may still meet it (the 400 close
            // asynchronously) and be refused again, logged again after "accepting again".
            let logAtCap = log.current
            // Once clients leave, a newcomer is served.
            clients.removeAll()
            var served = false
            for _ in 0..<50 where !served {
                Thread.sleep(forTimeInterval: 0.1)
                let client = try RawTCPClient(port: port)
                try client.send(#"{"type":"ping","id":1}"# + "\n")
                served = client.linesUntilEnd(seconds: 0.5).lines.first == #"{"id":1,"type":"pong"}"#
            }
            return (ticks, lines, end, served, logAtCap)
        }
        // A spinning accept loop burns a whole core (200 ticks in 2 s); a waiting server next to nothing.
        let perSecond = Int(sysconf(Int32(_SC_CLK_TCK)))
        #expect(outcome.ticks < perSecond, "rtc-signal used \(outcome.ticks) ticks of CPU in 2 s with 400 clients")
        #expect(
            outcome.lines.count == 1 && outcome.lines[0].contains(#""reason":"too-many-connections""#),
            "\(outcome.lines)"
        )
        #expect(outcome.end == .endOfFile)
        #expect(outcome.served)
        let text = outcome.logAtCap
        #expect(text.components(separatedBy: "connection limit lowered").count == 2, "\(text)")
        #expect(text.components(separatedBy: "refusing new connections").count == 2, "\(text)")
    }

    /// utime + stime of a process, in clock ticks (`/proc/PID/stat` fields 14 and 15).
    static func cpuTicks(of pid: Int32) throws -> Int {
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        // The command name may hold spaces; fields after its closing parenthesis are fixed.
        guard let close = stat.lastIndex(of: ")") else { throw TestFailure("unreadable stat: \(stat)") }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else {
            throw TestFailure("unreadable stat: \(stat)")
        }
        return user + system
    }

    @Test("a slow reader is dropped and logged once, however many lines were still addressed to it")
    func slowReaderIsLoggedOnce() async throws {
        let recorder = LogRecorder()
        var logger = Logger(label: "signal-test") { _ in recorder }
        logger.logLevel = .warning
        try await withServer(
            logger: logger,
            {
                $0.outboxLimitBytes = 128 * 1024
                $0.messageBurst = 10_000
                $0.messagesPerSecond = 10_000
            }
        ) { server in
            let (publisher, _) = try await joinedLineClient(port: server.port, room: "r", uid: "pub", role: .publisher)
            let stalled = try await LineClient.connect(port: server.port, reading: false)
            try await stalled.send(
                ClientRequest(
                    .join(.init(room: try Fixture.room("r"), uid: try Fixture.uid("slow"), role: .subscriber))
                )
            )
            _ = try await publisher.next()
            let padding = "a=x-padding:" + String(repeating: "p", count: 30_000) + "\r\n"
            let stream = StreamDescription(kind: .screen, codecs: ["H264"], sdp: Fixture.screenSDP + padding)
            var dropped = false
            var publishes = 0
            while publishes < 2_000 && !dropped {
                publishes += 1
                try await publisher.send(ClientRequest(id: .number(Int64(publishes)), .publish(.init(stream: stream))))
                dropped =
                    try await publisher.next().message
                    == .memberLeft(.init(uid: try Fixture.uid("slow"), reason: .dropped))
            }
            #expect(dropped)
            #expect(recorder.messages.filter { $0 == "client too slow, closing" }.count == 1, "\(recorder.messages)")
            await stalled.close()
            await publisher.close()
        }
    }
}

/// Keeps the messages a logger was given.
final class LogRecorder: LogHandler, Sendable {
    private let recorded = Mutex<[String]>([])
    var messages: [String] { recorded.withLock { $0 } }

    var metadata: Logger.Metadata {
        get { [:] }
        set {}
    }
    var logLevel: Logger.Level {
        get { .trace }
        set {}
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { nil }
        set {}
    }

    func log(event: LogEvent) {
        recorded.withLock { $0.append("\(event.message)") }
    }
}
