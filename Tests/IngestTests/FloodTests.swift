import Foundation
import Ingest
import Media
import Testing

extension RealTimeTests {
    /// A capture client sending far faster than the host consumes: the host drops video (keeping the
    /// newest), never queues more than its limit, and memory stays bounded.
    @Suite(.timeLimit(.minutes(1))) struct FloodTests {
        /// Peak resident set size of this process so far, in kB (`VmHWM` in /proc/self/status).
        static func peakResidentKilobytes() -> Int? {
            guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
            let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }
            return line?.split(separator: " ").dropFirst().first.flatMap { Int($0) }
        }

        @Test func aFloodingClientIsDroppedNotQueued() async throws {
            let before = Self.peakResidentKilobytes()
            let host = try await TestServer(consumerDelay: .milliseconds(50), keepPlanes: 0)
            var writer = try FullRangeNV12Writer(width: 886, height: 1920)
            let screen = try SyntheticScreenSource(width: 886, height: 1920)
            try writer.write(screen.videoFrame(index: 0, captureTime: 0))
            let frame = try writer.frame(captureTime: 0)
            let client = try await IngestClient.connect(to: host.address, hello: Samples.captureHello)
            let start = ContinuousClock.now
            var sent = 0
            var audioSent = 0
            while ContinuousClock.now - start < .seconds(2) {
                sent += 1
                try await client.send(
                    .video(IngestVideo(frame: frame, timestamp: IngestTimestamp(value: Int64(sent), timescale: 30)))
                )
                if sent % 4 == 0 {
                    try await client.send(.audio(Samples.smallAudio()))
                    audioSent += 1
                }
            }
            await client.finish()
            _ = try await host.recorder.waitForSessionEnd()
            let statistics = host.server.statistics
            let received = host.recorder.events.compactMap(\.video)
            let after = Self.peakResidentKilobytes()

            #expect(statistics.videoFramesIn == sent)
            #expect(statistics.videoFramesDropped > 0)
            #expect(statistics.peakQueuedVideoFrames <= host.server.configuration.videoQueueLimit)
            #expect(received.count + statistics.videoFramesDropped == sent)
            // Keep the newest: what the consumer saw is in order and ends with the last frame sent.
            #expect(received.map(\.timestamp.value) == received.map(\.timestamp.value).sorted())
            #expect(received.last?.timestamp.value == Int64(sent))
            // Audio is small and fits its queue here: none of it was dropped.
            #expect(statistics.audioChunksIn == audioSent)
            #expect(statistics.audioChunksDropped == 0)
            print(
                "flood: \(sent) frames of 886x1920 NV12 (\(statistics.bytesIn / 1_000_000) MB) in 2 s, "
                    + "\(received.count) consumed, \(statistics.videoFramesDropped) dropped, peak queue "
                    + "\(statistics.peakQueuedVideoFrames); VmHWM \(before ?? -1) kB before, \(after ?? -1) kB after"
            )
            await host.stop()
        }
    }
}
