import Media
import Testing

@testable import Ingest

/// The bounded queue between sessions and the host's consumer, without sockets.
@Suite struct EventQueueTests {
    static func video(_ index: Int) throws -> IngestVideoEvent {
        let video = try Samples.smallVideo(value: Int64(index))
        return IngestVideoEvent(frame: video.frame, timestamp: video.timestamp, arrival: 0, discontinuity: false)
    }

    static func audio(_ index: Int) throws -> IngestAudioEvent {
        let chunk = try AudioChunk(samples: [0, 0], sampleRate: 48_000, channels: 1, captureTime: UInt64(index))
        return IngestAudioEvent(
            chunk: chunk,
            source: .app,
            sampleFormat: .f32,
            timestamp: .none,
            arrival: 0,
            discontinuity: false
        )
    }

    @Test func videoKeepsTheNewestFrames() async throws {
        let queue = IngestEventQueue(limits: .init(video: 2, audio: 8, other: 8))
        for index in 1...5 { queue.pushVideo(try Self.video(index)) }
        var statistics = IngestStatistics()
        queue.addCounters(to: &statistics)
        #expect(statistics.videoFramesDropped == 3)
        #expect(statistics.queuedVideoFrames == 2)
        #expect(statistics.peakQueuedVideoFrames == 2)
        let first = await queue.next()
        let second = await queue.next()
        #expect(first?.video?.timestamp.value == 4)
        #expect(second?.video?.timestamp.value == 5)
    }

    @Test func audioDropsTheOldestAndKeepsOrderWithOtherEvents() async throws {
        let queue = IngestEventQueue(limits: .init(video: 2, audio: 3, other: 8))
        await queue.push(.paused)
        for index in 1...5 { queue.pushAudio(try Self.audio(index)) }
        await queue.push(.resumed)
        var order: [String] = []
        for _ in 0..<5 {
            switch await queue.next() {
            case .paused: order.append("paused")
            case .resumed: order.append("resumed")
            case .audio(let audio): order.append("audio \(audio.chunk.captureTime)")
            default: order.append("other")
            }
        }
        #expect(order == ["paused", "audio 3", "audio 4", "audio 5", "resumed"])
        var statistics = IngestStatistics()
        queue.addCounters(to: &statistics)
        #expect(statistics.audioChunksDropped == 2)
        #expect(statistics.peakQueuedAudioChunks == 3)
    }

    @Test func otherEventsWaitForRoomInsteadOfBeingDropped() async throws {
        let queue = IngestEventQueue(limits: .init(video: 1, audio: 1, other: 4))
        for _ in 0..<4 { await queue.push(.paused) }
        let fifth = Task {
            await queue.push(.resumed)
            return true
        }
        // The producer is parked until the consumer takes one.
        for _ in 0..<4 { #expect(await queue.next()?.summary == "paused") }
        #expect(await fifth.value)
        #expect(await queue.next()?.summary == "resumed")
    }

    @Test func aWaitingConsumerGetsTheNextEventAndFinishEndsTheSequence() async throws {
        let queue = IngestEventQueue(limits: .init(video: 1, audio: 1, other: 4))
        let consumer = Task { () -> [String] in
            var seen: [String] = []
            for await event in IngestEvents(queue: queue) { seen.append(event.summary) }
            return seen
        }
        await queue.push(.connected(Samples.captureHello))
        queue.pushVideo(try Self.video(1))
        await queue.push(.disconnected(IngestSessionEnd(reason: .disconnected, message: "")))
        queue.finish()
        let seen = await consumer.value
        #expect(seen == ["connected(test-capture)", "video", "disconnected(disconnected)"])
    }

    @Test func cancellingTheConsumerEndsItsWait() async {
        let queue = IngestEventQueue(limits: .init(video: 1, audio: 1, other: 4))
        let consumer = Task { await queue.next() }
        consumer.cancel()
        #expect(await consumer.value == nil)
    }
}
