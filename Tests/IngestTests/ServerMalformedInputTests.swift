import Ingest
import Testing

/// Every way a capture client can break the protocol ends that client's session with its reason
/// (sent to the client and reported to the host), and the host then serves the next client.
@Suite(.timeLimit(.minutes(1))) struct ServerMalformedInputTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var bytes: [UInt8]
        var reason: IngestEndReason
        var testDescription: String { name }
    }

    static let video = WireVectorTests.videoBytes

    static let midSessionCases: [Case] = [
        Case(name: "bad magic", bytes: patch(video, at: 0, [0x58]), reason: .malformedMessage),
        Case(name: "impossible length", bytes: patch(video, at: 8, le32(10)), reason: .malformedMessage),
        Case(
            name: "sizes disagree (header and fixed body only)",
            bytes: GarbageKind.sizeMismatch.bytes,
            reason: .malformedMessage
        ),
        Case(name: "stride below width", bytes: patch(video, at: 32, le32(3)), reason: .malformedMessage),
        Case(name: "width over the limit", bytes: patch(video, at: 28, le16(5000)), reason: .tooLarge),
        Case(name: "payload over the limit (header only)", bytes: GarbageKind.tooLarge.bytes, reason: .tooLarge),
        Case(name: "unknown type", bytes: GarbageKind.unknownType.bytes, reason: .unknownMessageType),
        Case(
            name: "NaN audio sample",
            bytes: patch(ParserErrorTests.floatAudio, at: 40, [0, 0, 0xC0, 0x7F]),
            reason: .malformedMessage
        ),
        Case(name: "a second hello", bytes: WireVectorTests.helloBytes, reason: .unexpectedMessage),
    ]

    @Test(arguments: midSessionCases)
    func badInputEndsTheSessionAndTheNextClientIsServed(_ input: Case) async throws {
        let host = try await TestServer()
        let connection = try await RawConnection.connect(host.address)
        let answer = try await connection.exchange(
            [try Samples.helloBytes(), try Samples.bytes(.video(try Samples.smallVideo())), input.bytes],
            waitingFor: [1]
        )
        #expect(answer.count == 2)
        #expect(answer.first?.hello?.role == .host)
        #expect(answer.last?.endReason == input.reason)
        let end = try await host.recorder.waitForSessionEnd()
        #expect(end.disconnectReason == input.reason)
        #expect(host.recorder.events.filter { $0.video != nil }.count == 1)
        #expect(host.server.statistics.protocolErrors == 1)

        try await expectAWellBehavedClientIsServed(host)
        await host.stop()
    }

    static let handshakeCases: [Case] = [
        Case(name: "media before the hello", bytes: video, reason: .unexpectedMessage),
        Case(
            name: "bad magic first",
            bytes: patch(WireVectorTests.helloBytes, at: 1, [0x00]),
            reason: .malformedMessage
        ),
        Case(
            name: "hello from a host",
            bytes: (try? Samples.helloBytes(role: .host)) ?? [],
            reason: .unexpectedMessage
        ),
        Case(name: "version mismatch", bytes: (try? Samples.helloBytes(version: 9)) ?? [], reason: .versionMismatch),
        Case(name: "unknown type first", bytes: GarbageKind.unknownType.bytes, reason: .unknownMessageType),
    ]

    @Test(arguments: handshakeCases)
    func aBadFirstMessageIsRefusedWithoutAHello(_ input: Case) async throws {
        let host = try await TestServer()
        let connection = try await RawConnection.connect(host.address)
        let answer = try await connection.exchange([input.bytes])
        #expect(answer.count == 1)
        #expect(answer.first?.endReason == input.reason)
        #expect(host.server.statistics.rejectedConnections == 1)
        try await expectAWellBehavedClientIsServed(host)
        // A refused connection never became a session: the host saw only the good client.
        #expect(host.recorder.events.first?.summary == "connected(test-capture)")
        await host.stop()
    }

    private func expectAWellBehavedClientIsServed(_ host: TestServer) async throws {
        let client = try await IngestClient.connect(to: host.address, hello: Samples.captureHello)
        try await client.send(.video(try Samples.smallVideo(value: 99)))
        try await client.send(.audio(Samples.smallAudio()))
        _ = try await host.recorder.waitFor("the good client's audio") { events in
            events.last { $0.audio != nil }
        }
        let frame = host.recorder.events.last { $0.video != nil }?.video
        #expect(frame?.timestamp.value == 99)
        await client.finish()
    }
}
