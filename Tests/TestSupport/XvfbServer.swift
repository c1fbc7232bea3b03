import Foundation
import Glibc

/// A private Xvfb X server for one test: started on a free display number (never :0, never the
/// user's `$DISPLAY`), ready to accept clients when `init` returns, stopped (SIGTERM, then SIGKILL)
/// by `stop()` or when released.
///
/// Xvfb's own `-displayfd` search starts at :0, so the number is chosen here instead: a random
/// start in 200..<10000, then the next ones while Xvfb reports the display taken. Xvfb is still
/// started with `-displayfd`: it writes the number there once its sockets listen, which is the
/// readiness signal. Its stderr goes to a file (nothing can fill and stall it); its failures quote
/// that file. A small shell watchdog kills it if the test process dies without releasing it.
public final class XvfbServer {
    /// ":N", for `DISPLAY` and `-display`.
    public let display: String
    public let width: Int
    public let height: Int

    private let xvfb: Process
    private let directory: TemporaryDirectory
    private let errorPath: String
    /// Kept open: Xvfb's stdout, where `-displayfd 1` wrote the number.
    private let readyPipe: Pipe
    private let watchdog: Process?
    private var end = ProcessEnd()
    private var stopped = false

    public init(width: Int = 1280, height: Int = 720, extraArguments: [String] = []) throws {
        self.width = width
        self.height = height
        directory = try TemporaryDirectory()
        let stderrPath = directory.path + "/Xvfb.stderr"
        errorPath = stderrPath
        guard FileManager.default.fileExists(atPath: "/usr/bin/Xvfb") else {
            throw InteropFailure("/usr/bin/Xvfb not found (Debian: apt-get install xvfb)")
        }
        let arguments = [
            "-displayfd", "1", "-screen", "0", "\(width)x\(height)x24", "-nolisten", "tcp", "-noreset",
            "+extension", "RANDR",
        ]
        var number = Int.random(in: 200..<10000)
        var failures: [String] = []
        for _ in 0..<20 {
            defer { number += 1 }
            if FileManager.default.fileExists(atPath: "/tmp/.X\(number)-lock") { continue }
            let attempt = try Self.start(
                number: number,
                arguments: arguments + extraArguments,
                errorPath: stderrPath,
                directory: directory.path
            )
            switch attempt {
            case .started(let process, let pipe):
                display = ":\(number)"
                readyPipe = pipe
                xvfb = process
                watchdog = Self.startWatchdog(for: process.processIdentifier)
                return
            case .displayTaken(let why):
                failures.append(":\(number): \(why)")
            }
        }
        throw InteropFailure("Xvfb could not find a free display in 20 tries:\n" + failures.joined(separator: "\n"))
    }

    deinit { stop() }

    /// Whether Xvfb is still running (false once stopped, or if it crashed).
    public var isRunning: Bool { end.status(of: xvfb) == nil }

    /// Xvfb's stderr so far (for failure messages).
    public var errors: String { (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "" }

    /// Runs `/usr/bin/<tool>` (or `tool` itself if it is a path) with `DISPLAY` set to this server
    /// and returns its stdout; throws with its stderr if it exits non-zero or runs past 30 s.
    @discardableResult
    public func run(_ tool: String, _ arguments: [String]) throws -> String {
        var environment = ProcessInfo.processInfo.environment
        environment["DISPLAY"] = display
        return try runTool(
            tool.contains("/") ? tool : "/usr/bin/" + tool,
            arguments,
            environment: environment,
            directory: directory.path,
            timeout: 30,
            label: "\(tool) \(arguments.joined(separator: " ")) on \(display)"
        )
    }

    /// SIGTERM, up to 3 s for Xvfb to leave, then SIGKILL; waits for it. Safe to call again.
    public func stop() {
        guard !stopped else { return }
        stopped = true
        if let watchdog {
            // Not `waitUntilExit()`: it may never return (see `BackgroundProcess.zombieStatus`).
            var watchdogEnd = ProcessEnd()
            Glibc.kill(watchdog.processIdentifier, SIGKILL)
            let deadline = Date().addingTimeInterval(5)
            while watchdogEnd.status(of: watchdog) == nil, Date() < deadline { usleep(5_000) }
        }
        if isRunning {
            Glibc.kill(xvfb.processIdentifier, SIGTERM)
            if !wait(seconds: 3) {
                Glibc.kill(xvfb.processIdentifier, SIGKILL)
                _ = wait(seconds: 10)
                // Killed, it left its lock and socket files; they are ours if the lock says so.
                let number = display.dropFirst()
                let lock = "/tmp/.X\(number)-lock"
                let owner = (try? String(contentsOfFile: lock, encoding: .utf8))?
                    .trimmingCharacters(in: .whitespacesAndNewlines)
                if owner == "\(xvfb.processIdentifier)" {
                    try? FileManager.default.removeItem(atPath: "/tmp/.X11-unix/X\(number)")
                    try? FileManager.default.removeItem(atPath: lock)
                }
            }
        }
    }

    private func wait(seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while isRunning {
            guard Date() < deadline else { return false }
            usleep(10_000)
        }
        return true
    }

    private enum Attempt {
        case started(Process, Pipe)
        case displayTaken(String)
    }

    /// One Xvfb on `:number`: `.started` once it wrote the number to its stdout (`-displayfd 1`),
    /// `.displayTaken` if it exited complaining the display is in use; throws on anything else
    /// (another exit, no answer in 10 s).
    private static func start(number: Int, arguments: [String], errorPath: String, directory: String) throws -> Attempt
    {
        guard FileManager.default.createFile(atPath: errorPath, contents: nil) else {
            throw InteropFailure("cannot create \(errorPath)")
        }
        let process = Process()
        // Through env(1), which unblocks every signal and execs Xvfb (same pid): a child started
        // from a test thread (a Dispatch worker) inherits that thread's mask, SIGTERM blocked,
        // and an Xvfb that never sees SIGTERM only goes with SIGKILL, leaving its lock behind.
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["--default-signal", "/usr/bin/Xvfb", ":\(number)"] + arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errorPath))
        process.standardInput = FileHandle.nullDevice
        try process.run()
        var processEnd = ProcessEnd()
        let stderr = { (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "" }
        let fd = pipe.fileHandleForReading.fileDescriptor
        var received = ""
        let deadline = Date().addingTimeInterval(10)
        while true {
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&entry, 1, 50) > 0 {
                var buffer = [UInt8](repeating: 0, count: 64)
                let count = read(fd, &buffer, buffer.count)
                if count > 0 {
                    received += String(decoding: buffer[0..<count], as: UTF8.self)
                    if received.contains("\n") {
                        let written = received.trimmingCharacters(in: .whitespacesAndNewlines)
                        guard written == "\(number)" else {
                            Glibc.kill(process.processIdentifier, SIGKILL)
                            throw InteropFailure("Xvfb :\(number) reported display \"\(written)\":\n\(stderr())")
                        }
                        return .started(process, pipe)
                    }
                    continue
                }
            }
            if let status = processEnd.status(of: process) {
                let text = stderr()
                let taken = ["already running", "already active", "Cannot establish any listening sockets"]
                if taken.contains(where: text.contains) {
                    return .displayTaken(text.split(separator: "\n").first.map(String.init) ?? "")
                }
                throw InteropFailure("Xvfb :\(number) exited \(status) before it was ready:\n\(text)")
            }
            guard Date() < deadline else {
                Glibc.kill(process.processIdentifier, SIGKILL)
                throw InteropFailure("Xvfb :\(number) was not ready within 10 s:\n\(stderr())")
            }
        }
    }

    /// A shell that kills Xvfb (SIGKILL) once this test process is gone: the test runner crashed
    /// or was killed and never released the server. `stop()` kills the watchdog first.
    private static func startWatchdog(for pid: Int32) -> Process? {
        let watchdog = Process()
        watchdog.executableURL = URL(fileURLWithPath: "/bin/sh")
        watchdog.arguments = [
            "-c", "while kill -0 \"$0\" 2>/dev/null; do sleep 1; done; kill -KILL \"$1\" 2>/dev/null",
            "\(getpid())", "\(pid)",
        ]
        watchdog.standardInput = FileHandle.nullDevice
        watchdog.standardOutput = FileHandle.nullDevice
        watchdog.standardError = FileHandle.nullDevice
        return (try? watchdog.run()) == nil ? nil : watchdog
    }
}
