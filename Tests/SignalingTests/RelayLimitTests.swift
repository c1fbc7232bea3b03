import NIOCore
import NIOPosix
import SignalingClient
import SignalingProtocol
import SignalingServer
import Synchronization
import Testing

/// Issue 33's first finding, over real sockets: a relayed line over 64 KiB evicted the publisher
/// (its client treated it as fatal), an SDP of control characters made the room state a line
/// nobody could read, and a dropped publisher's uid was free for anyone. Now the server checks
/// what it relays on the way in and refuses what would be too long, the client skips a line it
/// cannot take, and a dropped publisher's uid answers only to its resume secret.
@Suite("Relay limits")
struct RelayLimitTests {
    /// A `"` is one byte in an SDP and two in JSON: an SDP of them doubles when relayed.
    static func quotedSDP(_ count: Int) -> String {
        "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\na=x:" + String(repeating: "\"", count: count) + "\r\n"
    }

    @Test("a signal whose relayed line would pass 64 KiB is refused too-large; the target stays and hears the next")
    func longSignalIsRefused() async throws {
        try await withServer { server in
            let (target, _) = try await joinedLineClient(port: server.port, room: "r1", uid: "p", role: .publisher)
            let longName = String(repeating: "m", count: 55)
            let (sender, _) = try await joinedLineClient(
                port: server.port,
                room: "r1",
                uid: longName,
                role: .subscriber
            )
            _ = try await target.drainUntilBarrier()
            // Fits as a request (to "p"), not once relayed (from a 55-byte uid).
            let payload = String(repeating: "x", count: 65_536 - 50)
            let request = ClientRequest(
                id: .number(7),
                .signal(.init(to: try Fixture.uid("p"), payload: .string(payload)))
            )
            let line = try SignalingCodec.encodeLine(request)
            #expect(line.count - 1 <= SignalingProtocol.maxLineBytes)
            try await sender.sendBytes(line)
            let reply = try await sender.next()
            guard case .error(let error) = reply.message else {
                Issue.record("expected too-large, got \(reply)")
                return
            }
            #expect(reply.id == .number(7))
            #expect(error.code == .tooLarge)
            #expect(error.message.contains("65536"), "\(error.message)")
            try await sender.send(
                ClientRequest(id: .number(8), .signal(.init(to: try Fixture.uid("p"), payload: .string("small"))))
            )
            #expect(try await sender.next() == ServerEnvelope(id: .number(8), .ack(.init(of: "signal"))))
            let seen = try await target.drainUntilBarrier()
            #expect(
                seen == [ServerEnvelope(.signal(.init(from: try Fixture.uid(longName), payload: .string("small"))))]
            )
        }
    }

    @Test("a subscribe whose relayed offer would pass 64 KiB is refused; the publisher gets nothing and stays")
    func longOfferIsRefused() async throws {
        try await withServer { server in
            let publisher = try await publishingLineClient(port: server.port, room: "r1", uid: "alice_sub")
            let (viewer, _) = try await joinedLineClient(port: server.port, room: "r1", uid: "v", role: .subscriber)
            let offer = Self.quotedSDP(32_700)
            #expect(offer.utf8.count <= SignalingProtocol.maxSDPBytes)
            try await viewer.send(
                ClientRequest(
                    id: .number(2),
                    .subscribe(
                        .init(publisher: try Fixture.uid("alice_sub"), receive: ReceiveDescription(offer: offer))
                    )
                )
            )
            let reply = try await viewer.next()
            guard case .error(let error) = reply.message else {
                Issue.record("expected too-large, got \(reply)")
                return
            }
            #expect(error.code == .tooLarge, "\(error)")
            #expect(error.message.hasPrefix("subscribe: the relayed subscribe-request"), "\(error.message)")
            // The publisher saw the viewer join and nothing else, and is still in the room.
            let seen = try await publisher.drainUntilBarrier()
            #expect(seen.map(\.message.type) == ["member-joined"])
            try await viewer.send(
                ClientRequest(
                    id: .number(3),
                    .subscribe(.init(publisher: try Fixture.uid("alice_sub"), receive: Fixture.receive()))
                )
            )
            let request = try await publisher.next()
            #expect(request.message.type == "subscribe-request")
        }
    }

    @Test("an SDP with a control character is refused naming its line; the room state stays readable")
    func controlCharactersAreRefused() async throws {
        try await withServer { server in
            let (publisher, _) = try await joinedLineClient(port: server.port, room: "r1", uid: "eve", role: .publisher)
            let sdp = "v=0\r\ns=" + String(repeating: "\u{01}", count: 5_000) + "\r\n"
            try await publisher.send(
                ClientRequest(id: .number(1), .publish(.init(stream: .init(kind: .screen, codecs: ["H264"], sdp: sdp))))
            )
            let reply = try await publisher.next()
            guard case .error(let error) = reply.message else {
                Issue.record("expected invalid-field, got \(reply)")
                return
            }
            #expect(error.code == .invalidField)
            #expect(
                error.message == #"publish: field "stream.sdp" is not an SDP: line 2 has a control character (0x1)"#,
                "\(error.message)"
            )
            let (_, joined) = try await joinedLineClient(
                port: server.port,
                room: "r1",
                uid: "alice_sub",
                role: .publisher
            )
            #expect(joined.streams.isEmpty)
        }
    }

    @Test("a publish after which a newcomer's joined would pass 64 KiB is refused; later joins still work")
    func roomStateStaysReadable() async throws {
        try await withServer { server in
            let (first, _) = try await joinedLineClient(port: server.port, room: "r1", uid: "a", role: .publisher)
            let big = StreamDescription(kind: .screen, codecs: ["H264"], sdp: Self.quotedSDP(20_000))
            try await first.send(ClientRequest(id: .number(1), .publish(.init(stream: big))))
            #expect(try await first.next() == ServerEnvelope(id: .number(1), .ack(.init(of: "publish"))))
            let (second, _) = try await joinedLineClient(port: server.port, room: "r1", uid: "b", role: .publisher)
            try await second.send(ClientRequest(id: .number(2), .publish(.init(stream: big))))
            let reply = try await second.next()
            guard case .error(let error) = reply.message else {
                Issue.record("expected too-large, got \(reply)")
                return
            }
            #expect(error.code == .tooLarge)
            #expect(error.message.contains("the room's state with this stream"), "\(error.message)")
            // A small stream still fits, and a newcomer reads the room in one line.
            try await second.send(ClientRequest(id: .number(3), .publish(.init(stream: Fixture.screen()))))
            #expect(try await second.next() == ServerEnvelope(id: .number(3), .ack(.init(of: "publish"))))
            let (_, joined) = try await joinedLineClient(port: server.port, room: "r1", uid: "c", role: .subscriber)
            #expect(joined.streams.map(\.uid.rawValue) == ["a", "b"])
        }
    }

    @Test("a publisher's uid is held after its connection drops: only its resume secret takes it back")
    func droppedPublisherUIDIsHeld() async throws {
        try await withServer { server in
            let (publisher, joined) = try await joinedLineClient(
                port: server.port,
                room: "r1",
                uid: "alice_sub",
                role: .publisher
            )
            let (viewer, _) = try await joinedLineClient(port: server.port, room: "r1", uid: "v", role: .subscriber)
            await publisher.close()
            let left = try await viewer.next()
            #expect(
                left == ServerEnvelope(.memberLeft(.init(uid: try Fixture.uid("alice_sub"), reason: .disconnected)))
            )
            // Anyone else: uid-taken, saying why and for how long.
            let thief = try await LineClient.connect(port: server.port)
            let join = ClientMessage.Join(
                room: try Fixture.room("r1"),
                uid: try Fixture.uid("alice_sub"),
                role: .publisher
            )
            try await thief.send(ClientRequest(id: .number(1), .join(join)))
            let refused = try await thief.next()
            guard case .error(let error) = refused.message else {
                Issue.record("the uid was taken: \(refused)")
                return
            }
            #expect(error.code == .uidTaken)
            #expect(error.message.contains("held for its publisher"), "\(error.message)")
            // A wrong secret is refused the same way; the right one gets the uid back.
            var wrong = join
            wrong.resume = String(repeating: "0", count: 32)
            try await thief.send(ClientRequest(id: .number(2), .join(wrong)))
            #expect((try await thief.next()).message.type == "error")
            let back = try await LineClient.connect(port: server.port)
            var resumed = join
            resumed.resume = joined.resume
            try await back.send(ClientRequest(id: .number(3), .join(resumed)))
            #expect((try await back.next()).message.type == "joined")
        }
    }

    @Test("a subscriber's uid, and a publisher's after leave or with no grace period, is free at once")
    func otherUIDsAreFreedAtOnce() async throws {
        try await withServer { server in
            let (viewer, _) = try await joinedLineClient(port: server.port, room: "r1", uid: "v", role: .subscriber)
            await viewer.close()
            let (publisher, _) = try await joinedLineClient(port: server.port, room: "r1", uid: "p", role: .publisher)
            try await publisher.send(ClientRequest(id: .number(1), .leave))
            _ = try await publisher.next()
            await publisher.close()
            // The server may not have seen the viewer's close yet: retry briefly.
            for uid in ["v", "p"] {
                var joined = false
                for _ in 0..<50 where !joined {
                    joined =
                        (try? await joinedLineClient(port: server.port, room: "r1", uid: uid, role: .subscriber)) != nil
                    if !joined { try await Task.sleep(for: .milliseconds(20)) }
                }
                #expect(joined, "\(uid) is still held")
            }
        }
        try await withServer({ $0.publisherGracePeriod = .zero }) { server in
            let (publisher, _) = try await joinedLineClient(port: server.port, room: "r1", uid: "p", role: .publisher)
            let (viewer, _) = try await joinedLineClient(port: server.port, room: "r1", uid: "v", role: .subscriber)
            await publisher.close()
            _ = try await viewer.next()
            _ = try await joinedLineClient(port: server.port, room: "r1", uid: "p", role: .publisher)
        }
    }

    @Test("a publisher's answers to relayed subscribes are not rate-limited; other messages still are")
    func answersAreNotRateLimited() async throws {
        try await withServer({
            $0.messageBurst = 4
            $0.messagesPerSecond = 0.01
        }) { server in
            let publisher = try await publishingLineClient(port: server.port, room: "r1", uid: "pub")
            var viewers: [LineClient] = []
            for index in 0..<10 {
                let (viewer, _) = try await joinedLineClient(
                    port: server.port,
                    room: "r1",
                    uid: "v\(index)",
                    role: .subscriber
                )
                try await viewer.send(
                    ClientRequest(
                        id: .number(9),
                        .subscribe(.init(publisher: try Fixture.uid("pub"), receive: Fixture.receive()))
                    )
                )
                viewers.append(viewer)
            }
            var requests: [ServerMessage.SubscribeRequest] = []
            while requests.count < 10 {
                if case .subscribeRequest(let request) = try await publisher.next().message { requests.append(request) }
            }
            for (index, request) in requests.enumerated() {
                let answer = ClientMessage.SubscribeAnswer(
                    subscriber: request.subscriber,
                    kind: request.kind,
                    sdp: Fixture.answerSDP(for: request.subscriber.rawValue)
                )
                try await publisher.send(ClientRequest(id: .number(Int64(100 + index)), .subscribeAnswer(answer)))
            }
            var acks = 0
            var limited = 0
            while acks + limited < 10 {
                switch try await publisher.next().message {
                case .ack: acks += 1
                case .error(let error) where error.code == .rateLimited: limited += 1
                default: continue
                }
            }
            #expect(acks == 10 && limited == 0, "\(acks) answers relayed, \(limited) rate-limited")
            for viewer in viewers {
                var reply = try await viewer.next()
                while reply.id != .number(9) { reply = try await viewer.next() }
                #expect(reply.message.type == "subscribed", "\(reply)")
            }
            // A stale answer (nothing waits for it) takes a token like any message: the bucket
            // had 2 left after join and publish, so the third is refused.
            let stale = ClientMessage.SubscribeAnswer(
                subscriber: try Fixture.uid("v0"),
                kind: .screen,
                sdp: Fixture.screenSDP
            )
            var codes: [String] = []
            for id in Int64(200)...202 {
                try await publisher.send(ClientRequest(id: .number(id), .subscribeAnswer(stale)))
                var reply = try await publisher.next()
                while reply.id != .number(id) { reply = try await publisher.next() }
                if case .error(let error) = reply.message { codes.append(error.code.rawValue) }
            }
            #expect(codes == ["no-such-subscription", "no-such-subscription", "rate-limited"], "\(codes)")
        }
    }

    @Test("the client library skips a server line over 64 KiB, logs it, and reads the next")
    func clientSkipsAnOverlongLine() async throws {
        let server = try await OverlongLineServer.start()
        defer { server.close() }
        let client = SignalingClient(configuration: clientConfiguration(port: server.port), logger: testLogger)
        try await client.connect()
        let joined = try await client.join(room: try Fixture.room("r1"), uid: try Fixture.uid("me"), role: .subscriber)
        #expect(joined.uid.rawValue == "me")
        #expect(server.overlongLinesSent == 1)
        await client.close()
    }
}

/// A server that answers a `join` the way no real server does any more: first a 70,000-byte
/// line, then the `joined` reply. Only a client that skips the long line gets its reply.
final class OverlongLineServer: Sendable {
    let port: Int
    private let channel: any Channel
    private let sent: Counter

    var overlongLinesSent: Int { sent.value.load(ordering: .relaxed) }

    private init(port: Int, channel: any Channel, sent: Counter) {
        self.port = port
        self.channel = channel
        self.sent = sent
    }

    static func start() async throws -> OverlongLineServer {
        let sent = Counter()
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(BoundedLineDecoder()))
                    try channel.pipeline.syncOperations.addHandler(Responder(sent: sent))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        return OverlongLineServer(port: channel.localAddress?.port ?? 0, channel: channel, sent: sent)
    }

    func close() {
        channel.close(promise: nil)
    }

    final class Counter: Sendable {
        let value = Atomic<Int>(0)
    }

    final class Responder: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        let sent: Counter

        init(sent: Counter) {
            self.sent = sent
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let line = unwrapInboundIn(data)
            guard case .success(let request) = SignalingCodec.decodeRequest(line.readableBytesView),
                case .join(let join) = request.message
            else { return }
            let long = #"{"type":"signal","from":"x","payload":""# + String(repeating: "y", count: 70_000) + "\"}\n"
            context.write(wrapOutboundOut(ByteBuffer(string: long)), promise: nil)
            sent.value.add(1, ordering: .relaxed)
            let joined = ServerMessage.Joined(
                room: join.room,
                uid: join.uid,
                role: join.role,
                members: [],
                streams: [],
                idleTimeout: 30,
                resume: String(repeating: "a", count: 32)
            )
            if let reply = try? SignalingCodec.encodeLine(ServerEnvelope(id: request.id, .joined(joined))) {
                context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: reply)), promise: nil)
            }
        }
    }
}
