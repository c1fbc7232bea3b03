import Foundation
import Ingest
import Testing

/// A client that stops in the middle of a message must not keep the one capture slot (issue 22):
/// the message deadline ends its session with `timeout`, as the hello deadline does for a client
/// that never says hello. Silence between messages stays allowed.
struct StalledMessageTests {
    static func server() async throws -> TestServer {
        try await TestServer(configuration: IngestServerConfiguration(messageTimeout: .milliseconds(500)))
    }

    @Test func aMessageStalledHalfWayEndsTheSessionWithTimeoutAndFreesTheSlot() async throws {
        let host = try await Self.server()
        let client = try await IngestClient.connect(to: host.address, hello: Samples.captureHello)
        let message = try Samples.bytes(.video(try Samples.smallVideo(width: 64, height: 32)))
        let started = ContinuousClock.now
        try await client.sendRaw(Array(message[0..<(message.count / 2)]))
        let end = try #require(await client.waitForEnd(timeout: .seconds(10)))
        let waited = ContinuousClock.now - started
        #expect(end.reason == .timeout)
        #expect(
            end.message == "a message stalled: \(message.count / 2) bytes of it arrived and not the rest within 0.5 s",
            "\(end)"
        )
        #expect(waited >= .milliseconds(500), "ended after \(waited)")
        // The slot is free: the next client streams.
        let next = try await IngestClient.connect(to: host.address, hello: Samples.captureHello)
        try await next.send(.video(try Samples.smallVideo()))
        _ = try await host.recorder.waitFor("the next client's frame") { $0.first { $0.video != nil } }
        await next.finish()
    }

    @Test func silenceBetweenMessagesAndASlowlyCompletedMessageAreNotStalls() async throws {
        let host = try await Self.server()
        let client = try await IngestClient.connect(to: host.address, hello: Samples.captureHello)
        try await client.send(.video(try Samples.smallVideo(value: 1)))
        // Longer than the deadline between two whole messages: a paused broadcast sends nothing.
        try await Task.sleep(for: .milliseconds(900))
        // A message in two parts well within the deadline.
        let message = try Samples.bytes(.video(try Samples.smallVideo(value: 2)))
        try await client.sendRaw(Array(message[0..<20]))
        try await Task.sleep(for: .milliseconds(200))
        try await client.sendRaw(Array(message[20...]))
        try await Task.sleep(for: .milliseconds(900))
        #expect(await client.waitForEnd(timeout: .milliseconds(10)) == nil)
        let frames = try await host.recorder.waitFor("both frames") { events in
            let videos = events.compactMap(\.video)
            return videos.count == 2 ? videos : nil
        }
        #expect(frames.map(\.timestamp.value) == [1, 2])
        await client.finish()
    }
}
