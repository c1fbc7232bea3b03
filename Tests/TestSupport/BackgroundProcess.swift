import Foundation
import Glibc

/// A program SwiftPM built next to the running test bundle (rtc-signal, rtc-publish, …).
public func builtProgram(_ name: String) throws -> String {
    let testBinary = URL(fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
    let candidate = testBinary.deletingLastPathComponent().appendingPathComponent(name).path
    guard FileManager.default.isExecutableFile(atPath: candidate) else {
        throw InteropFailure("\(name) not found at \(candidate); run `swift build` first")
    }
    return candidate
}

/// One of our executables running in the background, its output captured to files so no pipe
/// can fill up and stall it; stopped (SIGINT, then SIGKILL) when released. `launcher` is put in
/// front of the command (e.g. `NetworkNamespace.launcher`: `ip netns exec` becomes the program,
/// so its signals reach it).
public final class BackgroundProcess {
    private let process = Process()
    public let outputPath: String
    /// With `separateErrors`, where stderr goes (else nil: it is interleaved into `outputPath`).
    public let errorPath: String?
    public let name: String

    /// `separateErrors`: stderr into a file of its own (`errors`), so a test can tell which
    /// stream a line went to; `output` then holds stdout only.
    public init(
        _ executable: String,
        _ arguments: [String],
        directory: TemporaryDirectory,
        name: String? = nil,
        launcher: [String] = [],
        separateErrors: Bool = false,
        environment: [String: String] = [:]
    )
        throws
    {
        self.name = name ?? URL(fileURLWithPath: executable).lastPathComponent
        let stem = directory.path + "/\(self.name)-\(UUID().uuidString.prefix(6))"
        outputPath = stem + ".log"
        errorPath = separateErrors ? stem + ".stderr" : nil
        for path in [outputPath, errorPath].compactMap({ $0 }) {
            guard FileManager.default.createFile(atPath: path, contents: nil) else {
                throw InteropFailure("cannot create \(path)")
            }
        }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        let errorHandle = try errorPath.map { try FileHandle(forWritingTo: URL(fileURLWithPath: $0)) }
        let command = launcher + [executable] + arguments
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        process.currentDirectoryURL = URL(fileURLWithPath: directory.path)
        process.standardOutput = handle
        process.standardError = errorHandle ?? handle
        process.standardInput = FileHandle.nullDevice
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        try process.run()
    }

    deinit {
        if process.isRunning {
            process.interrupt()
            usleep(200_000)
            if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
        }
    }

    /// Everything it printed so far (stdout and stderr interleaved; stdout only with
    /// `separateErrors`).
    public var output: String { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }
    /// With `separateErrors`, what it wrote to stderr so far; else "".
    public var errors: String {
        errorPath.flatMap { try? String(contentsOfFile: $0, encoding: .utf8) } ?? ""
    }
    /// Both streams, for failure messages.
    public var everything: String { errorPath == nil ? output : "stdout:\n\(output)\nstderr:\n\(errors)" }
    public var isRunning: Bool { end.status(of: process) == nil }
    /// The exit status (or, killed, the signal's number), as Foundation's `terminationStatus`;
    /// nil while it runs.
    public var exitStatus: Int32? { end.status(of: process) }
    private var end = ProcessEnd()

    /// Foundation's `Process` sometimes never hears of a child that died within moments of its
    /// start (seen with a gst-launch that aborted while starting): the child stays a zombie,
    /// `isRunning` stays true and `waitUntilExit()` never returns. The kernel knows better:
    /// `/proc/PID/stat` shows state Z and, in its 52nd field, the status `waitpid` would report.
    /// Returns that status decoded (exit code, or signal number) for a zombie, else nil.
    public static func zombieStatus(_ pid: Int32) -> Int32? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        // After "pid (comm)": field 3 is the state; field 52 the exit code.
        let fields = stat[stat.index(after: close)...].split(whereSeparator: { $0 == " " || $0 == "\n" })
        guard fields.first == "Z", fields.count >= 50, let raw = Int32(fields[49]) else { return nil }
        let signal = raw & 0x7f
        return signal == 0 ? (raw >> 8) & 0xff : signal
    }

    /// SIGINT: what a user's Ctrl-C sends.
    public func interrupt() { process.interrupt() }
    /// SIGKILL: a crash, as far as everyone else can tell.
    public func kill() { Glibc.kill(process.processIdentifier, SIGKILL) }

    /// Waits for the process to end by itself; false (and it is killed) past the deadline.
    @discardableResult
    public func waitForExit(deadlineSeconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(deadlineSeconds)
        while isRunning {
            guard Date() < deadline else {
                kill()
                // Not `waitUntilExit()`: it may never return (see `zombieStatus`).
                let killed = Date().addingTimeInterval(10)
                while isRunning, Date() < killed { usleep(20_000) }
                return false
            }
            usleep(20_000)
        }
        return true
    }

    /// Polls until `condition` holds (a bounded wait, not a timing assertion).
    public func waitUntil(deadlineSeconds: Double, _ what: String, _ condition: () -> Bool) throws {
        let deadline = Date().addingTimeInterval(deadlineSeconds)
        while !condition() {
            guard Date() < deadline else { throw InteropFailure("\(name): \(what) did not happen:\n\(everything)") }
            usleep(20_000)
        }
    }
}

/// A child's end as first seen, kept. Between reading `/proc` (a zombie) and asking again,
/// Foundation may reap the child and not yet have marked it ended; a second look then finds
/// neither, which a CI run read as a failed exit.
struct ProcessEnd {
    private var seen: Int32?

    /// The exit status or signal number once the child has ended, else nil.
    mutating func status(of process: Process) -> Int32? {
        if let seen { return seen }
        if !process.isRunning {
            seen = process.terminationStatus
        } else if let status = BackgroundProcess.zombieStatus(process.processIdentifier) {
            seen = status
        }
        return seen
    }
}

/// A TCP port free on 127.0.0.1 right now (bound, read back, released).
public func freeTCPPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw InteropFailure("socket failed") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
        }
    }
    guard bound else { throw InteropFailure("cannot bind a TCP port") }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// A real rtc-signal on a free loopback port, listening: the room server of end-to-end tests.
/// `launcher` as for `BackgroundProcess` (a port free here is free in a fresh namespace too).
public func startRoomServer(
    in directory: TemporaryDirectory,
    launcher: [String] = []
) throws -> (server: BackgroundProcess, port: Int) {
    let port = try freeTCPPort()
    let server = try BackgroundProcess(
        try builtProgram("rtc-signal"),
        ["--port", "\(port)"],
        directory: directory,
        launcher: launcher
    )
    try server.waitUntil(deadlineSeconds: 20, "listening") { server.output.contains("listening") }
    return (server, port)
}

/// A room server started again on `port`, after the one there was killed: what a user's restart
/// looks like to rtc-publish and its viewers (every room and session is gone with the old one).
public func restartRoomServer(port: Int, in directory: TemporaryDirectory) throws -> BackgroundProcess {
    let server = try BackgroundProcess(
        try builtProgram("rtc-signal"),
        ["--port", "\(port)"],
        directory: directory,
        name: "rtc-signal-restarted"
    )
    try server.waitUntil(deadlineSeconds: 20, "listening again") { server.output.contains("listening") }
    return server
}
