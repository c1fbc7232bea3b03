import Logging
import NIOSSL
import SignalingClient
import SignalingProtocol
import SignalingServer
import Testing

/// Quiet by default; set SIGNAL_TEST_LOGS=1 to see the server's log on stderr.
let testLogger: Logger = {
    var logger = Logger(label: "signal-test")
    logger.logLevel = .critical
    return logger
}()

/// Runs a real server on a free loopback port for the duration of `body`, then shuts it down
/// gracefully and waits for it to finish, whether `body` succeeded or not.
func withServer<Result>(
    logger: Logger = testLogger,
    _ configure: (inout SignalingServerConfiguration) -> Void = { _ in },
    _ body: (SignalingServer) async throws -> Result
) async throws -> Result {
    var configuration = SignalingServerConfiguration()
    configuration.host = "127.0.0.1"
    configuration.port = 0
    configuration.shutdownGracePeriod = .seconds(2)
    configure(&configuration)
    let server = try await SignalingServer.bind(configuration: configuration, logger: logger)
    let running = Task { try await server.run() }
    do {
        let result = try await body(server)
        server.triggerShutdown()
        try await running.value
        return result
    } catch {
        server.triggerShutdown()
        _ = await running.result
        throw error
    }
}

/// A raw client that already joined; returns it with the `joined` reply.
func joinedLineClient(
    port: Int,
    room: String,
    uid: String,
    role: Role,
    token: String? = nil
) async throws -> (LineClient, ServerMessage.Joined) {
    let client = try await LineClient.connect(port: port)
    try await client.send(
        ClientRequest(
            id: .string("join-\(uid)"),
            .join(
                .init(room: try RoomID(validating: room), uid: try MemberID(validating: uid), role: role, token: token)
            )
        )
    )
    let reply = try await client.next()
    guard case .joined(let joined) = reply.message, reply.id == .string("join-\(uid)") else {
        throw TestFailure("join of \(uid) got \(reply)")
    }
    return (client, joined)
}

/// A raw client joined as publisher `uid` whose screen stream (``Fixture/screen(_:)``) is published.
func publishingLineClient(port: Int, room: String, uid: String) async throws -> LineClient {
    let (client, _) = try await joinedLineClient(port: port, room: room, uid: uid, role: .publisher)
    let id = RequestID.string("publish-\(uid)")
    try await client.send(ClientRequest(id: id, .publish(.init(stream: Fixture.screen()))))
    let reply = try await client.next()
    guard reply == ServerEnvelope(id: id, .ack(.init(of: "publish"))) else {
        throw TestFailure("publish of \(uid) got \(reply)")
    }
    return client
}

func clientConfiguration(port: Int) -> SignalingClient.Configuration {
    var configuration = SignalingClient.Configuration(host: "127.0.0.1", port: port)
    configuration.reconnect.initialDelay = .milliseconds(50)
    configuration.reconnect.maximumDelay = .milliseconds(400)
    configuration.requestTimeout = .seconds(10)
    configuration.answerTimeout = .seconds(10)
    return configuration
}
