import SignalingClient
import SignalingProtocol
import SignalingServer
import Testing

@Suite("Client library")
struct ClientLibraryTests {
    /// A connected, joined client and its event recorder.
    private func joinedClient(
        port: Int,
        room: String,
        uid: String,
        role: Role
    ) async throws -> (SignalingClient, EventRecorder, ServerMessage.Joined) {
        let client = SignalingClient(configuration: clientConfiguration(port: port), logger: testLogger)
        let events = EventRecorder(client)
        try await client.connect()
        let joined = try await client.join(room: try Fixture.room(room), uid: try Fixture.uid(uid), role: role)
        return (client, events, joined)
    }

    @Test("publisher and subscriber: subscribe, the request reaches the publisher, its SDP comes back")
    func publishSubscribeAnswer() async throws {
        try await withServer { server in
            let (publisher, publisherEvents, _) = try await joinedClient(
                port: server.port,
                room: "123456",
                uid: "alice_sub",
                role: .publisher
            )
            try await publisher.publish(Fixture.screen())
            let (subscriber, subscriberEvents, joined) = try await joinedClient(
                port: server.port,
                room: "123456",
                uid: "viewer",
                role: .subscriber
            )
            let aliceSub = try Fixture.uid("alice_sub")
            #expect(joined.streams == [PublishedStream(uid: aliceSub, description: Fixture.screen())])
            #expect(joined.members.first?.owner == (try Fixture.uid("alice")))

            async let answered = subscriber.subscribe(to: aliceSub, receive: Fixture.receive(port: 7000))
            let (request, skipped) = try await publisherEvents.waitFor { event -> ServerMessage.SubscribeRequest? in
                if case .subscribeRequest(let request) = event { return request }
                return nil
            }
            #expect(skipped == [.memberJoined(Member(uid: try Fixture.uid("viewer"), role: .subscriber))])
            #expect(
                request
                    == .init(subscriber: try Fixture.uid("viewer"), kind: .screen, receive: Fixture.receive(port: 7000))
            )
            try await publisher.answer(request, sdp: Fixture.answerSDP(for: "viewer"))
            #expect(
                try await answered == .init(publisher: aliceSub, kind: .screen, sdp: Fixture.answerSDP(for: "viewer"))
            )

            // Signals travel both ways with the sender filled in.
            try await subscriber.signal(to: aliceSub, payload: .object(["want": .string("keyframe")]))
            let (signal, _) = try await publisherEvents.waitFor { event -> ServerMessage.Signal? in
                if case .signal(let signal) = event { return signal }
                return nil
            }
            #expect(signal == .init(from: try Fixture.uid("viewer"), payload: .object(["want": .string("keyframe")])))
            #expect(try await subscriber.ping() >= .zero)

            // The subscriber leaves: the publisher is told to stop sending.
            await subscriber.close()
            #expect(
                try await publisherEvents.next()
                    == .subscriberLeft(
                        .init(subscriber: try Fixture.uid("viewer"), kind: .screen, reason: .subscriberLeft)
                    )
            )
            #expect(
                try await publisherEvents.next() == .memberLeft(.init(uid: try Fixture.uid("viewer"), reason: .left))
            )
            let subscriberTail = try await subscriberEvents.waitFor { $0 == .closed(nil) ? true : nil }
            #expect(subscriberTail.skipped.isEmpty)
            await publisher.close()
        }
    }

    @Test("a rejected subscribe throws subscribe-rejected with the publisher's reason")
    func rejected() async throws {
        try await withServer { server in
            let (publisher, publisherEvents, _) = try await joinedClient(
                port: server.port,
                room: "r",
                uid: "pub",
                role: .publisher
            )
            try await publisher.publish(Fixture.camera)
            let (subscriber, _, _) = try await joinedClient(port: server.port, room: "r", uid: "sub", role: .subscriber)
            let outcome = Task {
                try await subscriber.subscribe(to: try Fixture.uid("pub"), kind: .camera, receive: Fixture.receive())
            }
            let (request, _) = try await publisherEvents.waitFor { event -> ServerMessage.SubscribeRequest? in
                if case .subscribeRequest(let request) = event { return request }
                return nil
            }
            try await publisher.reject(request, reason: "no common crypto suite")
            await #expect(
                throws: SignalingError(.subscribeRejected, #""pub" rejected the subscribe: no common crypto suite"#)
            ) {
                _ = try await outcome.value
            }
            await #expect(throws: SignalingError(.notPublishing, #""pub" does not publish a screen stream"#)) {
                _ = try await subscriber.subscribe(
                    to: try Fixture.uid("pub"),
                    kind: .screen,
                    receive: Fixture.receive()
                )
            }
            await #expect(throws: SignalingError(.noSuchMember, #"no member "ghost" in room "r""#)) {
                _ = try await subscriber.subscribe(to: try Fixture.uid("ghost"), receive: Fixture.receive())
            }
            await subscriber.close()
            await publisher.close()
        }
    }

    @Test("a publisher that drops while a subscribe waits: the subscribe fails with publisher-gone")
    func publisherGoneWhilePending() async throws {
        try await withServer { server in
            let (publisher, _) = try await joinedLineClient(port: server.port, room: "r", uid: "pub", role: .publisher)
            try await publisher.send(ClientRequest(.publish(.init(stream: Fixture.screen()))))
            _ = try await publisher.next()
            let (subscriber, events, _) = try await joinedClient(
                port: server.port,
                room: "r",
                uid: "sub",
                role: .subscriber
            )
            let outcome = Task {
                try await subscriber.subscribe(to: try Fixture.uid("pub"), receive: Fixture.receive())
            }
            // Wait until the request reached the publisher, then drop it.
            var sawRequest = false
            while !sawRequest {
                if case .subscribeRequest = try await publisher.next().message { sawRequest = true }
            }
            await publisher.close()
            await #expect(
                throws: SignalingError(
                    .publisherGone,
                    #""pub" left the room before answering the subscribe to its screen stream"#
                )
            ) {
                _ = try await outcome.value
            }
            #expect(try await events.next() == .streamUnpublished(.init(uid: try Fixture.uid("pub"), kind: .screen)))
            #expect(try await events.next() == .memberLeft(.init(uid: try Fixture.uid("pub"), reason: .disconnected)))
            await subscriber.close()
        }
    }

    @Test("requests without a connection fail clearly; connecting to nothing fails at once")
    func notConnected() async throws {
        let client = SignalingClient(configuration: clientConfiguration(port: 1), logger: testLogger)
        await #expect(throws: SignalingError(.notConnected, "join: not connected to the server")) {
            try await client.join(room: try Fixture.room("r"), uid: try Fixture.uid("u"), role: .subscriber)
        }
        do {
            try await client.connect()
            Issue.record("connected to port 1")
        } catch let error as SignalingError {
            #expect(error.code == .connectionFailed)
            #expect(error.message.hasPrefix("cannot connect to 127.0.0.1:1: "))
        }
        await client.close()
    }

    @Test("server restart: clients rejoin on their own, republish, and renew their subscription")
    func serverRestart() async throws {
        var configuration = SignalingServerConfiguration()
        configuration.port = 0
        configuration.shutdownGracePeriod = .seconds(2)
        let first = try await SignalingServer.bind(configuration: configuration, logger: testLogger)
        let firstRun = Task { try await first.run() }
        let port = first.port

        let (publisher, publisherEvents, _) = try await joinedClient(
            port: port,
            room: "r",
            uid: "alice_sub",
            role: .publisher
        )
        try await publisher.publish(Fixture.screen())
        let (subscriber, subscriberEvents, _) = try await joinedClient(
            port: port,
            room: "r",
            uid: "viewer",
            role: .subscriber
        )
        let aliceSub = try Fixture.uid("alice_sub")
        let viewer = try Fixture.uid("viewer")

        async let subscribed = subscriber.subscribe(to: aliceSub, receive: Fixture.receive())
        let (request, _) = try await publisherEvents.waitFor { event -> ServerMessage.SubscribeRequest? in
            if case .subscribeRequest(let request) = event { return request }
            return nil
        }
        try await publisher.answer(request, sdp: Fixture.answerSDP(for: "first"))
        #expect(try await subscribed.sdp == Fixture.answerSDP(for: "first"))

        // The server goes away: both clients hear goodbye and start reconnecting.
        first.triggerShutdown()
        try await firstRun.value
        for events in [publisherEvents, subscriberEvents] {
            let goodbye = try await events.waitFor { event -> ServerMessage.Goodbye? in
                if case .goodbye(let goodbye) = event { return goodbye }
                return nil
            }
            #expect(goodbye.match.reason == .serverShutdown)
            let next = try await events.next()
            guard case .disconnected(let error) = next else {
                Issue.record("expected disconnected, got \(next)")
                continue
            }
            #expect(error.message == "the server said goodbye (server-shutdown): the server is shutting down")
            guard case .reconnecting(attempt: 1, _) = try await events.next() else {
                Issue.record("no reconnect attempt")
                continue
            }
        }

        // A new server on the same port: everybody is back within the backoff.
        configuration.port = port
        let second = try await SignalingServer.bind(configuration: configuration, logger: testLogger)
        let secondRun = Task { try await second.run() }
        let (rejoined, _) = try await publisherEvents.waitFor { event -> ServerMessage.Joined? in
            if case .rejoined(let joined) = event { return joined }
            return nil
        }
        #expect(rejoined.uid == aliceSub)

        // The subscriber asks again by itself once the stream is back; the publisher answers anew.
        let (renewal, _) = try await publisherEvents.waitFor { event -> ServerMessage.SubscribeRequest? in
            if case .subscribeRequest(let request) = event { return request }
            return nil
        }
        #expect(renewal == .init(subscriber: viewer, kind: .screen, receive: Fixture.receive()))
        try await publisher.answer(renewal, sdp: Fixture.answerSDP(for: "second"))
        let (renewed, skipped) = try await subscriberEvents.waitFor { event -> ServerMessage.Subscribed? in
            if case .subscribed(let subscribed) = event { return subscribed }
            return nil
        }
        #expect(renewed == .init(publisher: aliceSub, kind: .screen, sdp: Fixture.answerSDP(for: "second")))
        #expect(skipped.contains { if case .rejoined = $0 { true } else { false } })

        await subscriber.close()
        await publisher.close()
        second.triggerShutdown()
        try await secondRun.value
    }
}
