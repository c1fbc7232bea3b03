import Foundation
import Glibc

/// Janus 1.1.2 with a WHIP front, the real WHIP server of the WHIP tests: `Tests/Peers/janus/
/// janus_room.py --cascade` run as a child process. It makes a network namespace of its own
/// (127.0.0.2 on a veth: Janus never gathers ICE on a loopback interface), starts Janus A (the
/// VideoRoom our publisher posts into through simple-whip-server) and Janus B (which gets every
/// publisher of A's room through a cascade), and deletes it all when stopped.
///
/// Processes a test starts must run inside the namespace (`launcher`) and gather ICE on
/// `iceAddress`; the WHIP endpoints and Janus's APIs are on the namespace's 127.0.0.1. Nothing
/// outside 127.0.0.0/8 is configured or contacted (the namespace's nftables guard drops it).
///
/// Starting takes about half a second, so one instance serves a whole suite: `shared()` starts it
/// on first use, `stopShared()` stops it (at the end of the suite, or at process exit). A test
/// gets a fresh WHIP endpoint of its own (`newWHIPEndpoint`) and waits for the room to be empty
/// (`waitUntilNoPublisher`) before it publishes. A run that was killed leaves nothing behind for
/// long: janus_room.py stops when its parent is gone, and the next start deletes any namespace
/// of an earlier test process that no longer exists.
public final class JanusRoom: @unchecked Sendable {
    /// Janus A (the WHIP server's) or Janus B (cascaded from A).
    public enum Server: String, Sendable, CustomStringConvertible {
        case a, b
        public var description: String { "Janus \(rawValue.uppercased())" }
    }

    /// janus_room.py's ready line.
    struct Ready: Decodable {
        struct Loss: Decodable {
            var family: String
            var table: String
            var chain: String
            var counter: String
        }

        var ns: String
        var whip: String
        var whipServer: String
        var janus: String
        var janusB: String?
        var room: Int
        var iceAddress: String
        var rtpPorts: [String: String?]
        var loss: Loss
        var workdir: String

        enum CodingKeys: String, CodingKey {
            case ns, whip, janus, room, loss, workdir
            case whipServer = "whip_server"
            case janusB = "janus_b"
            case iceAddress = "ice_address"
            case rtpPorts = "rtp_ports"
        }
    }

    /// One of the room's participants as Janus's `listparticipants` reports it.
    public struct Participant: Decodable, Sendable, CustomStringConvertible {
        public var id: Int
        public var display: String?
        /// True once it publishes (a subscriber-only participant, or a cascade probe, has false).
        public var publisher: Bool?

        public var description: String { "\(id) \(display ?? "-")\(publisher == true ? " (publisher)" : "")" }
    }

    /// A WHIP endpoint on simple-whip-server, publishing into the room.
    public struct WHIPEndpoint: Sendable {
        public var id: String
        public var url: String
    }

    public let namespace: String
    /// `ip netns exec NS`: put in front of a command that must run inside (BackgroundProcess's
    /// `launcher:`).
    public let launcher: [String]
    /// The address ICE must gather on inside the namespace.
    public let iceAddress: String
    /// The VideoRoom's number, the same on A and B.
    public let room: Int
    /// The WHIP endpoint made at start (`rtc`); tests make their own with `newWHIPEndpoint`.
    public let whipURL: String
    public let whipServer: String
    public let janusA: String
    public let janusB: String
    /// Janus A's ICE ports ("20000-20999"): the publisher -> A leg is UDP to these.
    public let rtpPortsA: String
    /// Where Janus's and simple-whip-server's logs are (A/janus.log, B/janus.log, whip/whip.log).
    public let workdir: String
    private let loss: Ready.Loss
    private let process: BackgroundProcess
    private let directory: TemporaryDirectory
    private let lock = NSLock()
    private var stopped = false
    private var endpoints = 0

    /// Starts janus_room.py --cascade and waits (at most `readySeconds`) for its ready line.
    public init(readySeconds: Double = 60) throws {
        Self.deleteLeftovers()
        let python = "/usr/bin/python3"
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw InteropFailure("\(python) is missing; run scripts/setup.sh")
        }
        let name = "rtc-janus-\(getpid())-\(Self.counter.next())"
        directory = try TemporaryDirectory()
        process = try BackgroundProcess(
            python,
            [Self.peers + "/janus/janus_room.py", "--cascade", "--ns", name, "--debug-level", "4"],
            directory: directory,
            name: "janus_room"
        )
        let deadline = Date().addingTimeInterval(readySeconds)
        var ready: Ready?
        while ready == nil {
            let output = process.output
            if let line = output.split(separator: "\n").first(where: { $0.hasPrefix(#"{"event": "ready""#) }) {
                ready = try JSONDecoder().decode(Ready.self, from: Data(line.utf8))
                break
            }
            if !process.isRunning || output.contains(#"{"event": "error""#) || Date() > deadline {
                let reason = process.isRunning ? "is not ready within \(readySeconds) s" : "exited"
                process.interrupt()
                _ = process.waitForExit(deadlineSeconds: 20)
                Self.deleteNamespace(name)
                throw InteropFailure("janus_room.py \(reason):\n\(process.output)")
            }
            usleep(50_000)
        }
        guard let ready, let janusB = ready.janusB, let ports = ready.rtpPorts["a"] ?? nil else {
            throw InteropFailure("janus_room.py's ready line lacks Janus B or A's ports:\n\(process.output)")
        }
        namespace = ready.ns
        launcher = [try NetworkNamespace.program("ip"), "netns", "exec", ready.ns]
        iceAddress = ready.iceAddress
        room = ready.room
        whipURL = ready.whip
        whipServer = ready.whipServer
        janusA = ready.janus
        self.janusB = janusB
        rtpPortsA = ports
        loss = ready.loss
        workdir = ready.workdir
    }

    deinit { stop() }

    /// Stops janus_room.py (SIGINT: it stops Janus A, B and simple-whip-server and deletes the
    /// namespace); if it does not end in time, kills what is left in the namespace and deletes
    /// it. Safe to repeat.
    public func stop() {
        lock.lock()
        let wasStopped = stopped
        stopped = true
        lock.unlock()
        guard !wasStopped else { return }
        process.interrupt()
        if !process.waitForExit(deadlineSeconds: 30) || Self.namespaces().contains(namespace) {
            Self.deleteNamespace(namespace)
        }
    }

    /// Everything janus_room.py printed: the ready line, a line per cascaded publisher, errors.
    public var output: String { process.output }

    /// simple-whip-server's log: "[ID] Publishing to WHIP endpoint", "[ID] Terminating WHIP
    /// session" (a DELETE of the resource), "[ID] PeerConnection detected as closed".
    public var whipLog: String {
        (try? String(contentsOfFile: workdir + "/whip/whip.log", encoding: .utf8)) ?? ""
    }

    /// The HTTP API of `server`.
    public func url(of server: Server) -> String { server == .a ? janusA : janusB }

    /// A new WHIP endpoint into the room (`POST /whip/create`); `token` makes it require
    /// `Authorization: Bearer TOKEN`.
    public func newWHIPEndpoint(token: String? = nil) throws -> WHIPEndpoint {
        lock.lock()
        endpoints += 1
        let id = "t\(endpoints)"
        lock.unlock()
        var command =
            launcher + [
                "/usr/bin/python3", Self.peers + "/janus/janus_api.py", "whip-endpoint", "--whip-server", whipServer,
                "--id", id, "--room", "\(room)",
            ]
        if let token { command += ["--token", token] }
        let output = try NetworkNamespace.run(command)
        struct Created: Decodable { var whip: String }
        guard let created = try? JSONDecoder().decode(Created.self, from: Data(output.utf8)) else {
            throw InteropFailure("janus_api.py whip-endpoint: \(output)")
        }
        return WHIPEndpoint(id: id, url: created.whip)
    }

    /// The room's participants on `server` (janus_api.py participants).
    public func participants(on server: Server) throws -> [Participant] {
        let output = try NetworkNamespace.run(
            launcher + [
                "/usr/bin/python3", Self.peers + "/janus/janus_api.py", "participants", "--janus", url(of: server),
                "--room", "\(room)",
            ]
        )
        do {
            return try JSONDecoder().decode([Participant].self, from: Data(output.utf8))
        } catch {
            throw InteropFailure("janus_api.py participants on \(server): \(output)")
        }
    }

    /// The publishers among them.
    public func publishers(on server: Server) throws -> [Participant] {
        try participants(on: server).filter { $0.publisher == true }
    }

    /// Polls (every 100 ms, at most `seconds`) until `server`'s room has a publisher; returns
    /// them, or throws with what the room had.
    @discardableResult
    public func waitForPublisher(on server: Server, seconds: Double) async throws -> [Participant] {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            let found = try publishers(on: server)
            if !found.isEmpty { return found }
            guard Date() < deadline else {
                throw InteropFailure("no publisher on \(server) within \(seconds) s: \(try participants(on: server))")
            }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    /// Polls (every 100 ms, at most `seconds`) until no room of `servers` has a publisher. Returns
    /// how long that took, or nil (and the last lists) when it did not happen.
    public func waitUntilNoPublisher(
        on servers: [Server] = [.a, .b],
        seconds: Double
    ) async throws -> (seconds: Double?, left: [Server: [Participant]]) {
        let start = Date()
        while true {
            var left: [Server: [Participant]] = [:]
            for server in servers {
                let found = try publishers(on: server)
                if !found.isEmpty { left[server] = found }
            }
            if left.isEmpty { return (Date().timeIntervalSince(start), [:]) }
            guard Date().timeIntervalSince(start) < seconds else { return (nil, left) }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    /// Runs janus_subscriber.py (aiortc, out/venv) inside the namespace against `server`: it waits
    /// at most `waitPublisher` seconds for a publisher, subscribes, receives for `seconds` from
    /// the first decoded picture, sends one PLI `pliAt` seconds after it, and reports.
    public func subscribe(
        on server: Server,
        seconds: Double,
        pliAt: Double? = nil,
        waitPublisher: Double = 15,
        substream: Int? = nil,
        switchSubstream: (to: Int, at: Double)? = nil,
        name: String? = nil
    ) async throws -> Summary {
        let python = WebRTCSubscriber.repositoryRoot + "/out/venv/bin/python"
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw InteropFailure("\(python) is missing; run scripts/setup.sh")
        }
        var arguments = [
            Self.peers + "/janus/janus_subscriber.py", "--janus", url(of: server), "--room", "\(room)",
            "--wait-publisher", "\(waitPublisher)", "--seconds", "\(seconds)", "--ice-address", iceAddress,
        ]
        if let pliAt { arguments += ["--pli-at", "\(pliAt)"] }
        if let substream { arguments += ["--substream", "\(substream)"] }
        if let switchSubstream { arguments += ["--switch-substream", "\(switchSubstream.to)@\(switchSubstream.at)"] }
        let subscriber = try BackgroundProcess(
            python,
            arguments,
            directory: directory,
            name: name ?? "janus_subscriber-\(server.rawValue)",
            launcher: launcher
        )
        // Its own deadline is waitPublisher + seconds + 45 s; this one only guards against a hang.
        let deadline = Date().addingTimeInterval(waitPublisher + seconds + 60)
        while subscriber.isRunning {
            guard Date() < deadline else {
                subscriber.kill()
                throw InteropFailure("janus_subscriber.py on \(server) did not end:\n\(subscriber.output)")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        let output = subscriber.output
        guard let line = output.split(separator: "\n").last(where: { $0.hasPrefix("{") }) else {
            throw InteropFailure(
                "janus_subscriber.py on \(server) printed no summary (exit \(subscriber.exitStatus ?? -1)):\n\(output)"
            )
        }
        do {
            var summary = try JSONDecoder().decode(Summary.self, from: Data(line.utf8))
            summary.log = output
            return summary
        } catch {
            throw InteropFailure("janus_subscriber.py's summary does not decode: \(error)\n\(output)")
        }
    }

    // MARK: - Loss on the publisher -> Janus A leg

    /// Drops `percent` % of the UDP sends to Janus A's ICE ports that are longer than 300 bytes,
    /// at random (nftables in the namespace: the publisher's video and its retransmissions; STUN,
    /// RTCP and Opus are shorter). Replaces any earlier loss rule and zeroes the counter.
    public func setLoss(percent: Int) throws {
        try removeLoss()
        let nft = try NetworkNamespace.program("nft")
        try NetworkNamespace.run(launcher + [nft, "reset", "counter", loss.family, loss.table, loss.counter])
        try NetworkNamespace.run(
            launcher + [
                nft, "add", "rule", loss.family, loss.table, loss.chain, "ip", "daddr", iceAddress, "udp", "dport",
                rtpPortsA, "udp", "length", ">", "300", "numgen", "random", "mod", "100", "<", "\(percent)", "counter",
                "name", loss.counter, "drop",
            ]
        )
    }

    /// Every UDP datagram from or to local `port` dropped (both directions: both ends are in the
    /// namespace): a path that goes dead for one publisher, nothing else. Replaces any earlier rule.
    public func blackHole(port: Int) throws {
        try removeLoss()
        let nft = try NetworkNamespace.program("nft")
        for direction in ["sport", "dport"] {
            try NetworkNamespace.run(
                launcher + [
                    nft, "add", "rule", loss.family, loss.table, loss.chain, "udp", direction, "\(port)", "counter",
                    "name", loss.counter, "drop",
                ]
            )
        }
    }

    /// No more loss (the counter keeps its value).
    public func removeLoss() throws {
        let nft = try NetworkNamespace.program("nft")
        try NetworkNamespace.run(launcher + [nft, "flush", "chain", loss.family, loss.table, loss.chain])
    }

    /// Sends the loss rule dropped since `setLoss` (a send may carry several packets: UDP GSO).
    public func droppedPackets() throws -> Int {
        let nft = try NetworkNamespace.program("nft")
        let output = try NetworkNamespace.run(
            launcher + [nft, "-j", "list", "counter", loss.family, loss.table, loss.counter]
        )
        struct Listing: Decodable {
            struct Item: Decodable {
                struct Counter: Decodable { var packets: Int }
                var counter: Counter?
            }
            var nftables: [Item]
        }
        guard let listing = try? JSONDecoder().decode(Listing.self, from: Data(output.utf8)),
            let packets = listing.nftables.compactMap({ $0.counter?.packets }).first
        else { throw InteropFailure("nft list counter: \(output)") }
        return packets
    }

    // MARK: - One instance per suite

    /// The shared instance, started on first use (a failed start is remembered: later callers get
    /// the same error at once instead of another minute of waiting).
    public static func shared() async throws -> JanusRoom { try await SharedJanusRoom.instance.get() }

    /// Stops the shared instance, if one was started; the next `shared()` starts a new one.
    public static func stopShared() async { await SharedJanusRoom.instance.stop() }

    // MARK: - Namespaces

    static let peers = WebRTCSubscriber.repositoryRoot + "/Tests/Peers"
    private static let counter = LockedCounter()

    /// The network namespaces that exist (`ip netns list`).
    static func namespaces() -> [String] {
        guard let ip = try? NetworkNamespace.program("ip"), let list = try? NetworkNamespace.run([ip, "netns", "list"])
        else { return [] }
        return list.split(separator: "\n").compactMap { $0.split(separator: " ").first.map(String.init) }
    }

    /// Kills every process in namespace `name` and deletes it.
    static func deleteNamespace(_ name: String) {
        guard let ip = try? NetworkNamespace.program("ip") else { return }
        let pids = (try? NetworkNamespace.run([ip, "netns", "pids", name])) ?? ""
        for pid in pids.split(separator: "\n").compactMap({ Int32($0) }) where pid != getpid() {
            Glibc.kill(pid, SIGKILL)
        }
        _ = try? NetworkNamespace.run([ip, "netns", "delete", name])
    }

    /// Namespaces `rtc-janus-PID-N` whose test process PID is gone (a run that was killed), and
    /// the working directories (logs) of earlier runs' rooms, out/janus/run-rtc-janus-PID-N.
    static func deleteLeftovers() {
        func isLeftover(_ name: Substring) -> Bool {
            let fields = name.dropFirst("rtc-janus-".count).split(separator: "-")
            guard fields.count == 2, let pid = Int32(fields[0]) else { return false }
            return pid != getpid() && !FileManager.default.fileExists(atPath: "/proc/\(pid)")
        }
        for name in namespaces() where name.hasPrefix("rtc-janus-") && isLeftover(Substring(name)) {
            deleteNamespace(name)
        }
        let runs = WebRTCSubscriber.repositoryRoot + "/out/janus"
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: runs)) ?? []
        where entry.hasPrefix("run-rtc-janus-") && isLeftover(entry.dropFirst("run-".count)) {
            try? FileManager.default.removeItem(atPath: runs + "/" + entry)
        }
    }

    /// What janus_subscriber.py reports (its docstring describes every field).
    public struct Summary: Decodable, Sendable, CustomStringConvertible {
        public struct Sequence: Decodable, Sendable {
            public var first: Int
            public var last: Int
            public var tailLeftOut: Int
            /// Arrived in the media stream.
            public var received: Int
            /// Of those, after a higher one had: reordered, or lost upstream and repaired.
            public var late: Int
            /// Original sequence numbers that came in RTX.
            public var rtx: Int
            /// Never arrived in any form.
            public var missing: Int
            /// Runs of consecutive missing ones: gaps that never filled.
            public var gaps: Int
            public var unrepaired: [Int]

            enum CodingKeys: String, CodingKey {
                case first, last, received, late, rtx, missing, gaps, unrepaired
                case tailLeftOut = "tail_left_out"
            }
        }

        public struct KeyFrame: Decodable, Sendable {
            /// Seconds since the subscriber started when its first packet arrived.
            public var t: Double
            public var sequence: Int
        }

        public struct Timecodes: Decodable, Sendable, CustomStringConvertible {
            public var pictures: Int
            public var readable: Int
            public var first: Int?
            public var last: Int?
            public var inOrder: Bool
            public var outOfOrder: Int
            public var repeated: Int
            public var missing: Int
            public var captureFPS: Double?
            /// Pictures and readable timecodes per picture size ("640x360").
            public var bySize: [String: SizeCount]?

            public struct SizeCount: Decodable, Sendable {
                public var pictures: Int
                public var readable: Int
            }

            enum CodingKeys: String, CodingKey {
                case pictures, readable, first, last, repeated, missing
                case bySize = "by_size"
                case inOrder = "in_order"
                case outOfOrder = "out_of_order"
                case captureFPS = "capture_fps"
            }

            public var description: String {
                "timecodes \(readable)/\(pictures) readable, frames \(first ?? -1)…\(last ?? -1), "
                    + "\(outOfOrder) out of order, \(repeated) repeated, \(missing) missing, "
                    + "capture \(captureFPS.map { "\($0)" } ?? "?") fps"
            }
        }

        public struct Video: Decodable, Sendable {
            public var frames: Int
            public var width: Int?
            public var height: Int?
            public var sizes: [String]
            /// Frames over the window.
            public var fps: Double?
            /// Pictures after the first over the RTP time they span.
            public var fpsRTP: Double?
            /// The longest arrival gap between consecutive pictures, in seconds.
            public var largestGap: Double
            public var sequence: Sequence?
            public var keyFrames: [KeyFrame]
            public var timecodes: Timecodes

            enum CodingKeys: String, CodingKey {
                case frames, width, height, sizes, fps, sequence, timecodes
                case fpsRTP = "fps_rtp"
                case largestGap = "largest_gap_s"
                case keyFrames = "key_frames"
            }
        }

        public struct Audio: Decodable, Sendable {
            public var frames: Int
            public var seconds: Double
            public var sampleRate: Int?
            public var channels: Int?

            enum CodingKeys: String, CodingKey {
                case frames, seconds, channels
                case sampleRate = "sample_rate"
            }
        }

        public struct PLI: Decodable, Sendable {
            /// Seconds after the first decoded picture it was due.
            public var at: Double
            /// Seconds since the start when it was sent.
            public var t: Double?
            public var sent: Bool
            public var detail: String?
            public var keyFrameT: Double?
            /// From the PLI to the first packet of the next key frame.
            public var keyFrameAfterMs: Double?

            enum CodingKeys: String, CodingKey {
                case at, t, sent, detail
                case keyFrameT = "key_frame_t"
                case keyFrameAfterMs = "key_frame_after_ms"
            }
        }

        public var ok: Bool
        public var error: String?
        public var janus: String
        public var room: Int
        public var feed: Int?
        public var codecs: [String]
        public var ice: String?
        public var connection: String?
        /// published, offer, connected, firstVideoFrame, firstAudioFrame, end (seconds since start).
        public var times: [String: Double]
        /// Seconds of receiving, from the first decoded picture.
        public var window: Double
        public var video: Video
        public var audio: Audio
        public var pli: PLI?
        /// Everything the subscriber printed (progress lines, states, the summary).
        public var log = ""

        enum CodingKeys: String, CodingKey {
            case ok, error, janus, room, feed, codecs, ice, connection, times, video, audio, pli
            case window = "window_s"
        }

        public var description: String {
            let size = video.width.map { "\($0)x\(video.height ?? 0)" } ?? "-"
            let sequence =
                video.sequence.map {
                    "seq \($0.first)…\($0.last): \($0.received) received (\($0.late) late), \($0.rtx) rtx, "
                        + "\($0.missing) missing in \($0.gaps) gaps"
                } ?? "no sequence numbers"
            let pliText =
                pli.map {
                    "; PLI at \($0.t ?? -1) s \($0.sent ? "sent" : "NOT sent"), key frame after \($0.keyFrameAfterMs ?? -1) ms"
                }
                ?? ""
            return "\(ok ? "ok" : "FAILED: \(error ?? "?")") on \(janus): \(codecs.joined(separator: ",")); video "
                + "\(video.frames) frames \(size) in \(window) s (\(video.fps ?? 0) fps, \(video.fpsRTP ?? 0) by RTP), "
                + "largest gap \(video.largestGap) s, \(video.keyFrames.count) key frames, \(sequence); "
                + "\(video.timecodes); audio \(audio.frames) frames \(audio.seconds) s\(pliText)"
        }
    }
}

/// The suite-wide instance behind `JanusRoom.shared()`.
private actor SharedJanusRoom {
    static let instance = SharedJanusRoom()
    private var room: JanusRoom?
    private var failure: (any Error)?

    func get() throws -> JanusRoom {
        if let room { return room }
        if let failure { throw failure }
        do {
            let started = try JanusRoom()
            room = started
            ExitCleanup.register(started)
            return started
        } catch {
            failure = error
            throw error
        }
    }

    func stop() {
        room?.stop()
        room = nil
        failure = nil
    }
}

/// Stops a shared room still running when the test process exits normally (`atexit`).
private final class ExitCleanup: @unchecked Sendable {
    private static let shared = ExitCleanup()
    private let lock = NSLock()
    private var rooms: [JanusRoom] = []
    private var installed = false

    static func register(_ room: JanusRoom) {
        shared.lock.lock()
        defer { shared.lock.unlock() }
        shared.rooms.append(room)
        if !shared.installed {
            shared.installed = true
            atexit {
                ExitCleanup.shared.lock.lock()
                let rooms = ExitCleanup.shared.rooms
                ExitCleanup.shared.rooms = []
                ExitCleanup.shared.lock.unlock()
                for room in rooms { room.stop() }
            }
        }
    }
}
