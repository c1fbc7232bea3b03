import Foundation
import Ingest
import Media
import ProcessSupport
import Testing

@testable import MediaPipeline

/// The pieces between the ingest socket and the encoder that decide what is kept: the frame
/// rate cap, the latest-wins mailbox, the timing histogram, the allocator setting.
@Suite struct IngestPathTests {
    static let interval: UInt64 = 1_000_000_000 / 30

    @Test("a source at the stream's rate passes whole, jitter and all")
    func sameRatePasses() {
        var limiter = FrameRateLimiter(framesPerSecond: 30)
        let jitter: [Int64] = [0, 9_000_000, -7_000_000, 12_000_000, -12_000_000, 3_000_000]
        var kept = 0
        for index in 0..<300 {
            let time = Int64(5_000_000_000) + Int64(index) * Int64(Self.interval) + jitter[index % jitter.count]
            if limiter.admit(UInt64(time)) { kept += 1 }
        }
        #expect(kept == 300)
    }

    @Test("60 fps keeps every other frame; a flood keeps 30 a second", arguments: [60, 240, 1000])
    func fasterSourcesAreThinned(rate: Int) {
        var limiter = FrameRateLimiter(framesPerSecond: 30)
        let step = 1_000_000_000 / UInt64(rate)
        var kept: [UInt64] = []
        for index in 0..<(rate * 4) {
            let time = 1_000_000_000 + UInt64(index) * step
            if limiter.admit(time) { kept.append(time) }
        }
        #expect((118...121).contains(kept.count), "\(kept.count) kept of \(rate * 4)")
        let gaps = zip(kept.dropFirst(), kept).map { $0 - $1 }
        #expect(gaps.allSatisfy { $0 >= Self.interval / 2 }, "no two kept frames closer than half an interval")
    }

    @Test("the first frame after a pause is kept and the cadence restarts from it")
    func gapRestarts() {
        var limiter = FrameRateLimiter(framesPerSecond: 30)
        for index in 0..<30 { _ = limiter.admit(UInt64(index) * Self.interval) }
        let resume: UInt64 = 30 * Self.interval + 2_000_000_000
        let decisions = [resume, resume + Self.interval / 4, resume + Self.interval].map { limiter.admit($0) }
        #expect(decisions == [true, false, true])
    }

    @Test("the mailbox keeps the newest picture and counts the ones it replaced")
    func mailboxLatestWins() throws {
        let mailbox = IngestMailbox(audioLimit: 4)
        for index: UInt64 in 0..<5 { mailbox.put(.video(try Self.picture(index))) }
        guard case .event(.video(let newest)) = mailbox.take(until: 0) else {
            Issue.record("no picture")
            return
        }
        #expect(newest.arrival == 4)
        #expect(mailbox.dropped.video == 4)
        guard case .timedOut = mailbox.take(until: 0) else {
            Issue.record("more than one picture was kept")
            return
        }
    }

    @Test("control events keep their place after the picture before them; audio is bounded")
    func mailboxOrder() throws {
        let mailbox = IngestMailbox(audioLimit: 2)
        mailbox.put(.video(try Self.picture(1)))
        mailbox.put(.paused)
        for index in 0..<3 { mailbox.put(.audio(try Self.chunk(UInt64(index)))) }
        mailbox.put(.resumed)
        var order: [String] = []
        while case .event(let event) = mailbox.take(until: 0) {
            switch event {
            case .video(let v): order.append("video \(v.arrival)")
            case .audio(let a): order.append("audio \(a.arrival)")
            case .paused: order.append("paused")
            case .resumed: order.append("resumed")
            default: order.append("other")
            }
        }
        #expect(order == ["video 1", "paused", "audio 1", "audio 2", "resumed"])
        #expect(mailbox.dropped.audio == 1)
        mailbox.close()
        guard case .closed = mailbox.take(until: .max) else {
            Issue.record("a closed, empty mailbox must say so at once")
            return
        }
    }

    @Test("percentiles from the histogram")
    func histogram() {
        var histogram = LatencyHistogram()
        #expect(histogram.summary == nil)
        for ms in 1...100 { histogram.record(nanoseconds: UInt64(ms) * 1_000_000) }
        histogram.record(nanoseconds: 250_000_000)  // Past the last bucket: kept as the maximum.
        let summary = histogram.summary
        // Upper bucket edges: within 10 µs above the true value, never below it.
        #expect(summary.map { $0.p50 >= 51 && $0.p50 <= 51.01 } == true, "\(String(describing: summary))")
        #expect(summary.map { $0.p99 >= 100 && $0.p99 <= 100.01 } == true, "\(String(describing: summary))")
        #expect(summary?.max == 250)
    }

    @Test("two threads' histograms merge into one: counts add, the maximum is the larger")
    func histogramMerge() throws {
        var sender = LatencyHistogram()
        var media = LatencyHistogram()
        for ms in 1...50 { sender.record(nanoseconds: UInt64(ms) * 1_000_000) }
        for ms in 51...100 { media.record(nanoseconds: UInt64(ms) * 1_000_000) }
        media.record(nanoseconds: 150_000_000)
        var merged = sender
        merged.merge(media)
        merged.merge(LatencyHistogram())
        #expect(merged.count == 101)
        let summary = try #require(merged.summary)
        #expect(summary.p50 >= 51 && summary.p50 <= 51.01, "\(summary)")
        #expect(summary.max == 150)
    }

    @Test("the allocator keeps picture-sized buffers in their own mappings")
    func allocatorSetting() {
        #expect(FrameMemory.keepLargeBuffersMapped())
    }

    static func picture(_ arrival: UInt64) throws -> IngestVideoEvent {
        IngestVideoEvent(
            frame: RawVideoFrame(try VideoFrame(width: 16, height: 16)),
            timestamp: IngestTimestamp(value: Int64(arrival), timescale: 1000),
            arrival: arrival,
            discontinuity: false
        )
    }

    static func chunk(_ arrival: UInt64) throws -> IngestAudioEvent {
        IngestAudioEvent(
            chunk: try AudioChunk(samples: [0, 0], sampleRate: 48_000, channels: 2, captureTime: arrival),
            source: .app,
            sampleFormat: .f32,
            timestamp: IngestTimestamp(value: Int64(arrival), timescale: 48_000),
            arrival: arrival,
            discontinuity: false
        )
    }
}
