import Foundation
import Glibc

/// A network namespace a test makes for itself (`ip netns add`), with only its own `lo` up:
/// processes started in it (`launcher`) reach each other on 127.0.0.1 and nothing else, and
/// nftables rules added to it (`addRules`) touch only their packets. Deleted when released.
public final class NetworkNamespace {
    public let name: String
    /// Prefix for a command that must run inside: `ip netns exec NAME`.
    public let launcher: [String]

    /// `purpose` is part of the name (with the process id and a counter): a leftover of a killed
    /// run is recognisable in `ip netns list`.
    public init(purpose: String) throws {
        let ip = try Self.program("ip")
        name = "rtc-\(purpose)-\(getpid())-\(Self.nextIndex())"
        launcher = [ip, "netns", "exec", name]
        try Self.run([ip, "netns", "add", name])
        do {
            try Self.run([ip, "-n", name, "link", "set", "lo", "up"])
        } catch {
            _ = try? Self.run([ip, "netns", "delete", name])
            throw error
        }
    }

    deinit {
        if let ip = try? Self.program("ip") { _ = try? Self.run([ip, "netns", "delete", name]) }
    }

    /// Moves the namespace's ephemeral ports (`net.ipv4.ip_local_port_range`, per namespace) to
    /// `range`: a peer binding port 0 then never lands in a range a test shapes by port (a
    /// Chromium viewer's ICE port of 40340 put its feedback into the publisher's bottleneck).
    public func setEphemeralPorts(_ range: ClosedRange<Int>) throws {
        let setting = "\(range.lowerBound) \(range.upperBound)"
        try Self.run(launcher + ["/bin/sh", "-c", "echo '\(setting)' > /proc/sys/net/ipv4/ip_local_port_range"])
        let read = try Self.run(launcher + ["/bin/cat", "/proc/sys/net/ipv4/ip_local_port_range"])
        let ports = read.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).compactMap { Int($0) }
        guard ports == [range.lowerBound, range.upperBound] else {
            throw InteropFailure("namespace \(name): ephemeral ports read '\(read)' after setting '\(setting)'")
        }
    }

    /// Loads an nftables ruleset (`nft -f`) into this namespace only.
    public func addRules(_ ruleset: String) throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("\(name).nft").path
        guard FileManager.default.createFile(atPath: file, contents: Data(ruleset.utf8)) else {
            throw InteropFailure("cannot write \(file)")
        }
        defer { try? FileManager.default.removeItem(atPath: file) }
        try Self.run(launcher + [try Self.program("nft"), "-f", file])
    }

    /// `nft list …` inside the namespace (e.g. a counter's value).
    public func listRules(_ what: [String]) throws -> String {
        try Self.run(launcher + [try Self.program("nft"), "list"] + what)
    }

    /// A system program from the sbin directories a test's PATH may lack (`ip`, `nft`).
    public static func program(_ name: String) throws -> String {
        for directory in ["/usr/sbin", "/sbin", "/usr/bin", "/bin"]
        where FileManager.default.isExecutableFile(atPath: directory + "/" + name) {
            return directory + "/" + name
        }
        throw InteropFailure("\(name) is missing; run scripts/setup.sh")
    }

    private static let counter = LockedCounter()
    private static func nextIndex() -> Int { counter.next() }

    /// Runs `command` to its end; its output, or a failure naming the command and what it said.
    @discardableResult
    static func run(_ command: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw InteropFailure("\(command.joined(separator: " ")) failed (\(process.terminationStatus)): \(output)")
        }
        return output
    }
}

/// A process-wide counter for unique names (namespaces, run folders).
final class LockedCounter: @unchecked Sendable {
    private var value = 0
    private let lock = NSLock()

    func next() -> Int {
        lock.lock()
        defer { lock.unlock() }
        value += 1
        return value
    }
}
