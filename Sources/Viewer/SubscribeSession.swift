import Foundation
import Logging
import SignalingClient
import SignalingProtocol
import Transport

/// What `rtc-subscribe` runs: join a room as a viewer, subscribe to a publisher with a receive
/// description (this host's ports, the SRTP suites a stock ffmpeg plays), write the answer SDP
/// the publisher sends back, optionally start a player on it, and stay until stopped.
///
/// When the publisher re-publishes (after it or the server restarted) the client library
/// re-subscribes by itself; the new answer carries new keys, so the SDP file is rewritten and
/// a player started here is restarted on it.
public final class SubscribeSession: @unchecked Sendable {
    public struct Options: Sendable {
        public var room: String
        public var uid: String
        public var from: String
        public var signal: (host: String, port: Int) = ("127.0.0.1", 8443)
        public var token: String?
        /// Where this viewer receives; its players bind these ports.
        public var address = "127.0.0.1"
        /// First of four ports (video, video RTCP, audio, audio RTCP); nil picks free ones.
        public var port: Int?
        public var sdpPath: String?
        /// A command to start on the SDP: `{sdp}` is replaced by its path, else the path is appended.
        public var play: String?
        public var duration: Double?
        public init(room: String, uid: String, from: String) {
            self.room = room
            self.uid = uid
            self.from = from
        }
    }

    public struct UsageError: Error, CustomStringConvertible {
        public let description: String
    }

    /// Suites offered, in order of preference: `_80` first because ffmpeg checks SRTCP tags
    /// with 80 bits whatever the suite (Docs/SRTP-and-SDP.md).
    public static let offeredSuites = ["AES_CM_128_HMAC_SHA1_80", "AEAD_AES_128_GCM", "AES_CM_128_HMAC_SHA1_32"]

    public let options: Options
    public let port: Int
    public var sdpPath: String { options.sdpPath ?? "\(options.uid).sdp" }
    private let room: RoomID
    private let uid: MemberID
    private let publisher: MemberID
    private let logger: Logger
    private let print: @Sendable (String) -> Void
    private let stopped = AsyncStream<Void>.makeStream()
    private var player: PlayerProcess?

    public init(options: Options, logger: Logger, print: @escaping @Sendable (String) -> Void) throws {
        do {
            room = try RoomID(validating: options.room)
            uid = try MemberID(validating: options.uid)
            publisher = try MemberID(validating: options.from)
        } catch {
            throw UsageError(description: error.message)
        }
        do {
            if let port = options.port {
                try ViewerPorts.check(port, host: options.address)
                self.port = port
            } else {
                self.port = try ViewerPorts.pick(host: options.address)
            }
        } catch {
            throw UsageError(description: error.message)
        }
        if let duration = options.duration, !(duration > 0) {
            throw UsageError(description: "--duration must be positive")
        }
        self.options = options
        self.logger = logger
        self.print = print
    }

    /// Ends the session: unsubscribe, leave, stop the player.
    public func stop() { stopped.continuation.finish() }

    public func run() async throws {
        let client = SignalingClient(
            configuration: .init(host: options.signal.host, port: options.signal.port),
            logger: logger
        )
        let receive = ReceiveDescription(
            address: options.address,
            videoPort: port,
            audioPort: port + 2,
            rtcpMux: false,
            cryptoSuites: Self.offeredSuites
        )
        try await client.connect()
        try await client.join(room: room, uid: uid, role: .subscriber, token: options.token)
        let events = Task { await self.follow(client.events, client: client) }
        do {
            let subscribed = try await subscribeWhenPublished(client: client, receive: receive)
            try await use(sdp: subscribed.sdp, client: client)
        } catch {
            events.cancel()
            await client.close()
            throw error
        }
        let timeout = options.duration.map { d in
            Task {
                try? await Task.sleep(for: .seconds(d)); self.stop()
            }
        }
        for await _ in stopped.stream {}
        timeout?.cancel()
        events.cancel()
        stopPlayer()
        try? await client.unsubscribe(from: publisher)
        try? await client.leave()
        await client.close()
        print("left room \(room)")
    }

    /// Subscribes; if the publisher is not (yet) publishing, waits for it.
    private func subscribeWhenPublished(
        client: SignalingClient,
        receive: ReceiveDescription
    ) async throws
        -> ServerMessage.Subscribed
    {
        var announced = false
        while true {
            do {
                return try await client.subscribe(to: publisher, receive: receive)
            } catch let error as SignalingError where error.code == .notPublishing || error.code == .noSuchMember {
                if !announced { print("waiting for \(publisher) to publish in room \(room)…") }
                announced = true
                try await Task.sleep(for: .milliseconds(500))
            }
        }
    }

    /// Writes the SDP, prints how to play it, starts the player if asked.
    private func use(sdp: String, client: SignalingClient) async throws {
        guard FileManager.default.createFile(atPath: sdpPath, contents: Data(sdp.utf8)) else {
            throw UsageError(description: "cannot write \(sdpPath)")
        }
        print("subscribed to \(publisher): SDP written to \(sdpPath) (ports \(port)–\(port + 3))")
        print("play: ffplay -protocol_whitelist file,udp,rtp -i \(sdpPath)")
        guard let play = options.play else { return }
        stopPlayer()
        let command =
            play.contains("{sdp}") ? play.replacingOccurrences(of: "{sdp}", with: sdpPath) : "\(play) \(sdpPath)"
        let process = try PlayerProcess(command: command)
        player = process
        print("player started: \(command)")
        // Once the player holds its ports, ask for a key frame so it starts decoding at once.
        // (Read from /proc, not by binding: a probe bind could take a port from the player.)
        for _ in 0..<100 where process.isRunning {
            if ViewerPorts.isBound(port) { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        try? await client.signal(to: publisher, payload: .object(["request": .string("keyframe")]))
    }

    private func follow(_ events: AsyncStream<SignalingEvent>, client: SignalingClient) async {
        for await event in events {
            switch event {
            case .subscribed(let renewed) where renewed.publisher == publisher:
                print("re-subscribed to \(publisher) (new keys)")
                try? await use(sdp: renewed.sdp, client: client)
            case .unsubscribed(let gone) where gone.publisher == publisher:
                print("\(publisher) stopped publishing (\(gone.reason)); waiting for it to return")
            case .disconnected(let error):
                print("signaling connection lost (\(error.message)); reconnecting")
            case .rejoined:
                print("back in room \(room)")
            default:
                continue
            }
        }
    }

    private func stopPlayer() {
        player?.stop()
        player = nil
    }
}
