import Foundation
import Logging
import SignalingAuth
import SignalingProtocol
import Synchronization
import Testing

@Suite("Tokens and logs")
struct AuthTests {
    static let secret = "s3cret-for-tests"

    private func join(port: Int, room: String, uid: String, token: String?) async throws -> ServerEnvelope {
        let client = try await LineClient.connect(port: port)
        defer { Task { await client.close() } }
        try await client.send(
            ClientRequest(
                id: .string("j"),
                .join(.init(room: try Fixture.room(room), uid: try Fixture.uid(uid), role: .publisher, token: token))
            )
        )
        return try await client.next()
    }

    private var now: Int64 { Int64(Date().timeIntervalSince1970) }

    @Test("with a secret, join needs a valid token for that room and uid")
    func tokens() async throws {
        try await withServer({ $0.secret = Self.secret }) { server in
            let room = try Fixture.room("room1")
            let alice = try Fixture.uid("alice")
            let valid = SignalingToken.make(room: room, uid: alice, expiry: now + 60, secret: Self.secret)
            guard
                case .joined(let joined) = try await join(port: server.port, room: "room1", uid: "alice", token: valid)
                    .message
            else {
                Issue.record("valid token refused")
                return
            }
            #expect(joined.uid == alice)

            let missing = try await join(port: server.port, room: "room1", uid: "bob", token: nil)
            #expect(
                missing
                    == ServerEnvelope(
                        id: .string("j"),
                        .error(
                            SignalingError(
                                .unauthorized,
                                "this server needs a token to join; make one with `rtc-signal token`"
                            )
                        )
                    )
            )

            let wrongSecret = SignalingToken.make(
                room: room,
                uid: try Fixture.uid("bob"),
                expiry: now + 60,
                secret: "not-the-secret"
            )
            #expect(
                try await join(port: server.port, room: "room1", uid: "bob", token: wrongSecret).message
                    == .error(
                        SignalingError(
                            .unauthorized,
                            #"token is not valid for room "room1" and uid "bob" (wrong secret, or made for another room or uid)"#
                        )
                    )
            )

            let otherRoom = SignalingToken.make(
                room: try Fixture.room("room2"),
                uid: try Fixture.uid("bob"),
                expiry: now + 60,
                secret: Self.secret
            )
            #expect(
                try await join(port: server.port, room: "room1", uid: "bob", token: otherRoom).message
                    == .error(
                        SignalingError(
                            .unauthorized,
                            #"token is not valid for room "room1" and uid "bob" (wrong secret, or made for another room or uid)"#
                        )
                    )
            )

            let otherUID = SignalingToken.make(room: room, uid: alice, expiry: now + 60, secret: Self.secret)
            guard
                case .error(let stolen) = try await join(
                    port: server.port,
                    room: "room1",
                    uid: "mallory",
                    token: otherUID
                ).message
            else {
                Issue.record("a token for alice admitted mallory")
                return
            }
            #expect(stolen.code == .unauthorized)

            let expiredAt = now - 5
            let expired = SignalingToken.make(
                room: room,
                uid: try Fixture.uid("bob"),
                expiry: expiredAt,
                secret: Self.secret
            )
            guard
                case .error(let expiredError) = try await join(
                    port: server.port,
                    room: "room1",
                    uid: "bob",
                    token: expired
                ).message
            else {
                Issue.record("expired token admitted")
                return
            }
            #expect(expiredError.code == .unauthorized)
            #expect(expiredError.message.hasPrefix("token expired at \(expiredAt) (Unix time)"))

            #expect(
                try await join(port: server.port, room: "room1", uid: "bob", token: "garbage").message
                    == .error(SignalingError(.unauthorized, "token is malformed: expected v1.<expiry>.<signature>"))
            )
        }
    }

    @Test("the server logs one line per join, publish and leave with room and uid, and never a secret")
    func logsWithoutSecrets() async throws {
        let captured = CapturedLog()
        var logger = Logger(label: "capture") { _ in CapturingLogHandler(log: captured) }
        logger.logLevel = .debug
        let token = SignalingToken.make(
            room: try Fixture.room("logged"),
            uid: try Fixture.uid("alice_sub"),
            expiry: now + 60,
            secret: Self.secret
        )
        var resume = ""
        try await withServer(logger: logger, { $0.secret = Self.secret }) { server in
            let (client, joined) = try await joinedLineClient(
                port: server.port,
                room: "logged",
                uid: "alice_sub",
                role: .publisher,
                token: token
            )
            resume = joined.resume
            try await client.send(ClientRequest(id: .number(1), .publish(.init(stream: Fixture.screen()))))
            _ = try await client.next()
            try await client.send(ClientRequest(id: .number(2), .leave))
            _ = try await client.next()
            await client.close()
        }
        let lines = captured.lines
        #expect(lines.contains("info join [role=publisher room=logged uid=alice_sub]"))
        #expect(lines.contains("info publish [kind=screen room=logged uid=alice_sub]"))
        #expect(lines.contains("info leave [reason=left room=logged uid=alice_sub]"))
        #expect(lines.filter { $0.hasPrefix("info join ") }.count == 1)
        for line in lines {
            #expect(!line.contains(Self.secret))
            #expect(!line.contains(token))
            #expect(!line.contains(resume))
        }
    }
}

final class CapturedLog: Sendable {
    private let storage = Mutex<[String]>([])

    func append(_ line: String) {
        storage.withLock { $0.append(line) }
    }

    var lines: [String] { storage.withLock { $0 } }
}

/// Formats each record as `level message [key=value ...]` with sorted metadata.
struct CapturingLogHandler: LogHandler {
    let log: CapturedLog
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        let fields = merged.keys.sorted().map { "\($0)=\(merged[$0].map { "\($0)" } ?? "")" }.joined(separator: " ")
        log.append("\(event.level) \(event.message)" + (fields.isEmpty ? "" : " [\(fields)]"))
    }
}
