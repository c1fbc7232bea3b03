import SignalingProtocol
import Testing

@Suite("Membership and liveness")
struct MembershipTests {
    @Test("a second live connection with the same uid gets uid-taken; the first is undisturbed")
    func uidTaken() async throws {
        try await withServer { server in
            let (first, _) = try await joinedLineClient(port: server.port, room: "r", uid: "alice", role: .publisher)
            let second = try await LineClient.connect(port: server.port)
            try await second.send(
                ClientRequest(
                    id: .number(9),
                    .join(.init(room: try Fixture.room("r"), uid: try Fixture.uid("alice"), role: .publisher))
                )
            )
            #expect(
                try await second.next()
                    == ServerEnvelope(
                        id: .number(9),
                        .error(
                            SignalingError(.uidTaken, #"uid "alice" is already in room "r" on another live connection"#)
                        )
                    )
            )
            // The same uid in another room is a different member.
            try await second.send(
                ClientRequest(
                    id: .number(10),
                    .join(.init(room: try Fixture.room("other"), uid: try Fixture.uid("alice"), role: .publisher))
                )
            )
            guard case .joined = try await second.next().message else {
                Issue.record("alice could not join another room")
                return
            }
            #expect(try await first.drainUntilBarrier() == [])
            await first.close()
            await second.close()
        }
    }

    @Test("after a connection drops, the same uid joins again on a new connection with its resume secret")
    func reconnectAfterDrop() async throws {
        try await withServer { server in
            let (watcher, _) = try await joinedLineClient(
                port: server.port,
                room: "r",
                uid: "watcher",
                role: .subscriber
            )
            let (first, firstJoined) = try await joinedLineClient(
                port: server.port,
                room: "r",
                uid: "alice",
                role: .publisher
            )
            let alice = try Fixture.uid("alice")
            #expect(
                try await watcher.next().message == .memberJoined(.init(member: Member(uid: alice, role: .publisher)))
            )
            await first.close()
            #expect(try await watcher.next().message == .memberLeft(.init(uid: alice, reason: .disconnected)))

            // A publisher's uid is held for its resume secret (Docs/signaling.md, Rules).
            let again = try await LineClient.connect(port: server.port)
            try await again.send(
                ClientRequest(
                    id: .number(1),
                    .join(.init(room: try Fixture.room("r"), uid: alice, role: .publisher, resume: firstJoined.resume))
                )
            )
            guard case .joined(let joined) = try await again.next().message else {
                Issue.record("the rejoin with the resume secret was refused")
                return
            }
            #expect(joined.members == [Member(uid: try Fixture.uid("watcher"), role: .subscriber)])
            #expect(
                try await watcher.next().message == .memberJoined(.init(member: Member(uid: alice, role: .publisher)))
            )
            await again.close()
            await watcher.close()
        }
    }

    @Test("a reconnect with the resume secret takes over a connection the server still thinks alive")
    func resumeTakesOver() async throws {
        try await withServer { server in
            let (watcher, _) = try await joinedLineClient(
                port: server.port,
                room: "r",
                uid: "watcher",
                role: .subscriber
            )
            let (stale, staleJoined) = try await joinedLineClient(
                port: server.port,
                room: "r",
                uid: "alice",
                role: .publisher
            )
            let alice = try Fixture.uid("alice")
            _ = try await watcher.next()

            // A wrong secret does not take over.
            let fresh = try await LineClient.connect(port: server.port)
            try await fresh.send(
                ClientRequest(
                    id: .number(1),
                    .join(.init(room: try Fixture.room("r"), uid: alice, role: .publisher, resume: "guess"))
                )
            )
            #expect(
                try await fresh.next().message
                    == .error(
                        SignalingError(.uidTaken, #"uid "alice" is already in room "r" on another live connection"#)
                    )
            )

            try await fresh.send(
                ClientRequest(
                    id: .number(2),
                    .join(.init(room: try Fixture.room("r"), uid: alice, role: .publisher, resume: staleJoined.resume))
                )
            )
            guard case .joined(let joined) = try await fresh.next().message else {
                Issue.record("resume join failed")
                return
            }
            #expect(joined.resume != staleJoined.resume)
            let staleLines = try await stale.linesUntilClosed()
            #expect(
                staleLines == [
                    #"{"message":"a new connection took over this uid","reason":"replaced","type":"goodbye"}"#
                ]
            )
            #expect(try await watcher.next().message == .memberLeft(.init(uid: alice, reason: .replaced)))
            #expect(
                try await watcher.next().message == .memberJoined(.init(member: Member(uid: alice, role: .publisher)))
            )
            await fresh.close()
            await watcher.close()
        }
    }

    @Test("a silent connection is dropped after the idle timeout and the room is told")
    func idleTimeout() async throws {
        // 3 s, not less: the watcher only starts pinging once the silent member has joined, and on
        // a loaded 2-core machine (every suite runs in parallel) that setup alone can take a second.
        try await withServer({ $0.idleTimeout = .seconds(3) }) { server in
            let (watcher, joined) = try await joinedLineClient(
                port: server.port,
                room: "r",
                uid: "watcher",
                role: .subscriber
            )
            #expect(joined.idleTimeout == 3)
            let (silent, _) = try await joinedLineClient(port: server.port, room: "r", uid: "silent", role: .publisher)
            let silentID = try Fixture.uid("silent")
            #expect(
                try await watcher.next().message
                    == .memberJoined(.init(member: Member(uid: silentID, role: .publisher)))
            )

            // The watcher keeps pinging; the silent one does not.
            var watcherSaw: [ServerMessage] = []
            var pings = 0
            while pings < 100 {
                pings += 1
                try await watcher.send(ClientRequest(id: .number(Int64(pings)), .ping))
                let reply = try await watcher.next()
                if reply.message == .pong { try await Task.sleep(for: .milliseconds(100)); continue }
                watcherSaw.append(reply.message)
                break
            }
            #expect(watcherSaw == [.memberLeft(.init(uid: silentID, reason: .timeout))])
            let lines = try await silent.linesUntilClosed()
            #expect(
                lines == [
                    #"{"message":"nothing received for 3.0 seconds; clients must ping","reason":"idle-timeout","type":"goodbye"}"#
                ]
            )
            await watcher.close()
        }
    }

    @Test("a connection that never joins is dropped by the idle timeout too")
    func idleBeforeJoin() async throws {
        try await withServer({ $0.idleTimeout = .milliseconds(300) }) { server in
            let idle = try await LineClient.connect(port: server.port)
            let lines = try await idle.linesUntilClosed()
            #expect(lines.count == 1 && lines[0].contains(#""reason":"idle-timeout""#))
        }
    }
}

@Suite("Slow readers")
struct SlowReaderTests {
    @Test("a client that stops reading is dropped once its queue passes the limit; the room goes on")
    func stalledClientIsDropped() async throws {
        try await withServer({
            $0.outboxLimitBytes = 256 * 1024
            $0.messageBurst = 10_000
            $0.messagesPerSecond = 10_000
        }) { server in
            let (publisher, _) = try await joinedLineClient(port: server.port, room: "r", uid: "pub", role: .publisher)
            let stalled = try await LineClient.connect(port: server.port, reading: false)
            try await stalled.send(
                ClientRequest(
                    .join(.init(room: try Fixture.room("r"), uid: try Fixture.uid("stalled"), role: .subscriber))
                )
            )
            let stalledID = try Fixture.uid("stalled")
            #expect(
                try await publisher.next().message
                    == .memberJoined(.init(member: Member(uid: stalledID, role: .subscriber)))
            )

            // Each republish sends the stalled member a ~30 KB stream-published it never reads.
            let bigSDP = Fixture.screenSDP + "a=x-padding:" + String(repeating: "p", count: 30_000) + "\r\n"
            let stream = StreamDescription(kind: .screen, codecs: ["H264"], sdp: bigSDP)
            var dropped = false
            var publishes = 0
            while !dropped && publishes < 2_000 {
                publishes += 1
                try await publisher.send(ClientRequest(id: .number(Int64(publishes)), .publish(.init(stream: stream))))
                let reply = try await publisher.next()
                if reply.message == .memberLeft(.init(uid: stalledID, reason: .dropped)) {
                    dropped = true
                    _ = try await publisher.next()
                }
            }
            #expect(dropped)
            #expect(try await publisher.drainUntilBarrier() == [])
            await stalled.close()
            await publisher.close()
        }
    }
}
