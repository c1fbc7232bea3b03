import Foundation
import Ingest
import Media
import Testing

/// The host side over real sockets: handshake, events, ends in both directions.
@Suite(.timeLimit(.minutes(1))) struct ServerSessionTests {
    @Test func helloMediaAndControlArriveInOrder() async throws {
        let host = try await TestServer()
        let client = try await IngestClient.connect(to: host.address, hello: Samples.captureHello)
        #expect(client.hostHello == IngestHello(role: .host, capabilities: .all, name: "rtc-publish"))
        let video = try Samples.smallVideo(value: 42)
        try await client.send(.video(video))
        try await client.send(.audio(Samples.smallAudio()))
        try await client.send(.control(.pause))
        try await client.send(.control(.resume))
        await client.finish(reason: .captureFinished, message: "user stopped")
        let end = try await host.recorder.waitForSessionEnd()
        let events = host.recorder.events
        #expect(
            events.map(\.summary) == [
                "connected(test-capture)", "video", "audio(mic)", "paused", "resumed",
                "ended(capture-finished: user stopped)",
            ]
        )
        guard case .ended = end else {
            Issue.record("expected ended, got \(end.summary)")
            return
        }
        let received = try #require(events[1].video)
        #expect(received.frame.planes == video.frame.planes)
        #expect(received.frame.format == .nv12FullRange)
        #expect(received.timestamp == IngestTimestamp(value: 42, timescale: 30))
        #expect(received.frame.captureTime == received.arrival)
        #expect(received.arrival > 0 && received.arrival <= MonotonicClock.now())
        let audio = try #require(events[2].audio)
        #expect(audio.chunk.samples == [0, 100.0 / 32768, -100.0 / 32768, 0])
        #expect(audio.chunk.sampleRate == 32_000 && audio.source == .mic && audio.sampleFormat == .s16)
        let statistics = host.server.statistics
        #expect(statistics.sessions == 1)
        #expect(statistics.videoFramesIn == 1 && statistics.audioChunksIn == 1)
        #expect(statistics.protocolErrors == 0)
        let bytes = try Samples.bytes(.video(video)).count + Samples.bytes(.audio(Samples.smallAudio())).count + 3 * 30
        #expect(statistics.bytesIn == bytes + "user stopped".utf8.count)
        await host.stop()
    }

    @Test func versionMismatchIsAnsweredWithItsReason() async throws {
        let host = try await TestServer()
        let connection = try await RawConnection.connect(host.address)
        let answer = try await connection.exchange([try Samples.helloBytes(version: 7)])
        #expect(answer.count == 1)
        #expect(answer.first?.endReason == .versionMismatch)
        #expect(
            answer.first?.endText == "hello.version at byte 24: the peer speaks protocol version 7; this side speaks 1"
        )
        // The host keeps listening: a client of the right version gets in.
        let client = try await IngestClient.connect(to: host.address, hello: Samples.captureHello)
        try await client.send(.video(try Samples.smallVideo()))
        _ = try await host.recorder.waitFor("a frame") { $0.first { $0.video != nil } }
        await client.finish()
        #expect(host.server.statistics.rejectedConnections == 1)
        #expect(host.server.statistics.protocolErrors == 1)
        #expect(host.recorder.events.first?.summary == "connected(test-capture)")
        await host.stop()
    }

    @Test func theClientLibraryReportsARefusal() async throws {
        let host = try await TestServer()
        do {
            _ = try await IngestClient.connect(
                to: host.address,
                hello: IngestHello(version: 2, role: .capture, capabilities: .all, name: "future")
            )
            Issue.record("a version 2 hello was accepted")
        } catch {
            #expect(error.code == .refused)
            #expect(error.endReason == .versionMismatch)
            #expect(
                error.message.contains("version-mismatch: hello.version at byte 24: the peer speaks protocol version 2")
            )
        }
        await host.stop()
    }

    @Test func aSecondClientIsTurnedAwayWhileTheFirstStreams() async throws {
        let host = try await TestServer()
        let first = try await IngestClient.connect(to: host.address, hello: Samples.captureHello)
        do {
            _ = try await IngestClient.connect(to: host.address, hello: Samples.captureHello)
            Issue.record("a second client got in")
        } catch {
            #expect(error.endReason == .busy, "\(error)")
        }
        try await first.send(.video(try Samples.smallVideo()))
        _ = try await host.recorder.waitFor("the first client's frame") { $0.first { $0.video != nil } }
        #expect(first.hostEnd == nil)
        await first.finish()
        _ = try await host.recorder.waitForSessionEnd()
        #expect(host.recorder.events.filter { $0.summary.hasPrefix("connected") }.count == 1)
        #expect(host.server.statistics.rejectedConnections == 1)
        // Once the first is gone, the slot is free again.
        let next = try await IngestClient.connect(to: host.address, hello: Samples.captureHello)
        await next.finish()
        await host.stop()
    }

    @Test func aSilentConnectionTimesOut() async throws {
        let host = try await TestServer(configuration: IngestServerConfiguration(helloTimeout: .milliseconds(200)))
        let connection = try await RawConnection.connect(host.address)
        let answer = try await connection.exchange([])
        #expect(answer.map(\.endReason) == [.timeout])
        #expect(host.server.statistics.rejectedConnections == 1)
        await host.stop()
    }

    @Test func theHostCanEndTheSession() async throws {
        let host = try await TestServer()
        #expect(!host.server.endSession())
        let client = try await IngestClient.connect(to: host.address, hello: Samples.captureHello)
        _ = try await host.recorder.waitFor("connected") { $0.first }
        #expect(host.server.endSession(reason: .requestedByHost, message: "presenter stopped sharing"))
        let end = await client.waitForEnd(timeout: .seconds(5))
        #expect(end == IngestSessionEnd(reason: .requestedByHost, message: "presenter stopped sharing"))
        let event = try await host.recorder.waitForSessionEnd()
        #expect(event.disconnectReason == .requestedByHost)
        await host.stop()
    }

    @Test func aDroppedConnectionIsReportedAndFreesTheSlot() async throws {
        let host = try await TestServer()
        let client = try await IngestClient.connect(to: host.address, hello: Samples.captureHello)
        try await client.send(.video(try Samples.smallVideo()))
        await client.close()
        let event = try await host.recorder.waitForSessionEnd()
        #expect(event.disconnectReason == .disconnected)
        let again = try await IngestClient.connect(to: host.address, hello: Samples.captureHello)
        await again.finish()
        _ = try await host.recorder.waitForSessionEnd(number: 2)
        #expect(host.server.statistics.sessions == 2)
        await host.stop()
    }

    @Test func shutdownEndsTheSessionAndRemovesTheSocket() async throws {
        let host = try await TestServer()
        guard case .unix(let path) = host.address else {
            Issue.record("expected a unix address")
            return
        }
        #expect(FileManager.default.fileExists(atPath: path))
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let client = try await IngestClient.connect(to: host.address, hello: Samples.captureHello)
        await host.stop()
        #expect(await client.waitForEnd(timeout: .seconds(5))?.reason == .hostShutdown)
        #expect(host.recorder.isFinished)
        #expect(host.recorder.events.last?.disconnectReason == .hostShutdown)
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func runningTwiceReturnsAtOnce() async throws {
        let host = try await TestServer()
        // A session proves the first run() is serving; the second call must not take over.
        let client = try await IngestClient.connect(to: host.address, hello: Samples.captureHello)
        await host.server.run()
        try await client.send(.video(try Samples.smallVideo()))
        await client.finish()
        _ = try await host.recorder.waitForSessionEnd()
        await host.stop()
    }

    @Test func tcpOnLoopbackWorksToo() async throws {
        let host = try await TestServer(address: .tcp(host: "127.0.0.1", port: 0))
        guard case .tcp(_, let port) = host.address else {
            Issue.record("expected a tcp address")
            return
        }
        #expect(port > 0)
        let client = try await IngestClient.connect(to: host.address, hello: Samples.captureHello)
        try await client.send(.audio(Samples.smallAudio(source: .app)))
        _ = try await host.recorder.waitFor("audio") { $0.first { $0.audio != nil } }
        await client.finish()
        await host.stop()
    }
}
