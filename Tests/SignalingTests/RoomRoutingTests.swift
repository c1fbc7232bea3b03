import SignalingProtocol
import Testing

/// Two publishers and three subscribers in two rooms, over raw sockets: every event reaches
/// exactly the members who should see it, in order, and nothing crosses between rooms.
@Suite("Room routing")
struct RoomRoutingTests {
    @Test("events reach exactly the right members, in order")
    func twoRoomsFiveMembers() async throws {
        try await withServer { server in
            let r1 = try Fixture.room("r1")
            let r2 = try Fixture.room("r2")
            let aliceSub = try Fixture.uid("alice_sub")
            let bob = try Fixture.uid("bob")
            let carol = try Fixture.uid("carol")
            let dave = try Fixture.uid("dave")
            let erin = try Fixture.uid("erin")
            let screenStream = PublishedStream(uid: aliceSub, description: Fixture.screen())
            let cameraStream = PublishedStream(uid: dave, description: Fixture.camera)

            // Publisher alice_sub (alice's screen share companion) opens r1.
            let (alice, aliceJoined) = try await joinedLineClient(
                port: server.port,
                room: "r1",
                uid: "alice_sub",
                role: .publisher
            )
            #expect(aliceJoined.room == r1)
            #expect(aliceJoined.owner == (try Fixture.uid("alice")))
            #expect(aliceJoined.members.isEmpty && aliceJoined.streams.isEmpty)

            let (bobClient, bobJoined) = try await joinedLineClient(
                port: server.port,
                room: "r1",
                uid: "bob",
                role: .subscriber
            )
            #expect(bobJoined.members == [Member(uid: aliceSub, role: .publisher)])
            #expect(bobJoined.members.first?.owner == (try Fixture.uid("alice")))
            #expect(
                try await alice.next()
                    == ServerEnvelope(.memberJoined(.init(member: Member(uid: bob, role: .subscriber))))
            )

            let (daveClient, _) = try await joinedLineClient(
                port: server.port,
                room: "r2",
                uid: "dave",
                role: .publisher
            )
            let (erinClient, erinJoined) = try await joinedLineClient(
                port: server.port,
                room: "r2",
                uid: "erin",
                role: .subscriber
            )
            #expect(erinJoined.members == [Member(uid: dave, role: .publisher)])
            #expect(
                try await daveClient.next()
                    == ServerEnvelope(.memberJoined(.init(member: Member(uid: erin, role: .subscriber))))
            )

            // alice_sub publishes; only bob (r1) hears of it.
            try await alice.send(ClientRequest(id: .string("pub"), .publish(.init(stream: Fixture.screen()))))
            #expect(try await alice.next() == ServerEnvelope(id: .string("pub"), .ack(.init(of: "publish"))))
            #expect(try await bobClient.next() == ServerEnvelope(.streamPublished(.init(stream: screenStream))))

            // carol joins late and is told the members and the stream already there.
            let (carolClient, carolJoined) = try await joinedLineClient(
                port: server.port,
                room: "r1",
                uid: "carol",
                role: .subscriber
            )
            #expect(
                carolJoined.members == [Member(uid: aliceSub, role: .publisher), Member(uid: bob, role: .subscriber)]
            )
            #expect(carolJoined.streams == [screenStream])
            let carolArrived = ServerEnvelope(.memberJoined(.init(member: Member(uid: carol, role: .subscriber))))
            #expect(try await alice.next() == carolArrived)
            #expect(try await bobClient.next() == carolArrived)

            // dave publishes a camera in r2; only erin hears of it.
            try await daveClient.send(ClientRequest(id: .number(1), .publish(.init(stream: Fixture.camera))))
            #expect(try await daveClient.next() == ServerEnvelope(id: .number(1), .ack(.init(of: "publish"))))
            #expect(try await erinClient.next() == ServerEnvelope(.streamPublished(.init(stream: cameraStream))))

            // bob subscribes without naming the kind: alice_sub's only stream, the screen.
            try await bobClient.send(
                ClientRequest(
                    id: .string("s1"),
                    .subscribe(.init(publisher: aliceSub, receive: Fixture.receive(port: 6000)))
                )
            )
            #expect(
                try await alice.next()
                    == ServerEnvelope(
                        .subscribeRequest(.init(subscriber: bob, kind: .screen, receive: Fixture.receive(port: 6000)))
                    )
            )
            try await alice.send(
                ClientRequest(
                    id: .string("a1"),
                    .subscribeAnswer(.init(subscriber: bob, kind: .screen, sdp: Fixture.answerSDP(for: "bob")))
                )
            )
            #expect(try await alice.next() == ServerEnvelope(id: .string("a1"), .ack(.init(of: "subscribe-answer"))))
            #expect(
                try await bobClient.next()
                    == ServerEnvelope(
                        id: .string("s1"),
                        .subscribed(.init(publisher: aliceSub, kind: .screen, sdp: Fixture.answerSDP(for: "bob")))
                    )
            )

            // erin asks dave for the camera; dave refuses; erin's subscribe fails with dave's reason.
            try await erinClient.send(
                ClientRequest(
                    id: .string("s2"),
                    .subscribe(.init(publisher: dave, kind: .camera, receive: Fixture.receive()))
                )
            )
            #expect(
                try await daveClient.next()
                    == ServerEnvelope(
                        .subscribeRequest(.init(subscriber: erin, kind: .camera, receive: Fixture.receive()))
                    )
            )
            try await daveClient.send(
                ClientRequest(
                    id: .number(2),
                    .subscribeReject(.init(subscriber: erin, kind: .camera, reason: "no common crypto suite"))
                )
            )
            #expect(try await daveClient.next() == ServerEnvelope(id: .number(2), .ack(.init(of: "subscribe-reject"))))
            #expect(
                try await erinClient.next()
                    == ServerEnvelope(
                        id: .string("s2"),
                        .error(
                            SignalingError(
                                .subscribeRejected,
                                #""dave" rejected the subscribe: no common crypto suite"#
                            )
                        )
                    )
            )

            // A relayed signal carries the sender the server saw.
            try await erinClient.send(
                ClientRequest(id: .number(3), .signal(.init(to: dave, payload: .object(["pli": .bool(true)]))))
            )
            #expect(try await erinClient.next() == ServerEnvelope(id: .number(3), .ack(.init(of: "signal"))))
            #expect(
                try await daveClient.next()
                    == ServerEnvelope(.signal(.init(from: erin, payload: .object(["pli": .bool(true)]))))
            )

            // carol's subscribe is still waiting for alice_sub when alice_sub's connection drops.
            try await carolClient.send(
                ClientRequest(
                    id: .string("s3"),
                    .subscribe(.init(publisher: aliceSub, kind: .screen, receive: Fixture.receive()))
                )
            )
            #expect(
                try await alice.next()
                    == ServerEnvelope(
                        .subscribeRequest(.init(subscriber: carol, kind: .screen, receive: Fixture.receive()))
                    )
            )
            await alice.close()
            let streamGone = ServerEnvelope(.streamUnpublished(.init(uid: aliceSub, kind: .screen)))
            let aliceGone = ServerEnvelope(.memberLeft(.init(uid: aliceSub, reason: .disconnected)))
            #expect(
                try await bobClient.next()
                    == ServerEnvelope(.unsubscribed(.init(publisher: aliceSub, kind: .screen, reason: .publisherLeft)))
            )
            #expect(try await bobClient.next() == streamGone)
            #expect(try await bobClient.next() == aliceGone)
            #expect(
                try await carolClient.next()
                    == ServerEnvelope(
                        id: .string("s3"),
                        .error(
                            SignalingError(
                                .publisherGone,
                                #""alice_sub" left the room before answering the subscribe to its screen stream"#
                            )
                        )
                    )
            )
            #expect(try await carolClient.next() == streamGone)
            #expect(try await carolClient.next() == aliceGone)

            // bob leaves; carol is told, r2 is not.
            try await bobClient.send(ClientRequest(id: .number(4), .leave))
            #expect(try await bobClient.next() == ServerEnvelope(id: .number(4), .ack(.init(of: "leave"))))
            #expect(try await carolClient.next() == ServerEnvelope(.memberLeft(.init(uid: bob, reason: .left))))

            // Nobody got anything else: r2 saw nothing of r1 and vice versa.
            for client in [bobClient, carolClient, daveClient, erinClient] {
                #expect(try await client.drainUntilBarrier() == [])
            }
            #expect(r2 != r1)
            for client in [bobClient, carolClient, daveClient, erinClient] {
                await client.close()
            }
        }
    }

    @Test("a subscriber that goes away is reported to its publisher so it stops sending")
    func subscriberDrop() async throws {
        try await withServer { server in
            let (publisher, _) = try await joinedLineClient(
                port: server.port,
                room: "room",
                uid: "pub",
                role: .publisher
            )
            try await publisher.send(ClientRequest(id: .number(1), .publish(.init(stream: Fixture.screen()))))
            #expect(try await publisher.next() == ServerEnvelope(id: .number(1), .ack(.init(of: "publish"))))

            let (viewer, _) = try await joinedLineClient(
                port: server.port,
                room: "room",
                uid: "viewer",
                role: .subscriber
            )
            let viewerID = try Fixture.uid("viewer")
            #expect(
                try await publisher.next()
                    == ServerEnvelope(.memberJoined(.init(member: Member(uid: viewerID, role: .subscriber))))
            )
            try await viewer.send(
                ClientRequest(
                    id: .number(1),
                    .subscribe(.init(publisher: try Fixture.uid("pub"), receive: Fixture.receive()))
                )
            )
            #expect(
                try await publisher.next()
                    == ServerEnvelope(
                        .subscribeRequest(.init(subscriber: viewerID, kind: .screen, receive: Fixture.receive()))
                    )
            )
            try await publisher.send(
                ClientRequest(
                    .subscribeAnswer(.init(subscriber: viewerID, kind: .screen, sdp: Fixture.answerSDP(for: "viewer")))
                )
            )
            #expect(try await publisher.next() == ServerEnvelope(.ack(.init(of: "subscribe-answer"))))
            #expect(
                try await viewer.next().message
                    == .subscribed(
                        .init(publisher: try Fixture.uid("pub"), kind: .screen, sdp: Fixture.answerSDP(for: "viewer"))
                    )
            )

            await viewer.close()
            #expect(
                try await publisher.next()
                    == ServerEnvelope(
                        .subscriberLeft(.init(subscriber: viewerID, kind: .screen, reason: .subscriberLeft))
                    )
            )
            #expect(
                try await publisher.next() == ServerEnvelope(.memberLeft(.init(uid: viewerID, reason: .disconnected)))
            )
            #expect(try await publisher.drainUntilBarrier() == [])
            await publisher.close()
        }
    }

    @Test("unsubscribe and unpublish tell the other side, and the answers stay consistent")
    func unsubscribeAndUnpublish() async throws {
        try await withServer { server in
            let pubID = try Fixture.uid("pub")
            let viewerID = try Fixture.uid("viewer")
            let (publisher, _) = try await joinedLineClient(
                port: server.port,
                room: "room",
                uid: "pub",
                role: .publisher
            )
            try await publisher.send(ClientRequest(.publish(.init(stream: Fixture.screen()))))
            try await publisher.send(ClientRequest(.publish(.init(stream: Fixture.camera))))
            #expect(try await publisher.next().message == .ack(.init(of: "publish")))
            #expect(try await publisher.next().message == .ack(.init(of: "publish")))
            let (viewer, joined) = try await joinedLineClient(
                port: server.port,
                room: "room",
                uid: "viewer",
                role: .subscriber
            )
            #expect(joined.streams.map(\.kind) == [.screen, .camera])
            _ = try await publisher.next()

            // Two streams: a subscribe must say which.
            try await viewer.send(
                ClientRequest(id: .number(1), .subscribe(.init(publisher: pubID, receive: Fixture.receive())))
            )
            #expect(
                try await viewer.next()
                    == ServerEnvelope(
                        id: .number(1),
                        .error(
                            SignalingError(
                                .invalidField,
                                #"subscribe: field "kind" is required: "pub" publishes camera and screen"#
                            )
                        )
                    )
            )
            for kind in [StreamKind.screen, .camera] {
                try await viewer.send(
                    ClientRequest(
                        id: .string(kind.rawValue),
                        .subscribe(.init(publisher: pubID, kind: kind, receive: Fixture.receive()))
                    )
                )
                #expect(
                    try await publisher.next().message
                        == .subscribeRequest(.init(subscriber: viewerID, kind: kind, receive: Fixture.receive()))
                )
                try await publisher.send(
                    ClientRequest(.subscribeAnswer(.init(subscriber: viewerID, kind: kind, sdp: Fixture.screenSDP)))
                )
                #expect(try await publisher.next().message == .ack(.init(of: "subscribe-answer")))
                #expect(
                    try await viewer.next()
                        == ServerEnvelope(
                            id: .string(kind.rawValue),
                            .subscribed(.init(publisher: pubID, kind: kind, sdp: Fixture.screenSDP))
                        )
                )
            }

            try await viewer.send(ClientRequest(id: .number(2), .unsubscribe(.init(publisher: pubID, kind: .camera))))
            #expect(try await viewer.next() == ServerEnvelope(id: .number(2), .ack(.init(of: "unsubscribe"))))
            #expect(
                try await publisher.next().message
                    == .subscriberLeft(.init(subscriber: viewerID, kind: .camera, reason: .unsubscribed))
            )

            try await publisher.send(ClientRequest(id: .number(3), .unpublish(.init(kind: .screen))))
            #expect(try await publisher.next() == ServerEnvelope(id: .number(3), .ack(.init(of: "unpublish"))))
            #expect(
                try await viewer.next().message
                    == .unsubscribed(.init(publisher: pubID, kind: .screen, reason: .streamUnpublished))
            )
            #expect(try await viewer.next().message == .streamUnpublished(.init(uid: pubID, kind: .screen)))

            // Nothing is left to unsubscribe from.
            try await viewer.send(ClientRequest(id: .number(4), .unsubscribe(.init(publisher: pubID))))
            #expect(
                try await viewer.next()
                    == ServerEnvelope(
                        id: .number(4),
                        .error(SignalingError(.noSuchSubscription, #"no subscription to "pub""#))
                    )
            )
            #expect(try await viewer.drainUntilBarrier() == [])
            #expect(try await publisher.drainUntilBarrier() == [])
            await viewer.close()
            await publisher.close()
        }
    }
}
