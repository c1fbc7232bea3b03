import SignalingProtocol
import Testing

/// Every kind of bad input gets its error code, echoing the request id when it could be read;
/// the connection stays usable except after a too-long line or repeated garbage; and a
/// well-behaved client is served normally afterwards.
@Suite("Bad input")
struct BadInputTests {
    /// Joins a fresh client in a fresh room and checks it is served: the server survived.
    private func expectServerStillServes(port: Int, room: String = "healthy") async throws {
        let (client, _) = try await joinedLineClient(port: port, room: room, uid: "ok", role: .publisher)
        try await client.send(ClientRequest(id: .number(1), .publish(.init(stream: Fixture.screen()))))
        #expect(try await client.next() == ServerEnvelope(id: .number(1), .ack(.init(of: "publish"))))
        await client.close()
    }

    @Test("malformed, unknown, missing, wrong-typed and invalid fields each get their code; the connection stays")
    func decodingErrorsOverTheSocket() async throws {
        try await withServer { server in
            let (bystander, _) = try await joinedLineClient(
                port: server.port,
                room: "r",
                uid: "bystander",
                role: .publisher
            )
            let client = try await LineClient.connect(port: server.port)
            let cases: [(String, SignalingError.Code, RequestID?)] = [
                ("{not json", .badJSON, nil),
                (#""just a string""#, .badJSON, nil),
                (#"{"type":"teleport","id":1}"#, .unknownType, .number(1)),
                (#"{"type":"join","id":2,"room":"r","uid":"u","role":"publisher"}"#, .missingField, .number(2)),
                (
                    #"{"type":"join","id":"3","version":1,"room":["r"],"uid":"u","role":"publisher"}"#, .invalidField,
                    .string("3")
                ),
                (
                    #"{"type":"join","id":4,"version":1,"room":"r!","uid":"u","role":"publisher"}"#, .invalidRoom,
                    .number(4)
                ),
                (
                    #"{"type":"join","id":5,"version":1,"room":"r","uid":"\#(String(repeating: "u", count: 65))","role":"publisher"}"#,
                    .invalidUID, .number(5)
                ),
                (#"{"id":6}"#, .missingField, .number(6)),
            ]
            for (line, code, id) in cases {
                try await client.send(line)
                let reply = try await client.next()
                guard case .error(let error) = reply.message else {
                    Issue.record("\(line) got \(reply)")
                    continue
                }
                #expect(error.code == code, "\(line)")
                #expect(reply.id == id, "\(line)")
            }
            // Still usable: a valid join works on the same connection.
            try await client.send(
                ClientRequest(
                    id: .number(7),
                    .join(.init(room: try Fixture.room("r"), uid: try Fixture.uid("u"), role: .subscriber))
                )
            )
            guard case .joined = try await client.next().message else {
                Issue.record("join after bad input failed")
                return
            }
            // The bystander saw only the join, none of the garbage.
            #expect(
                try await bystander.drainUntilBarrier().map(\.message) == [
                    .memberJoined(.init(member: Member(uid: try Fixture.uid("u"), role: .subscriber)))
                ]
            )
            try await expectServerStillServes(port: server.port)
            await client.close()
            await bystander.close()
        }
    }

    @Test("requests that break room rules get their codes")
    func ruleErrors() async throws {
        try await withServer { server in
            let client = try await LineClient.connect(port: server.port)
            let pub = try Fixture.uid("pub")
            try await client.send(ClientRequest(id: .number(1), .publish(.init(stream: Fixture.screen()))))
            #expect(
                try await client.next()
                    == ServerEnvelope(id: .number(1), .error(SignalingError(.notJoined, "publish needs a joined room")))
            )
            try await client.send(ClientRequest(id: .number(2), .leave))
            #expect(
                try await client.next()
                    == ServerEnvelope(id: .number(2), .error(SignalingError(.notJoined, "leave needs a joined room")))
            )
            try await client.send(
                ClientRequest(
                    id: .number(3),
                    .join(.init(version: 2, room: try Fixture.room("r"), uid: try Fixture.uid("v"), role: .subscriber))
                )
            )
            #expect(
                try await client.next()
                    == ServerEnvelope(
                        id: .number(3),
                        .error(
                            SignalingError(
                                .versionMismatch,
                                "this server speaks protocol version 1; the client sent version 2"
                            )
                        )
                    )
            )
            try await client.send(
                ClientRequest(
                    id: .number(4),
                    .join(.init(room: try Fixture.room("r"), uid: try Fixture.uid("v"), role: .subscriber))
                )
            )
            guard case .joined = try await client.next().message else {
                Issue.record("join failed")
                return
            }
            try await client.send(
                ClientRequest(
                    id: .number(5),
                    .join(.init(room: try Fixture.room("r"), uid: try Fixture.uid("w"), role: .subscriber))
                )
            )
            #expect(
                try await client.next().message
                    == .error(
                        SignalingError(
                            .alreadyJoined,
                            #"this connection is already in room "r" as "v"; send leave first"#
                        )
                    )
            )
            try await client.send(ClientRequest(id: .number(6), .publish(.init(stream: Fixture.screen()))))
            #expect(
                try await client.next().message
                    == .error(SignalingError(.notAllowed, #"only publishers may publish; "v" joined as a subscriber"#))
            )
            try await client.send(
                ClientRequest(id: .number(7), .subscribe(.init(publisher: pub, receive: Fixture.receive())))
            )
            #expect(
                try await client.next().message
                    == .error(SignalingError(.noSuchMember, #"no member "pub" in room "r""#))
            )
            try await client.send(
                ClientRequest(
                    id: .number(8),
                    .subscribe(.init(publisher: try Fixture.uid("v"), receive: Fixture.receive()))
                )
            )
            #expect(
                try await client.next().message
                    == .error(SignalingError(.notAllowed, "a member cannot subscribe to itself"))
            )
            try await client.send(ClientRequest(id: .number(9), .signal(.init(to: pub, payload: .null))))
            #expect(
                try await client.next().message
                    == .error(SignalingError(.noSuchMember, #"no member "pub" in room "r""#))
            )

            let (publisher, _) = try await joinedLineClient(port: server.port, room: "r", uid: "pub", role: .publisher)
            _ = try await client.next()  // member-joined pub
            try await client.send(
                ClientRequest(
                    id: .number(10),
                    .subscribe(.init(publisher: pub, kind: .camera, receive: Fixture.receive()))
                )
            )
            #expect(
                try await client.next()
                    == ServerEnvelope(
                        id: .number(10),
                        .error(SignalingError(.notPublishing, #""pub" does not publish a camera stream"#))
                    )
            )
            try await client.send(
                ClientRequest(id: .number(11), .subscribe(.init(publisher: pub, receive: Fixture.receive())))
            )
            #expect(
                try await client.next()
                    == ServerEnvelope(
                        id: .number(11),
                        .error(SignalingError(.notPublishing, #""pub" publishes no stream"#))
                    )
            )
            try await publisher.send(
                ClientRequest(
                    id: .number(1),
                    .subscribeAnswer(.init(subscriber: try Fixture.uid("v"), kind: .screen, sdp: Fixture.screenSDP))
                )
            )
            #expect(
                try await publisher.next().message
                    == .error(
                        SignalingError(
                            .noSuchSubscription,
                            #"no subscribe from "v" to your screen stream is waiting for an answer"#
                        )
                    )
            )
            try await publisher.send(ClientRequest(id: .number(2), .unpublish(.init(kind: .screen))))
            #expect(
                try await publisher.next().message
                    == .error(SignalingError(.notPublishing, #""pub" does not publish a screen stream"#))
            )
            await publisher.close()
            await client.close()
        }
    }

    @Test("a line over 64 KiB gets line-too-long, then goodbye, then the connection closes")
    func lineTooLong() async throws {
        try await withServer { server in
            let (watcher, _) = try await joinedLineClient(
                port: server.port,
                room: "r",
                uid: "watcher",
                role: .subscriber
            )
            let (client, _) = try await joinedLineClient(port: server.port, room: "r", uid: "big", role: .publisher)
            _ = try await watcher.next()
            // No newline at all: the server must not wait for one.
            try await client.sendBytes([UInt8](repeating: UInt8(ascii: "x"), count: SignalingProtocol.maxLineBytes + 1))
            let lines = try await client.linesUntilClosed()
            #expect(
                lines == [
                    #"{"code":"line-too-long","message":"a line is longer than 65536 bytes; the connection will be closed","type":"error"}"#,
                    #"{"message":"a line is longer than 65536 bytes; the connection will be closed","reason":"line-too-long","type":"goodbye"}"#,
                ]
            )
            #expect(
                try await watcher.next().message == .memberLeft(.init(uid: try Fixture.uid("big"), reason: .dropped))
            )
            try await expectServerStillServes(port: server.port)
            await watcher.close()
        }
    }

    @Test("a line of exactly 64 KiB is still read (and judged on its content)")
    func lineAtLimit() async throws {
        try await withServer { server in
            let client = try await LineClient.connect(port: server.port)
            let prefix = #"{"type":"ping","id":1,"pad":""#
            let suffix = #""}"#
            let pad = String(
                repeating: "p",
                count: SignalingProtocol.maxLineBytes - prefix.utf8.count - suffix.utf8.count
            )
            try await client.send(prefix + pad + suffix)
            #expect(try await client.next() == ServerEnvelope(id: .number(1), .pong))
            await client.close()
        }
    }

    @Test("repeated garbage closes the connection; a good message in between resets the count")
    func repeatedGarbage() async throws {
        try await withServer({ $0.maxConsecutiveBadMessages = 5 }) { server in
            let client = try await LineClient.connect(port: server.port)
            for _ in 0..<4 { try await client.send("garbage") }
            try await client.send(ClientRequest(id: .number(1), .ping))
            for _ in 0..<4 { try await client.send("garbage") }
            try await client.send(ClientRequest(id: .number(2), .ping))
            var replies: [ServerMessage] = []
            for _ in 0..<10 { replies.append(try await client.next().message) }
            #expect(replies.filter { $0 == .pong }.count == 2)
            #expect(replies.filter { if case .error(let e) = $0 { e.code == .badJSON } else { false } }.count == 8)

            for _ in 0..<5 { try await client.send("{") }
            let lines = try await client.linesUntilClosed()
            #expect(lines.count == 6)
            #expect(
                lines.last
                    == #"{"message":"closing after 5 bad messages in a row","reason":"too-many-errors","type":"goodbye"}"#
            )
            try await expectServerStillServes(port: server.port)
        }
    }

    @Test("a full room refuses the next member")
    func fullRoom() async throws {
        try await withServer({ $0.maxMembersPerRoom = 2 }) { server in
            let (a, _) = try await joinedLineClient(port: server.port, room: "small", uid: "a", role: .publisher)
            let (b, _) = try await joinedLineClient(port: server.port, room: "small", uid: "b", role: .subscriber)
            let c = try await LineClient.connect(port: server.port)
            try await c.send(
                ClientRequest(
                    id: .string("c"),
                    .join(.init(room: try Fixture.room("small"), uid: try Fixture.uid("c"), role: .subscriber))
                )
            )
            #expect(
                try await c.next()
                    == ServerEnvelope(
                        id: .string("c"),
                        .error(SignalingError(.roomFull, #"room "small" is full (2 members)"#))
                    )
            )
            // The refused connection can still join elsewhere.
            try await c.send(
                ClientRequest(
                    id: .string("c2"),
                    .join(.init(room: try Fixture.room("big"), uid: try Fixture.uid("c"), role: .subscriber))
                )
            )
            guard case .joined = try await c.next().message else {
                Issue.record("join elsewhere failed")
                return
            }
            for client in [a, b, c] { await client.close() }
        }
    }

    @Test("the room limit refuses a join that would open another room")
    func maxRooms() async throws {
        try await withServer({ $0.maxRooms = 1 }) { server in
            let (a, _) = try await joinedLineClient(port: server.port, room: "one", uid: "a", role: .publisher)
            let b = try await LineClient.connect(port: server.port)
            try await b.send(
                ClientRequest(
                    id: .number(1),
                    .join(.init(room: try Fixture.room("two"), uid: try Fixture.uid("b"), role: .publisher))
                )
            )
            #expect(
                try await b.next()
                    == ServerEnvelope(
                        id: .number(1),
                        .error(SignalingError(.tooManyRooms, "the server already has its limit of 1 rooms"))
                    )
            )
            // Joining the existing room is still fine.
            try await b.send(
                ClientRequest(
                    id: .number(2),
                    .join(.init(room: try Fixture.room("one"), uid: try Fixture.uid("b"), role: .publisher))
                )
            )
            guard case .joined = try await b.next().message else {
                Issue.record("join of the existing room failed")
                return
            }
            // Once the room empties it is gone, and another may open.
            await a.close()
            #expect(try await b.next().message == .memberLeft(.init(uid: try Fixture.uid("a"), reason: .disconnected)))
            try await b.send(ClientRequest(id: .number(3), .leave))
            #expect(try await b.next().message == .ack(.init(of: "leave")))
            try await b.send(
                ClientRequest(
                    id: .number(4),
                    .join(.init(room: try Fixture.room("two"), uid: try Fixture.uid("b"), role: .publisher))
                )
            )
            guard case .joined = try await b.next().message else {
                Issue.record("join of a new room after the old one emptied failed")
                return
            }
            await b.close()
        }
    }

    @Test("a burst over the rate limit gets rate-limited errors with each request's id")
    func rateLimit() async throws {
        try await withServer({
            $0.messageBurst = 5
            $0.messagesPerSecond = 0.5
        }) { server in
            let client = try await LineClient.connect(port: server.port)
            var burst: [UInt8] = []
            for index in 0..<20 {
                burst += try SignalingCodec.encodeLine(ClientRequest(id: .number(Int64(index)), .ping))
            }
            try await client.sendBytes(burst)
            var limited = 0
            for index in 0..<20 {
                let reply = try await client.next()
                #expect(reply.id == .number(Int64(index)))
                if index < 5 {
                    #expect(reply.message == .pong)
                }
                if case .error(let error) = reply.message {
                    #expect(error.code == .rateLimited)
                    #expect(error.message == "more than 5 messages at once or 0.5 per second; message dropped")
                    limited += 1
                }
            }
            #expect(limited >= 10)
            try await expectServerStillServes(port: server.port)
            await client.close()
        }
    }
}
