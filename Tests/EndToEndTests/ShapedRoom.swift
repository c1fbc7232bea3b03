import Foundation
import TestSupport

/// A room behind a bottleneck, as the congestion tests build it: a network namespace of its own,
/// `Tests/Peers/bottleneck.py` shaping the publisher's media ports (40000-40999, or what `match`
/// picks of them) to a schedule,
/// a real rtc-signal and rtc-publish inside the namespace. Chromium viewers open the room page
/// inside it too. The namespace's own ephemeral ports are moved off the shaped range, or
/// Chromium's port may fall in it (1 run in 30) and its feedback wait in the bottleneck's queue.
final class ShapedRoom {
    let namespace: NetworkNamespace
    let directory: TemporaryDirectory
    let shaper: BackgroundProcess
    let signal: BackgroundProcess
    let port: Int
    private(set) var publish: BackgroundProcess?
    /// Where the shaper writes its per-phase summary (`--out`).
    var summaryPath: String { directory.path + "/bottleneck.json" }
    var statsPath: String { directory.path + "/stats.jsonl" }
    var pageURL: String { "http://127.0.0.1:\(port)/rooms/123456" }

    /// Starts the shaper (`schedule` as bottleneck.py reads it, e.g. "0:3000,20:1000") and the
    /// room server; `match` is the nftables match of the shaped packets (default: everything the
    /// publisher's media ports send; `ip daddr 127.0.0.2 udp sport 40000-40999` shapes one viewer
    /// that gathers on 127.0.0.2), `shaping` adds bottleneck.py options (`--queue-bytes`, ...).
    init(
        purpose: String,
        schedule: String,
        seconds: Int,
        match: String = "udp sport 40000-40999",
        shaping: [String] = []
    ) throws {
        namespace = try NetworkNamespace(purpose: purpose)
        try namespace.setEphemeralPorts(50000...60999)
        directory = try TemporaryDirectory()
        let shaper = try BackgroundProcess(
            "/usr/bin/python3",
            [
                WebRTCSubscriber.repositoryRoot + "/Tests/Peers/bottleneck.py", "run", "--netns", namespace.name,
                "--schedule", schedule, "--match", match, "--duration", "\(seconds)",
                "--start-on-traffic", "--out", directory.path + "/bottleneck.json",
            ] + shaping,
            directory: directory,
            name: "bottleneck"
        )
        try shaper.waitUntil(deadlineSeconds: 20, "shaping ready") { shaper.output.contains(#""event": "ready""#) }
        self.shaper = shaper
        (signal, port) = try startRoomServer(in: directory, launcher: namespace.launcher)
    }

    /// Starts rtc-publish as alice_sub in room 123456 on the shaped ports, with `arguments`
    /// after the room's own (size, duration, content hint, ...), writing `stats.jsonl`.
    @discardableResult
    func startPublisher(_ arguments: [String]) throws -> BackgroundProcess {
        let process = try BackgroundProcess(
            try builtProgram("rtc-publish"),
            [
                "--room", "123456", "--uid", "alice_sub", "--signal", "127.0.0.1:\(port)", "--ice-address",
                "127.0.0.1", "--ice-ports", "40000-40999", "--stats-json", "stats.jsonl",
            ] + arguments,
            directory: directory,
            launcher: namespace.launcher
        )
        try process.waitUntil(deadlineSeconds: 20, "joined the room") { process.output.contains("signaling in room") }
        publish = process
        return process
    }

    /// Headless Chromium on the room page, inside the namespace.
    func openViewer(_ options: ChromiumViewer.Options) throws -> ChromiumViewer {
        try ChromiumViewer(url: pageURL, options: options, directory: directory, launcher: namespace.launcher)
    }

    /// The shaper's summary file, parsed.
    func shaperSummary() throws -> [String: Any] {
        guard let data = FileManager.default.contents(atPath: summaryPath),
            let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { throw ShapedRoomError("no bottleneck summary at \(summaryPath): \(shaper.output)") }
        return object
    }

    /// Stops the room server once the publisher and the shaper are done.
    func close() { signal.interrupt() }
}

struct ShapedRoomError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
