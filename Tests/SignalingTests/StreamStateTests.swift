import SignalingClient
import SignalingProtocol
import SignalingServer
import Testing

/// `stream-state` (Docs/signaling.md): a publisher says its picture is still or moves again;
/// the room relays it once per change and remembers it for `joined` and `stream-published`.
@Suite("Stream state")
struct StreamStateTests {
    @Test("a publisher's stream-state reaches the other members once per change; its ack comes back")
    func relayedToOtherMembers() async throws {
        try await withServer { server in
            let aliceSub = try Fixture.uid("alice_sub")
            let alice = try await publishingLineClient(port: server.port, room: "r1", uid: "alice_sub")
            let (bob, _) = try await joinedLineClient(port: server.port, room: "r1", uid: "bob", role: .subscriber)
            #expect(
                try await alice.next()
                    == ServerEnvelope(
                        .memberJoined(.init(member: Member(uid: try Fixture.uid("bob"), role: .subscriber)))
                    )
            )
            // Another room hears nothing.
            let (other, _) = try await joinedLineClient(port: server.port, room: "r2", uid: "carol", role: .subscriber)

            try await alice.send(ClientRequest(id: .number(1), .streamState(.init(kind: .screen, state: .still))))
            #expect(try await alice.next() == ServerEnvelope(id: .number(1), .ack(.init(of: "stream-state"))))
            #expect(
                try await bob.next() == ServerEnvelope(.streamState(.init(uid: aliceSub, kind: .screen, state: .still)))
            )
            // The same state again is acknowledged and not relayed: one line per transition.
            try await alice.send(ClientRequest(id: .number(2), .streamState(.init(kind: .screen, state: .still))))
            #expect(try await alice.next() == ServerEnvelope(id: .number(2), .ack(.init(of: "stream-state"))))
            try await alice.send(ClientRequest(id: .number(3), .streamState(.init(kind: .screen, state: .moving))))
            #expect(try await alice.next() == ServerEnvelope(id: .number(3), .ack(.init(of: "stream-state"))))
            #expect(
                try await bob.next()
                    == ServerEnvelope(.streamState(.init(uid: aliceSub, kind: .screen, state: .moving)))
            )
            // The wire line, exactly.
            try await alice.send(#"{"type":"stream-state","id":4,"kind":"screen","state":"still"}"#)
            #expect(try await alice.nextLine() == #"{"id":4,"of":"stream-state","type":"ack"}"#)
            #expect(
                try await bob.nextLine()
                    == #"{"kind":"screen","state":"still","type":"stream-state","uid":"alice_sub"}"#
            )
            // Nothing more for bob, and nothing at all for the other room.
            #expect(try await bob.drainUntilBarrier().isEmpty)
            #expect(try await other.drainUntilBarrier().isEmpty)
        }
    }

    @Test("a member that joins while the stream is still sees state still in joined and stream-published")
    func lateJoinerSeesStill() async throws {
        try await withServer { server in
            let aliceSub = try Fixture.uid("alice_sub")
            let alice = try await publishingLineClient(port: server.port, room: "r1", uid: "alice_sub")
            try await alice.send(ClientRequest(id: .number(1), .streamState(.init(kind: .screen, state: .still))))
            #expect(try await alice.next() == ServerEnvelope(id: .number(1), .ack(.init(of: "stream-state"))))

            let still = PublishedStream(uid: aliceSub, description: Fixture.screen(), state: .still)
            let (carol, joined) = try await joinedLineClient(
                port: server.port,
                room: "r1",
                uid: "carol",
                role: .subscriber
            )
            #expect(joined.streams == [still])
            #expect(joined.streams.first?.state == .still)
            _ = try await alice.next()  // member-joined

            // A publish that replaces the stream keeps its state; the event carries it.
            try await alice.send(ClientRequest(id: .number(2), .publish(.init(stream: Fixture.screen("again")))))
            #expect(try await alice.next() == ServerEnvelope(id: .number(2), .ack(.init(of: "publish"))))
            let published = try await carol.next()
            guard case .streamPublished(let event) = published.message else {
                Issue.record("expected stream-published, got \(published)")
                return
            }
            #expect(event.stream.state == .still)

            // Moving again: absent from the stream, as for a stream that never went still.
            try await alice.send(ClientRequest(id: .number(3), .streamState(.init(kind: .screen, state: .moving))))
            #expect(try await alice.next() == ServerEnvelope(id: .number(3), .ack(.init(of: "stream-state"))))
            _ = try await carol.next()  // stream-state moving
            let (_, later) = try await joinedLineClient(port: server.port, room: "r1", uid: "dave", role: .subscriber)
            #expect(later.streams == [PublishedStream(uid: aliceSub, description: Fixture.screen("again"))])
            #expect(later.streams.first?.state == nil)
        }
    }

    @Test("stream-state needs a room and a stream of that kind: not-joined, not-publishing")
    func onlyThePublisherOfTheStream() async throws {
        try await withServer { server in
            let stranger = try await LineClient.connect(port: server.port)
            try await stranger.send(ClientRequest(id: .number(1), .streamState(.init(kind: .screen, state: .still))))
            #expect(
                try await stranger.next()
                    == ServerEnvelope(
                        id: .number(1),
                        .error(SignalingError(.notJoined, "stream-state needs a joined room"))
                    )
            )

            _ = try await publishingLineClient(port: server.port, room: "r1", uid: "alice_sub")
            let (bob, _) = try await joinedLineClient(port: server.port, room: "r1", uid: "bob", role: .subscriber)
            try await bob.send(ClientRequest(id: .number(2), .streamState(.init(kind: .screen, state: .still))))
            #expect(
                try await bob.next()
                    == ServerEnvelope(
                        id: .number(2),
                        .error(SignalingError(.notPublishing, "\"bob\" does not publish a screen stream"))
                    )
            )
            // A publisher's other kind is not its to set either.
            let (dave, _) = try await joinedLineClient(port: server.port, room: "r1", uid: "dave", role: .publisher)
            _ = try await bob.next()  // member-joined
            try await dave.send(ClientRequest(id: .number(3), .streamState(.init(kind: .camera, state: .still))))
            #expect(
                try await dave.next()
                    == ServerEnvelope(
                        id: .number(3),
                        .error(SignalingError(.notPublishing, "\"dave\" does not publish a camera stream"))
                    )
            )
            // Nobody heard of any of it.
            #expect(try await bob.drainUntilBarrier().isEmpty)
        }
    }

    @Test("a bad state or kind gets invalid-field naming the field and the value; a missing one missing-field")
    func badValues() async throws {
        try await withServer { server in
            let alice = try await publishingLineClient(port: server.port, room: "r1", uid: "alice_sub")
            let cases: [(String, SignalingError)] = [
                (
                    #"{"type":"stream-state","id":1,"kind":"screen","state":"paused"}"#,
                    SignalingError(.invalidField, #"stream-state: field "state": "paused" is not "moving" or "still""#)
                ),
                (
                    #"{"type":"stream-state","id":1,"kind":"screen","state":"STILL"}"#,
                    SignalingError(.invalidField, #"stream-state: field "state": "STILL" is not "moving" or "still""#)
                ),
                (
                    #"{"type":"stream-state","id":1,"kind":"screen","state":1}"#,
                    SignalingError(.invalidField, #"stream-state: field "state" must be a string"#)
                ),
                (
                    #"{"type":"stream-state","id":1,"kind":"window","state":"still"}"#,
                    SignalingError(.invalidField, #"stream-state: field "kind": "window" is not "screen" or "camera""#)
                ),
                (
                    #"{"type":"stream-state","id":1,"kind":"screen"}"#,
                    SignalingError(.missingField, #"stream-state: missing field "state""#)
                ),
            ]
            for (line, expected) in cases {
                try await alice.send(line)
                let reply = try await alice.next()
                #expect(reply == ServerEnvelope(id: .number(1), .error(expected)), "\(line)")
                // A good line between the bad ones, so the garbage limit never closes the connection.
                #expect(try await alice.drainUntilBarrier().isEmpty)
            }
        }
    }

    @Test("the client library says a still state again after the server restarts")
    func stillAgainAfterRestart() async throws {
        var configuration = SignalingServerConfiguration()
        configuration.port = 0
        configuration.shutdownGracePeriod = .seconds(2)
        let first = try await SignalingServer.bind(configuration: configuration, logger: testLogger)
        let firstRun = Task { try await first.run() }
        let port = first.port
        let aliceSub = try Fixture.uid("alice_sub")

        let publisher = SignalingClient(configuration: clientConfiguration(port: port), logger: testLogger)
        let publisherEvents = EventRecorder(publisher)
        try await publisher.connect()
        try await publisher.join(room: try Fixture.room("r"), uid: aliceSub, role: .publisher)
        try await publisher.publish(Fixture.screen())
        let viewer = SignalingClient(configuration: clientConfiguration(port: port), logger: testLogger)
        let viewerEvents = EventRecorder(viewer)
        try await viewer.connect()
        try await viewer.join(room: try Fixture.room("r"), uid: try Fixture.uid("viewer"), role: .subscriber)

        try await publisher.setStreamState(.screen, .still)
        let (said, _) = try await viewerEvents.waitFor { event -> ServerMessage.StreamStateChanged? in
            if case .streamState(let change) = event { return change }
            return nil
        }
        #expect(said == .init(uid: aliceSub, kind: .screen, state: .still))

        first.triggerShutdown()
        try await firstRun.value
        configuration.port = port
        let second = try await SignalingServer.bind(configuration: configuration, logger: testLogger)
        let secondRun = Task { try await second.run() }
        _ = try await publisherEvents.waitFor { event -> ServerMessage.Joined? in
            if case .rejoined(let joined) = event { return joined }
            return nil
        }
        // The new server starts the re-published stream moving; the client says still again. The
        // viewer hears it as an event, or reads it in its own joined when it came back later
        // (waitFor throws when neither comes).
        _ = try await viewerEvents.waitFor { event -> String? in
            switch event {
            case .streamState(let change) where change == .init(uid: aliceSub, kind: .screen, state: .still):
                return "stream-state"
            case .rejoined(let joined) where joined.streams.contains { $0.uid == aliceSub && $0.state == .still }:
                return "joined"
            default:
                return nil
            }
        }

        await viewer.close()
        await publisher.close()
        second.triggerShutdown()
        try await secondRun.value
    }
}
