import SignalingClient
import SignalingProtocol
import Testing

@Suite("Load")
struct LoadTests {
    static let clients = 1_000
    static let rooms = 100

    @Test("1000 clients joining 100 rooms at once all get joined")
    func thousandClients() async throws {
        try await withServer { server in
            let start = ContinuousClock.now
            let joined = try await withThrowingTaskGroup(of: (SignalingClient, ServerMessage.Joined).self) { group in
                for index in 0..<Self.clients {
                    group.addTask {
                        var configuration = clientConfiguration(port: server.port)
                        configuration.requestTimeout = .seconds(60)
                        configuration.connectTimeout = .seconds(60)
                        let client = SignalingClient(configuration: configuration, logger: testLogger)
                        try await client.connect()
                        let reply = try await client.join(
                            room: try Fixture.room("load-\(index % Self.rooms)"),
                            uid: try Fixture.uid("member-\(index)"),
                            role: index % 10 == 0 ? .publisher : .subscriber
                        )
                        return (client, reply)
                    }
                }
                var results: [(SignalingClient, ServerMessage.Joined)] = []
                for try await result in group { results.append(result) }
                return results
            }
            let elapsed = ContinuousClock.now - start
            print("load: \(Self.clients) clients joined \(Self.rooms) rooms in \(elapsed)")

            #expect(joined.count == Self.clients)
            #expect(Set(joined.map(\.1.uid)).count == Self.clients)
            #expect(Set(joined.map(\.1.room)).count == Self.rooms)
            // Each joiner saw everyone already in its room; the last one in each room saw all nine others.
            #expect(joined.map(\.1.members.count).max() == Self.clients / Self.rooms - 1)
            #expect(await server.connectionCount == Self.clients)

            await withTaskGroup(of: Void.self) { group in
                for (client, _) in joined {
                    group.addTask { await client.close() }
                }
            }
        }
    }
}
