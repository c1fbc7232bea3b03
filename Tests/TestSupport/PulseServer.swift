import Foundation
import Glibc

/// A private PulseAudio daemon for one test: its own socket, home, runtime and state directories
/// in a temporary directory, no default.pa (`-n`): only the native protocol on that socket and
/// whatever the test loads. Never the user's sound server: clients reach it only through
/// `server` ("unix:<dir>/native"), which tests pass explicitly.
///
/// As root, pulseaudio 16.1 only warns ("This program is not intended to be run as root") and
/// runs; it needs a writable `HOME` and `XDG_RUNTIME_DIR`, both given here. D-Bus is missing in
/// a container: it warns and goes on. Without `--exit-idle-time=-1` it would quit when idle.
/// Its stderr goes to a file its failures quote. A small shell watchdog kills it if the test
/// process dies without releasing it.
public final class PulseServer {
    /// "unix:<dir>/native": for `PULSE_SERVER` and `SystemAudioConfiguration.server`.
    public let server: String
    public let socketPath: String

    private let directory: TemporaryDirectory
    private let errorPath: String
    private var daemon: Process?
    private var watchdog: Process?
    private var end = ProcessEnd()

    public init() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/pulseaudio") else {
            throw InteropFailure("/usr/bin/pulseaudio not found (Debian: apt-get install pulseaudio)")
        }
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/pactl") else {
            throw InteropFailure("/usr/bin/pactl not found (Debian: apt-get install pulseaudio-utils)")
        }
        directory = try TemporaryDirectory()
        for name in ["home", "runtime", "state"] {
            try FileManager.default.createDirectory(
                atPath: directory.path + "/" + name,
                withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700]
            )
        }
        socketPath = directory.path + "/native"
        server = "unix:" + socketPath
        errorPath = directory.path + "/pulseaudio.stderr"
        try launch()
    }

    deinit { stop() }

    /// Whether the daemon is running (false once stopped, or if it died).
    public var isRunning: Bool {
        guard let daemon else { return false }
        return end.status(of: daemon) == nil
    }

    /// The daemon's stderr so far (for failure messages).
    public var errors: String { (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "" }

    /// Everything a client of this daemon needs, and nothing that leads to another server.
    private var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = directory.path + "/home"
        environment["XDG_RUNTIME_DIR"] = directory.path + "/runtime"
        environment["PULSE_RUNTIME_PATH"] = directory.path + "/runtime"
        environment["PULSE_STATE_PATH"] = directory.path + "/state"
        environment["PULSE_SERVER"] = server
        environment.removeValue(forKey: "DISPLAY")
        return environment
    }

    private func launch() throws {
        try? FileManager.default.removeItem(atPath: socketPath)
        if !FileManager.default.fileExists(atPath: errorPath) {
            guard FileManager.default.createFile(atPath: errorPath, contents: nil) else {
                throw InteropFailure("cannot create \(errorPath)")
            }
        }
        let stderr = try FileHandle(forWritingTo: URL(fileURLWithPath: errorPath))
        stderr.seekToEndOfFile()
        let process = Process()
        // Through env(1), which unblocks every signal and execs pulseaudio (same pid): a child
        // started from a test thread inherits its mask, SIGTERM blocked, and would ignore stop().
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "--default-signal", "/usr/bin/pulseaudio",
            "--daemonize=no", "--system=no", "-n", "--exit-idle-time=-1", "--disallow-exit",
            "--use-pid-file=no", "--high-priority=no", "--realtime=no", "--disable-shm=yes",
            "--log-target=stderr", "--log-level=warning",
            "--load=module-native-protocol-unix socket=\(socketPath) auth-anonymous=1",
        ]
        var environment = self.environment
        environment.removeValue(forKey: "PULSE_SERVER")
        process.environment = environment
        process.currentDirectoryURL = URL(fileURLWithPath: directory.path)
        process.standardOutput = stderr
        process.standardError = stderr
        process.standardInput = FileHandle.nullDevice
        try process.run()
        daemon = process
        end = ProcessEnd()
        watchdog = Self.startWatchdog(for: process.processIdentifier)
        let deadline = Date().addingTimeInterval(15)
        while true {
            if FileManager.default.fileExists(atPath: socketPath), (try? pactl(["info"])) != nil { return }
            if let status = end.status(of: process) {
                throw InteropFailure("pulseaudio exited \(status) before it was ready:\n\(errors)")
            }
            guard Date() < deadline else {
                stop()
                throw InteropFailure("pulseaudio did not answer on \(socketPath) within 15 s:\n\(errors)")
            }
            usleep(50_000)
        }
    }

    /// Runs pactl against this daemon and returns its stdout; throws with its stderr if it exits
    /// non-zero or runs past 15 s.
    @discardableResult
    public func pactl(_ arguments: [String]) throws -> String {
        try runTool(
            "/usr/bin/pactl",
            ["--server=" + server] + arguments,
            environment: environment,
            directory: directory.path,
            timeout: 15,
            label: "pactl \(arguments.joined(separator: " "))"
        )
    }

    /// A null sink at 48 kHz stereo; its monitor is the source "NAME.monitor".
    public func addNullSink(_ name: String) throws {
        try pactl([
            "load-module", "module-null-sink", "sink_name=\(name)", "rate=48000", "channels=2",
            "sink_properties=device.description=\(name)",
        ])
    }

    /// A sine into `sink` (module-sine): amplitude 0.5 at 0 dB volume, a peak of -6 dBFS in the
    /// sink's monitor.
    public func playTone(sink: String, hertz: Int) throws {
        try pactl(["load-module", "module-sine", "sink=\(sink)", "frequency=\(hertz)"])
    }

    public func setDefaults(sink: String?, source: String?) throws {
        if let sink { try pactl(["set-default-sink", sink]) }
        if let source { try pactl(["set-default-source", source]) }
    }

    /// SIGTERM, up to 3 s to leave, then SIGKILL; waits for it. Safe to call again.
    public func stop() {
        if let watchdog {
            // Not `waitUntilExit()`: it may never return (see `BackgroundProcess.zombieStatus`).
            var watchdogEnd = ProcessEnd()
            Glibc.kill(watchdog.processIdentifier, SIGKILL)
            let deadline = Date().addingTimeInterval(5)
            while watchdogEnd.status(of: watchdog) == nil, Date() < deadline { usleep(5_000) }
            self.watchdog = nil
        }
        guard let daemon else { return }
        if isRunning {
            Glibc.kill(daemon.processIdentifier, SIGTERM)
            if !wait(seconds: 3) {
                Glibc.kill(daemon.processIdentifier, SIGKILL)
                _ = wait(seconds: 10)
            }
        }
        self.daemon = nil
    }

    /// SIGKILL, no goodbye to its clients: a crash, as far as they can tell. Safe to call again.
    public func crash() {
        if let daemon, isRunning {
            Glibc.kill(daemon.processIdentifier, SIGKILL)
            _ = wait(seconds: 10)
        }
        stop()
    }

    /// Stops the daemon (if running) and starts a fresh one on the same socket: every module
    /// (sinks, tones) and default is gone, as after a user's restart.
    public func restart() throws {
        stop()
        try launch()
    }

    private func wait(seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while isRunning {
            guard Date() < deadline else { return false }
            usleep(10_000)
        }
        return true
    }

    /// A shell that kills the daemon (SIGKILL) once this test process is gone. `stop()` kills the
    /// watchdog first.
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
