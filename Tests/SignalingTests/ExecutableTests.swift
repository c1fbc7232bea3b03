import Foundation
import SignalingAuth
import SignalingProtocol
import Testing

/// Runs the built `rtc-signal` binary as a separate process.
@Suite("rtc-signal executable")
struct ExecutableTests {
    @Test(
        "bad arguments print one clear line and exit 2",
        arguments: [
            (["--port", "70000"], "rtc-signal: --port 70000 is not a port number 0–65535\n"),
            (["--tls-cert", "cert.pem"], "rtc-signal: --tls-cert needs --tls-key\n"),
            (["--tls-key", "key.pem"], "rtc-signal: --tls-key needs --tls-cert\n"),
            (["--idle-timeout", "0"], "rtc-signal: --idle-timeout 0.0 is not a number of seconds in (0, 86400]\n"),
            (["--max-members", "0"], "rtc-signal: --max-members 0 is not 1–10000\n"),
            (["--bogus"], "rtc-signal: Unknown option '--bogus'\n"),
            (["--port", "eighty"], "rtc-signal: The value 'eighty' is invalid for '--port <port>'\n"),
            (
                ["token", "--room", "a b", "--uid", "u", "--secret", "s"],
                "rtc-signal: room \"a b\" must be 1–64 characters of A-Z a-z 0-9 _ -\n"
            ),
            (["token", "--uid", "u", "--secret", "s"], "rtc-signal: Missing expected argument '--room <room>'\n"),
            (
                ["token", "--room", "r", "--uid", "u", "--secret", "s", "--ttl", "0"],
                "rtc-signal: --ttl 0 is not 1–31536000 seconds\n"
            ),
            (
                ["token", "--room", "r", "--uid", "u"],
                "rtc-signal: a secret is needed: --secret, --secret-file or RTC_SIGNAL_SECRET\n"
            ),
            (
                ["--secret-file", "/nonexistent/secret"],
                "rtc-signal: --secret-file /nonexistent/secret: cannot read the file\n"
            ),
            (
                ["--tls-cert", "/nonexistent/cert.pem", "--tls-key", "/nonexistent/key.pem", "--port", "0"],
                "rtc-signal: the TLS certificate file /nonexistent/cert.pem does not exist or is not readable\n"
            ),
        ]
    )
    func badArguments(arguments: [String], expected: String) async throws {
        let result = try await runProcess(try rtcSignalExecutable(), arguments)
        #expect(result.status == 2)
        #expect(result.standardError == expected)
        #expect(result.standardOutput.isEmpty)
    }

    @Test("`rtc-signal token` prints a token that verifies for its room and uid until its ttl")
    func tokenSubcommand() async throws {
        let before = Int64(Date().timeIntervalSince1970)
        let result = try await runProcess(
            try rtcSignalExecutable(),
            ["token", "--room", "123456", "--uid", "alice_sub", "--secret", "hunter2", "--ttl", "120"]
        )
        #expect(result.status == 0)
        #expect(result.standardError.isEmpty)
        let lines = result.standardOutput.split(separator: "\n")
        #expect(lines.count == 1)
        let token = String(lines.first ?? "")
        let room = try Fixture.room("123456")
        let uid = try Fixture.uid("alice_sub")
        try SignalingToken.verify(token, room: room, uid: uid, secret: "hunter2", now: before)
        #expect(throws: SignalingError.self) {
            try SignalingToken.verify(token, room: room, uid: uid, secret: "hunter2", now: before + 122)
        }
        #expect(throws: SignalingError.self) {
            try SignalingToken.verify(token, room: room, uid: uid, secret: "hunter3", now: before)
        }
    }

    /// A secret in argv shows in `ps`; from a file or the environment it does not, and the token
    /// is the same.
    @Test("the secret can come from a file or the environment instead of the command line")
    func secretFromFileOrEnvironment() async throws {
        let file = NSTemporaryDirectory() + "rtc-signal-secret-\(UUID().uuidString)"
        try "hunter2\n".write(toFile: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: file) }
        let arguments = ["token", "--room", "123456", "--uid", "alice_sub", "--ttl", "120"]
        let fromArgument = try await runProcess(try rtcSignalExecutable(), arguments + ["--secret", "hunter2"])
        let fromFile = try await runProcess(try rtcSignalExecutable(), arguments + ["--secret-file", file])
        let fromEnvironment = try await runProcess(
            "/usr/bin/env",
            ["RTC_SIGNAL_SECRET=hunter2", try rtcSignalExecutable()] + arguments
        )
        #expect(
            fromFile.status == 0 && fromEnvironment.status == 0,
            "\(fromFile.standardError)\(fromEnvironment.standardError)"
        )
        let token = try #require(fromFile.standardOutput.split(separator: "\n").first)
        try SignalingToken.verify(
            String(token),
            room: try Fixture.room("123456"),
            uid: try Fixture.uid("alice_sub"),
            secret: "hunter2",
            now: Int64(Date().timeIntervalSince1970)
        )
        // Same second, same inputs: all three give the same token (unless a second ticked over).
        #expect(Set([fromArgument.standardOutput, fromFile.standardOutput, fromEnvironment.standardOutput]).count <= 2)
    }

    @Test("`rtc-signal --port 0` serves, and on SIGTERM says goodbye to clients and exits 0")
    func serveAndTerminate() async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try rtcSignalExecutable())
        process.arguments = ["--port", "0", "--idle-timeout", "20"]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = Pipe()
        let log = StreamedOutput(errors)
        try process.run()
        defer {
            if process.isRunning { process.terminate() }
        }
        let port = try await log.waitFor { text -> Int? in
            guard let range = text.range(of: #"port=(\d+)"#, options: .regularExpression) else { return nil }
            return Int(text[range].dropFirst("port=".count))
        }
        let (client, _) = try await joinedLineClient(port: port, room: "r1", uid: "alice", role: .publisher)

        kill(process.processIdentifier, SIGTERM)
        let lines = try await client.linesUntilClosed()
        #expect(lines == [#"{"message":"the server is shutting down","reason":"server-shutdown","type":"goodbye"}"#])
        let deadline = ContinuousClock.now + .seconds(10)
        while process.isRunning && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(!process.isRunning)
        #expect(process.terminationStatus == 0)
        let output = try await log.waitFor { $0.contains("stopped") ? $0 : nil }
        #expect(output.contains("room=r1 uid=alice [SignalingServer] join"))
    }
}
