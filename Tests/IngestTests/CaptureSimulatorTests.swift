import Ingest
import Media
import RTP
import Testing

extension RealTimeTests {
    /// rtc-capture-sim's library entry against an in-process server, in real time. Serialized: each
    /// run renders a 886x1920 picture 30 times a second.
    @Suite(.serialized, .timeLimit(.minutes(1))) struct CaptureSimulatorTests {
        /// True when `step` ns is a whole number of 1/30 s frame periods, to the nanosecond the
        /// simulator's integer schedule rounds to.
        static func isWholeFrames(_ step: Int64) -> Bool {
            let frames = (step * 30 + 500_000_000) / 1_000_000_000
            return frames >= 1 && abs(step * 30 - frames * 1_000_000_000) <= 30
        }

        func options(_ host: TestServer, duration: Double) -> CaptureSimulatorOptions {
            CaptureSimulatorOptions(address: host.address, duration: duration)
        }

        @Test func streamsPortraitNV12AndBothAudioSources() async throws {
            let host = try await TestServer(keepPlanes: 1)
            let summary = try await CaptureSimulator.run(options(host, duration: 2), logger: quietLogger)
            let end = try await host.recorder.waitForSessionEnd()
            #expect(summary.completed && summary.connections == 1 && summary.hostEnd == nil)
            guard case .ended(let ending) = end else {
                Issue.record("expected the capture to end the session, got \(end.summary)")
                return
            }
            #expect(ending == IngestSessionEnd(reason: .captureFinished, message: "broadcast finished"))

            let frames = host.recorder.events.compactMap(\.video)
            let statistics = host.server.statistics
            #expect(frames.count + statistics.videoFramesDropped == summary.videoFramesSent)
            #expect(summary.videoFramesSent >= 10)
            for frame in frames {
                #expect(frame.frame.format == .nv12FullRange)
                #expect(frame.frame.width == 886 && frame.frame.height == 1920)
                #expect(frame.frame.strides == [896, 896])
                #expect(frame.timestamp.timescale == 1_000_000_000)
            }
            // Capture timestamps step by whole frame periods of 1/30 s (more than one only where the
            // simulator skipped frames it could not render in time).
            let values = frames.map(\.timestamp.value)
            let steps = zip(values.dropFirst(), values).map { $0 - $1 }
            #expect(steps.allSatisfy(Self.isWholeFrames))
            if summary.videoFramesSkipped == 0, statistics.videoFramesDropped == 0 {
                #expect(steps.allSatisfy { abs($0 - 33_333_333) <= 1 })
            }

            // The picture is the synthetic screen: the host's conversion reads its timecode back.
            let first = try #require(frames.first)
            let upright = try VideoConverter().convert(first.frame, width: 886, height: 1920)
            let timecode = try #require(TimecodeStrip.decode(luma: upright.y, width: 886, height: 1920))
            #expect(timecode.frame == 0)
            #expect(timecode.timeMs == UInt32(truncatingIfNeeded: first.timestamp.value / 1_000_000))

            let app = host.recorder.events.compactMap(\.audio).filter { $0.source == .app }
            let mic = host.recorder.events.compactMap(\.audio).filter { $0.source == .mic }
            #expect(app.count == summary.appChunksSent && mic.count == summary.micChunksSent)
            #expect(app.count >= 40 && mic.count >= 30)
            #expect(
                app.allSatisfy { $0.chunk.sampleRate == 44_100 && $0.chunk.channels == 2 && $0.sampleFormat == .s16 }
            )
            #expect(
                mic.allSatisfy { $0.chunk.sampleRate == 32_000 && $0.chunk.channels == 1 && $0.sampleFormat == .f32 }
            )
            for chunks in [app, mic] {
                let sizes = chunks.map(\.chunk.frameCount)
                #expect(Array(sizes.prefix(6)) == [1024, 940, 1100, 1024, 940, 1100])
                // Sample-accurate timestamps in the source's own rate: each chunk starts where the last ended.
                let starts = chunks.map(\.timestamp.value)
                #expect(zip(starts.dropFirst(), starts).map { $0 - $1 } == sizes.dropLast().map(Int64.init))
                #expect(chunks.allSatisfy { Int($0.timestamp.timescale) == $0.chunk.sampleRate })
            }
            let span = Double((frames.last?.arrival ?? 0) - first.arrival) / 1e9
            print(
                "capture-sim: \(summary); \(frames.count) frames arrived over \(span) s "
                    + "(\(span > 0 ? Double(frames.count - 1) / span : 0) fps)"
            )
            await host.stop()
        }

        @Test func bogusTimestampsArriveAsSentAndTheSanitizerIgnoresThem() async throws {
            let host = try await TestServer(keepPlanes: 0)
            var options = options(host, duration: 1.5)
            options.bogusTimestamps = true
            options.audioSources = []
            let summary = try await CaptureSimulator.run(options, logger: quietLogger)
            _ = try await host.recorder.waitForSessionEnd()
            let frames = host.recorder.events.compactMap(\.video)
            #expect(frames.count == summary.videoFramesSent)
            // Exactly the seed's stamps: CMTimeMake(frameTime += 1000, 1000).
            #expect(
                frames.map(\.timestamp)
                    == (1...frames.count).map { IngestTimestamp(value: Int64($0) * 1000, timescale: 1000) }
            )

            // Downstream, the clock rules refuse a second per frame and keep arrival spacing (~30 fps).
            var sanitizer = CaptureTimestampSanitizer()
            let outputs = frames.map {
                sanitizer.sanitize(value: $0.timestamp.value, timescale: $0.timestamp.timescale, arrival: $0.arrival)
            }
            #expect(!sanitizer.isLocked && sanitizer.statistics.locks == 0)
            #expect(sanitizer.statistics.accepted == 0)
            for (output, frame) in zip(outputs, frames) {
                #expect(output.captureTime >= frame.arrival && output.captureTime - frame.arrival < 1_000_000)
            }
            await host.stop()
        }

        @Test func pauseSendsNothingAndResumeShowsTheGap() async throws {
            let host = try await TestServer(keepPlanes: 0)
            var options = options(host, duration: 2.2)
            options.pauseAt = 0.6
            options.resumeAt = 1.4
            _ = try await CaptureSimulator.run(options, logger: quietLogger)
            _ = try await host.recorder.waitForSessionEnd()
            let events = host.recorder.events
            let paused = try #require(events.firstIndex { $0.summary == "paused" })
            let resumed = try #require(events.firstIndex { $0.summary == "resumed" })
            #expect(paused < resumed)
            #expect(events[(paused + 1)..<resumed].isEmpty)
            let before = try #require(events[..<paused].last { $0.video != nil }?.video)
            let after = try #require(events[resumed...].first { $0.video != nil }?.video)
            #expect(after.discontinuity)
            // Real time went on: the capture timestamps show a gap of at least the pause.
            #expect(after.timestamp.value - before.timestamp.value >= 700_000_000)
            for source in [AudioSource.app, .mic] {
                let first = events[resumed...].first { $0.audio?.source == source }?.audio
                #expect(first?.discontinuity == true)
            }
            #expect(host.server.statistics.videoFramesDroppedWhilePaused == 0)
            await host.stop()
        }

        @Test func aDroppedConnectionReconnectsAndContinues() async throws {
            let host = try await TestServer(keepPlanes: 0)
            var options = options(host, duration: 2)
            options.disconnectAt = 0.7
            options.reconnectDelay = 0.2
            let summary = try await CaptureSimulator.run(options, logger: quietLogger)
            #expect(summary.connections == 2 && summary.completed)
            _ = try await host.recorder.waitForSessionEnd(number: 2)
            let events = host.recorder.events
            let lost = try #require(events.firstIndex { $0.disconnectReason == .disconnected })
            #expect(events[lost + 1].summary == "connected(rtc-capture-sim)")
            if case .ended = events.last {} else { Issue.record("the second session did not end properly") }
            let before = try #require(events[..<lost].last { $0.video != nil }?.video)
            let after = try #require(events[lost...].first { $0.video != nil }?.video)
            #expect(after.timestamp.value > before.timestamp.value)
            #expect(after.discontinuity)
            #expect(host.server.statistics.sessions == 2)
            await host.stop()
        }

        @Test(arguments: GarbageKind.allCases)
        func garbageIsAnsweredWithItsReason(_ kind: GarbageKind) async throws {
            let host = try await TestServer(keepPlanes: 0)
            var options = options(host, duration: 5)
            options.garbage = kind
            options.audioSources = []
            let summary = try await CaptureSimulator.run(options, logger: quietLogger)
            #expect(summary.hostEnd?.reason == kind.expectedReason)
            #expect(!summary.completed && summary.videoFramesSent == 1)
            let end = try await host.recorder.waitForSessionEnd()
            #expect(end.disconnectReason == kind.expectedReason)

            // The host carries on: a well-behaved capture streams and finishes.
            var next = self.options(host, duration: 0.5)
            (next.width, next.height) = (320, 568)
            let good = try await CaptureSimulator.run(next, logger: quietLogger)
            #expect(good.completed && good.videoFramesSent > 0)
            if case .ended = try await host.recorder.waitForSessionEnd(number: 2) {
            } else {
                Issue.record("the second session did not end properly")
            }
            await host.stop()
        }

        @Test func theHostEndingTheSessionStopsTheSimulator() async throws {
            let host = try await TestServer(keepPlanes: 0)
            var options = options(host, duration: 10)
            (options.width, options.height) = (320, 568)
            let run = Task { try await CaptureSimulator.run(options, logger: quietLogger) }
            _ = try await host.recorder.waitFor("a frame") { $0.first { $0.video != nil } }
            host.server.endSession(reason: .requestedByHost, message: "presenter stopped sharing")
            let summary = try await run.value
            #expect(summary.hostEnd == IngestSessionEnd(reason: .requestedByHost, message: "presenter stopped sharing"))
            #expect(!summary.completed)
            await host.stop()
        }

        @Test func badOptionsAreRefusedBeforeConnecting() async {
            var options = CaptureSimulatorOptions(address: .unix(path: "/nonexistent/x.sock"), duration: 1)
            options.resumeAt = 0.5
            do {
                _ = try await CaptureSimulator.run(options, logger: quietLogger)
                Issue.record("accepted --resume-at without --pause-at")
            } catch {
                #expect(error.code == .invalidOption)
                #expect(error.message == "--resume-at needs --pause-at")
            }
        }
    }
}
