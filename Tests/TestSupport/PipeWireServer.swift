import Foundation
import Glibc

/// A private PipeWire with its pulse server (pipewire-pulse) for one test: a private D-Bus, the
/// pipewire daemon, WirePlumber (which links streams to sinks) and pipewire-pulse on its own
/// socket, all with their home, runtime, config and state directories in a temporary directory.
/// Never the user's sound server or session bus: clients reach it only through `server`
/// ("unix:<dir>/native"), which tests pass explicitly.
///
/// As root and without systemd, Debian 12's PipeWire 0.3.65 runs with: `XDG_RUNTIME_DIR` and
/// `PIPEWIRE_RUNTIME_DIR` (its socket "pipewire-0"), `XDG_CONFIG_HOME` (the drop-in that puts the
/// pulse server on our socket), and a session bus for WirePlumber, which exits without one
/// ("Cannot autolaunch D-Bus without X11 $DISPLAY"): a dbus-daemon of our own on "<dir>/bus",
/// with no service activation. The shipped configurations are copied with libpipewire-module-rt
/// renamed (its `ifexists` flag then skips it): as root it would make each daemon's data thread
/// SCHED_FIFO 88 at nice -11 on a shared machine. WirePlumber's ALSA, Bluetooth, V4L2 and
/// libcamera monitors are off: no real device is ever opened. pipewire-pulse has no
/// module-sine; `playTone` plays a generated sine through pacat instead. Every child's output
/// goes to a log its failures quote; a small shell watchdog kills the children if the test
/// process dies without releasing them.
public final class PipeWireServer {
    /// "unix:<dir>/native": for `PULSE_SERVER` and `SystemAudioConfiguration.server`.
    public let server: String
    public let socketPath: String

    private let directory: TemporaryDirectory
    private let pidPath: String
    private var daemons: [Child] = []
    private var players: [Child] = []
    private var watchdog: Process?

    private final class Child {
        let name: String
        let process: Process
        let logPath: String
        private var end = ProcessEnd()

        init(name: String, process: Process, logPath: String) {
            self.name = name
            self.process = process
            self.logPath = logPath
        }

        var status: Int32? { end.status(of: process) }
        var isRunning: Bool { status == nil }
        var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }
    }

    private static let programs = [
        "/usr/bin/pipewire": "pipewire", "/usr/bin/pipewire-pulse": "pipewire-pulse",
        "/usr/bin/wireplumber": "wireplumber", "/usr/bin/dbus-daemon": "dbus-daemon",
        "/usr/bin/pactl": "pulseaudio-utils", "/usr/bin/pacat": "pulseaudio-utils", "/bin/bash": "bash",
    ]

    public init() throws {
        for (path, package) in Self.programs.sorted(by: { $0.key < $1.key }) {
            guard FileManager.default.isExecutableFile(atPath: path) else {
                throw InteropFailure("\(path) not found (Debian: apt-get install \(package))")
            }
        }
        directory = try TemporaryDirectory()
        socketPath = directory.path + "/native"
        server = "unix:" + socketPath
        pidPath = directory.path + "/children.pid"
        try writeConfiguration()
        watchdog = Self.startWatchdog(pidPath: pidPath)
        do {
            try launch()
        } catch {
            stop()
            throw error
        }
    }

    deinit { stop() }

    /// Whether every daemon is running (false once stopped, or if one died).
    public var isRunning: Bool { !daemons.isEmpty && daemons.allSatisfy(\.isRunning) }

    /// Every child's output so far (for failure messages).
    public var errors: String {
        (daemons + players).map { "\($0.name):\n\($0.log)" }.joined(separator: "\n")
    }

    /// Everything a client of this server needs, and nothing that leads to another server or bus.
    private var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = directory.path + "/home"
        environment["XDG_RUNTIME_DIR"] = directory.path + "/runtime"
        environment["PIPEWIRE_RUNTIME_DIR"] = directory.path + "/runtime"
        environment["XDG_CONFIG_HOME"] = directory.path + "/config"
        environment["XDG_STATE_HOME"] = directory.path + "/state"
        environment["XDG_DATA_HOME"] = directory.path + "/data"
        environment["PULSE_RUNTIME_PATH"] = directory.path + "/runtime/pulse"
        environment["PULSE_STATE_PATH"] = directory.path + "/state/pulse"
        environment["PULSE_SERVER"] = server
        environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=" + directory.path + "/bus"
        // No system bus either (BlueZ, logind, RTKit): a path where nothing listens.
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = "unix:path=" + directory.path + "/no-system-bus"
        for name in ["DISPLAY", "WAYLAND_DISPLAY", "PIPEWIRE_REMOTE", "PIPEWIRE_CONFIG_DIR", "PULSE_CONFIG"] {
            environment.removeValue(forKey: name)
        }
        return environment
    }

    private func writeConfiguration() throws {
        let root = directory.path
        for name in [
            "home", "runtime", "state", "data", "config/pipewire/pipewire-pulse.conf.d",
            "config/wireplumber/main.lua.d", "config/wireplumber/bluetooth.lua.d",
        ] {
            try FileManager.default.createDirectory(
                atPath: root + "/" + name,
                withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700]
            )
        }
        let copies = [
            ("/usr/share/pipewire/pipewire.conf", "config/pipewire/pipewire.conf"),
            ("/usr/share/pipewire/pipewire-pulse.conf", "config/pipewire/pipewire-pulse.conf"),
            ("/usr/share/wireplumber/wireplumber.conf", "config/wireplumber/wireplumber.conf"),
        ]
        for (source, target) in copies {
            let text = try String(contentsOfFile: source, encoding: .utf8)
            let edited = text.replacingOccurrences(
                of: "name = libpipewire-module-rt\n",
                with: "name = libpipewire-module-rt-disabled-in-tests\n"
            )
            try edited.write(toFile: root + "/" + target, atomically: true, encoding: .utf8)
        }
        let files = [
            "config/pipewire/pipewire-pulse.conf.d/50-test-socket.conf":
                "pulse.properties = { server.address = [ \"unix:\(socketPath)\" ] }\n",
            "config/wireplumber/main.lua.d/60-no-devices.lua":
                "alsa_monitor.enabled = false\nv4l2_monitor.enabled = false\nlibcamera_monitor.enabled = false\n",
            "config/wireplumber/bluetooth.lua.d/60-no-devices.lua": "bluez_monitor.enabled = false\n",
            "dbus.conf": """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <listen>unix:path=\(root)/bus</listen>
              <policy context="default">
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
              </policy>
            </busconfig>

            """,
        ]
        for (name, text) in files {
            try text.write(toFile: root + "/" + name, atomically: true, encoding: .utf8)
        }
        guard FileManager.default.createFile(atPath: pidPath, contents: nil) else {
            throw InteropFailure("cannot create \(pidPath)")
        }
    }

    private func launch() throws {
        let root = directory.path
        let bus = try spawn(
            "dbus-daemon",
            ["/usr/bin/dbus-daemon", "--nofork", "--nopidfile", "--config-file=\(root)/dbus.conf"]
        )
        daemons.append(bus)
        try waitFor(bus, "its socket \(root)/bus") { FileManager.default.fileExists(atPath: root + "/bus") }
        let pipewire = try spawn("pipewire", ["/usr/bin/pipewire"])
        daemons.append(pipewire)
        try waitFor(pipewire, "its socket \(root)/runtime/pipewire-0") {
            FileManager.default.fileExists(atPath: root + "/runtime/pipewire-0")
        }
        daemons.append(try spawn("wireplumber", ["/usr/bin/wireplumber"]))
        let pulse = try spawn("pipewire-pulse", ["/usr/bin/pipewire-pulse"])
        daemons.append(pulse)
        try waitFor(pulse, "an answer on \(socketPath)") {
            FileManager.default.fileExists(atPath: socketPath) && (try? pactl(["info"])) != nil
        }
    }

    /// Starts `command` through env(1), which unblocks every signal and execs it (same pid): a
    /// child started from a test thread inherits its mask, SIGTERM blocked, and would ignore
    /// stop(). Its pid goes to the watchdog's list.
    private func spawn(_ name: String, _ command: [String]) throws -> Child {
        let logPath = directory.path + "/\(name)-\(UUID().uuidString.prefix(6)).log"
        guard FileManager.default.createFile(atPath: logPath, contents: nil) else {
            throw InteropFailure("cannot create \(logPath)")
        }
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["--default-signal"] + command
        process.environment = environment
        process.currentDirectoryURL = URL(fileURLWithPath: directory.path)
        process.standardOutput = log
        process.standardError = log
        process.standardInput = FileHandle.nullDevice
        try process.run()
        if let pids = FileHandle(forWritingAtPath: pidPath) {
            pids.seekToEndOfFile()
            pids.write(Data("\(process.processIdentifier)\n".utf8))
            try? pids.close()
        }
        return Child(name: name, process: process, logPath: logPath)
    }

    private func waitFor(_ child: Child, _ what: String, _ condition: () -> Bool) throws {
        let deadline = Date().addingTimeInterval(15)
        while !condition() {
            if let status = child.status {
                throw InteropFailure("\(child.name) exited \(status) before \(what):\n\(errors)")
            }
            guard Date() < deadline else {
                throw InteropFailure("\(child.name): no \(what) within 15 s:\n\(errors)")
            }
            usleep(50_000)
        }
    }

    /// Runs pactl against this server and returns its stdout; throws with its stderr if it exits
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

    /// A null sink at 48 kHz stereo (pipewire-pulse's module-null-sink: a PipeWire
    /// support.null-audio-sink node); its monitor is the source "NAME.monitor".
    public func addNullSink(_ name: String) throws {
        try pactl([
            "load-module", "module-null-sink", "sink_name=\(name)", "rate=48000", "channels=2",
            "sink_properties=device.description=\(name)",
        ])
    }

    /// A sine into `sink`, as module-sine plays it on PulseAudio: amplitude 0.5 at 0 dB volume, a
    /// peak of -6 dBFS in the sink's monitor. One second of float32 stereo at 48 kHz (a whole
    /// number of periods for any whole `hertz`), played in a loop by pacat (fed by a loop of
    /// `cat`, which dies of SIGPIPE when pacat ends). Stopped with the server.
    public func playTone(sink: String, hertz: Int) throws {
        let path = directory.path + "/tone-\(hertz).raw"
        if !FileManager.default.fileExists(atPath: path) {
            var samples = [Float](repeating: 0, count: 2 * 48_000)
            for frame in 0..<48_000 {
                let value = Float(0.5 * sin(2 * Double.pi * Double(hertz) * Double(frame) / 48_000))
                samples[2 * frame] = value
                samples[2 * frame + 1] = value
            }
            try samples.withUnsafeBytes { Data($0) }.write(to: URL(fileURLWithPath: path))
        }
        let player = try spawn(
            "pacat-\(sink)",
            [
                "/bin/bash", "-c",
                "exec /usr/bin/pacat --server=\"$2\" --playback --device=\"$1\" --raw --format=float32le"
                    + " --rate=48000 --channels=2 --client-name=\"tone $3 Hz\" < <(while cat \"$0\"; do :; done)",
                path, sink, server, "\(hertz)",
            ]
        )
        players.append(player)
        try waitFor(player, "a playback stream into \(sink)") {
            ((try? pactl(["list", "sink-inputs"])) ?? "").contains("\"tone \(hertz) Hz\"")
        }
    }

    public func setDefaults(sink: String?, source: String?) throws {
        if let sink { try pactl(["set-default-sink", sink]) }
        if let source { try pactl(["set-default-source", source]) }
    }

    /// The players, then the daemons newest first (pipewire-pulse, WirePlumber, pipewire, D-Bus):
    /// SIGTERM, up to 3 s to leave, then SIGKILL; waits for each. Safe to call again.
    public func stop() {
        if let watchdog {
            // Not `waitUntilExit()`: it may never return (see `BackgroundProcess.zombieStatus`).
            var watchdogEnd = ProcessEnd()
            Glibc.kill(watchdog.processIdentifier, SIGKILL)
            let deadline = Date().addingTimeInterval(5)
            while watchdogEnd.status(of: watchdog) == nil, Date() < deadline { usleep(5_000) }
            self.watchdog = nil
        }
        for child in players.reversed() + daemons.reversed() where child.isRunning {
            Glibc.kill(child.process.processIdentifier, SIGTERM)
            if !Self.wait(child, seconds: 3) {
                Glibc.kill(child.process.processIdentifier, SIGKILL)
                _ = Self.wait(child, seconds: 10)
            }
        }
        players = []
        daemons = []
    }

    private static func wait(_ child: Child, seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while child.isRunning {
            guard Date() < deadline else { return false }
            usleep(10_000)
        }
        return true
    }

    /// A shell that kills (SIGKILL) every child listed in `pidPath` once this test process is
    /// gone. `stop()` kills the watchdog first.
    private static func startWatchdog(pidPath: String) -> Process? {
        let watchdog = Process()
        watchdog.executableURL = URL(fileURLWithPath: "/bin/sh")
        watchdog.arguments = [
            "-c",
            "while kill -0 \"$0\" 2>/dev/null; do sleep 1; done; kill -KILL $(cat \"$1\") 2>/dev/null",
            "\(getpid())", pidPath,
        ]
        watchdog.standardInput = FileHandle.nullDevice
        watchdog.standardOutput = FileHandle.nullDevice
        watchdog.standardError = FileHandle.nullDevice
        return (try? watchdog.run()) == nil ? nil : watchdog
    }
}
