import Foundation
import Media
import SystemAudio
import TestSupport
import Testing

/// System audio against a private PulseAudio daemon (`PulseServer`): null sinks with module-sine
/// tones in them, captured through their monitors. Serialized: each test runs a daemon and two
/// real-time streams, and the machine is shared.
@Suite(.serialized)
struct SystemAudioCaptureTests {
    /// Two sinks with a tone each: 440 Hz into "app", 1 kHz into "micsink".
    private func toneServer() throws -> PulseServer {
        let pulse = try PulseServer()
        try addTones(pulse)
        return pulse
    }

    private func addTones(_ pulse: PulseServer) throws {
        try pulse.addNullSink("app")
        try pulse.addNullSink("micsink")
        try pulse.playTone(sink: "app", hertz: 440)
        try pulse.playTone(sink: "micsink", hertz: 1000)
    }

    @Test func capturesTwoNamedMonitors() throws {
        let pulse = try toneServer()
        let capture = try SystemAudioCapture(
            SystemAudioConfiguration(server: pulse.server, app: "app.monitor", mic: "micsink.monitor")
        )
        capture.start()
        try waitForAudio(capture)
        let run = Collected(capture, seconds: 1.5)
        try checkTones(run, capture)
        #expect(capture.serverDescription.hasPrefix("PulseAudio 16"), "\(capture.serverDescription)")
        #expect(capture.serverDescription.contains(pulse.socketPath), "\(capture.serverDescription)")
        capture.stop()
        capture.stop()
        #expect(capture.statistics[.app]?.state == "stopped")
    }

    @Test func capturesTheDefaults() throws {
        let pulse = try toneServer()
        try pulse.setDefaults(sink: "app", source: "micsink.monitor")
        let capture = try SystemAudioCapture(SystemAudioConfiguration(server: pulse.server))
        capture.start()
        try waitForAudio(capture)
        let run = Collected(capture, seconds: 1.5)
        try checkTones(run, capture)
        let statistics = capture.statistics
        #expect(statistics[.app]?.name == "app.monitor")
        #expect(statistics[.mic]?.name == "micsink.monitor")
        #expect(capture.drainEvents() == [])
    }

    /// With only an output, PulseAudio makes its monitor the default source: that is no mic.
    @Test func noDefaultInputIsNoMic() throws {
        let pulse = try PulseServer()
        try pulse.addNullSink("app")
        try pulse.playTone(sink: "app", hertz: 440)
        try pulse.setDefaults(sink: "app", source: "app.monitor")
        let capture = try SystemAudioCapture(SystemAudioConfiguration(server: pulse.server))
        let events = capture.drainEvents()
        #expect(events.count == 1)
        #expect(events.first?.hasPrefix("mic: no default input") == true, "\(events)")
        #expect(events.first?.hasSuffix("sending app audio only") == true, "\(events)")
        capture.start()
        try waitForAudio(capture, from: [.app])
        let run = Collected(capture, seconds: 0.5)
        #expect(run.frames[.mic, default: 0] == 0)
        #expect(run.frames[.app, default: 0] > 0)
        #expect(capture.statistics[.mic] == nil)
        #expect(capture.statistics[.app]?.name == "app.monitor")
    }

    @Test func noServerIsServerUnreachable() throws {
        let started = Date()
        do {
            _ = try SystemAudioCapture(SystemAudioConfiguration(server: "unix:/nonexistent/native"))
            Issue.record("connected to unix:/nonexistent/native")
        } catch {
            #expect(error.code == .serverUnreachable)
            #expect(error.message.contains("unix:/nonexistent/native"), "\(error)")
        }
        #expect(Date().timeIntervalSince(started) < 10)
    }

    @Test func unknownSourceIsNoSuchSource() throws {
        let pulse = try toneServer()
        do {
            _ = try SystemAudioCapture(SystemAudioConfiguration(server: pulse.server, app: "nosuch", mic: nil))
            Issue.record("opened a source named nosuch")
        } catch {
            #expect(error.code == .noSuchSource)
            #expect(error.message.contains("nosuch"), "\(error)")
            #expect(error.message.contains("app.monitor"), "\(error)")
            #expect(error.message.contains("micsink.monitor"), "\(error)")
        }
    }

    @Test func survivesAServerRestart() throws {
        let pulse = try toneServer()
        let capture = try SystemAudioCapture(
            SystemAudioConfiguration(server: pulse.server, app: "app.monitor", mic: "micsink.monitor")
        )
        capture.start()
        try waitForAudio(capture)
        let before = Collected(capture, seconds: 0.5)
        #expect(before.frames[.app, default: 0] > 0)
        #expect(before.frames[.mic, default: 0] > 0)
        _ = capture.drainEvents()

        pulse.crash()
        var events: [String] = []
        try waitUntil(seconds: 5, "both sources silent") {
            events += capture.drainEvents()
            return capture.statistics.values.allSatisfy { $0.state != "capturing" }
        }
        #expect(events.contains { $0.hasPrefix("app: source gone") }, "\(events)")
        #expect(events.contains { $0.hasPrefix("mic: source gone") }, "\(events)")
        capture.drain { _, _ in }
        let silent = Collected(capture, seconds: 1.5)
        #expect(silent.frames.values.reduce(0, +) == 0)
        events += capture.drainEvents()
        // One line per change, however many retries went by.
        #expect(events.count <= 4, "\(events)")

        try pulse.restart()
        try addTones(pulse)
        var again = Collected()
        try waitUntil(seconds: 10, "chunks from both sources again") {
            again.add(capture)
            return again.frames[.app, default: 0] >= 9600 && again.frames[.mic, default: 0] >= 9600
        }
        events += capture.drainEvents()
        #expect(events.contains("app: capturing again"), "\(events)")
        #expect(events.contains("mic: capturing again"), "\(events)")
        #expect(capture.statistics[.app]?.state == "capturing")
        let after = Collected(capture, seconds: 1)
        #expect(after.amplitude(.app, hertz: 440) > 0.3)
        #expect(after.amplitude(.mic, hertz: 1000) > 0.3)
    }

    // MARK: - Checks

    private func checkTones(_ run: Collected, _ capture: SystemAudioCapture) throws {
        for source in AudioSource.allCases {
            let seconds = Double(run.frames[source, default: 0]) / 48_000
            #expect(seconds > 1.0 && seconds < 2.0, "\(source): \(seconds) s of audio in 1.5 s")
            #expect(run.backwards[source, default: 0] == 0, "\(source): capture times went back")
            let ahead = Double(run.worstAhead[source, default: 0]) / 1e6
            #expect(ahead < 50, "\(source): a chunk ended \(ahead) ms after it was drained")
            let lag = Double(run.worstLag[source, default: 0]) / 1e6
            #expect(lag < 200, "\(source): a chunk ended \(lag) ms before it was drained")
        }
        let app440 = run.amplitude(.app, hertz: 440)
        let app1k = run.amplitude(.app, hertz: 1000)
        let mic440 = run.amplitude(.mic, hertz: 440)
        let mic1k = run.amplitude(.mic, hertz: 1000)
        #expect(app440 > 0.3 && app1k < app440 / 30, "app: 440 Hz \(app440), 1 kHz \(app1k)")
        #expect(mic1k > 0.3 && mic440 < mic1k / 30, "mic: 440 Hz \(mic440), 1 kHz \(mic1k)")
        let statistics = capture.statistics
        for source in AudioSource.allCases {
            let entry = try #require(statistics[source])
            #expect(entry.state == "capturing")
            // module-sine: amplitude 0.5, -6 dBFS.
            #expect(entry.levelDBFS > -9 && entry.levelDBFS < -3, "\(source): \(entry.levelDBFS) dBFS")
            // A monitor's latency hovers around 0 and goes a few ms negative: its sink renders ahead.
            #expect(
                entry.latencyMilliseconds != 0 && abs(entry.latencyMilliseconds) < 100,
                "\(source): latency \(entry.latencyMilliseconds) ms"
            )
            #expect(entry.chunks > 0)
            #expect(entry.overruns == 0)
        }
    }

    /// Until each of `sources` delivered something and settled, drained and dropped. A null
    /// sink's monitor first delivers after up to the sink's 2 s block, then a backlog (samples
    /// ~0.7 s old, the stream's latency says so) faster than real time, then steady.
    private func waitForAudio(_ capture: SystemAudioCapture, from sources: Set<AudioSource> = [.app, .mic]) throws {
        var heard: Set<AudioSource> = []
        try waitUntil(seconds: 10, "steady audio from \(sources)") {
            capture.drain { source, _ in heard.insert(source) }
            let statistics = capture.statistics
            return heard.isSuperset(of: sources)
                && sources.allSatisfy { abs(statistics[$0]?.latencyMilliseconds ?? 1000) < 50 }
        }
    }

    private func waitUntil(seconds: Double, _ what: String, _ condition: () throws -> Bool) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while try !condition() {
            guard Date() < deadline else { throw InteropFailure("\(what) did not happen within \(seconds) s") }
            usleep(20_000)
        }
    }
}

/// What a media thread drained: the left channel of each source, and how its capture times
/// behaved against the monotonic clock at the moment of each drain.
struct Collected {
    var left: [AudioSource: [Float]] = [:]
    var frames: [AudioSource: Int] = [:]
    var backwards: [AudioSource: Int] = [:]
    /// Longest time a chunk's last sample lay after its drain (a monitor renders ahead), in ns.
    var worstAhead: [AudioSource: UInt64] = [:]
    /// Longest time between a chunk's last sample and its drain, in ns.
    var worstLag: [AudioSource: UInt64] = [:]
    private var last: [AudioSource: UInt64] = [:]

    init() {}

    /// Drains every 20 ms for `seconds`.
    init(_ capture: SystemAudioCapture, seconds: Double) {
        let end = MonotonicClock.now() + UInt64(seconds * 1e9)
        while MonotonicClock.now() < end {
            add(capture)
            usleep(20_000)
        }
    }

    mutating func add(_ capture: SystemAudioCapture) {
        let now = MonotonicClock.now()
        capture.drain { source, chunk in
            #expect(chunk.sampleRate == 48_000 && chunk.channels == 2)
            if let previous = last[source], chunk.captureTime <= previous { backwards[source, default: 0] += 1 }
            last[source] = chunk.captureTime
            let end = chunk.captureTime + chunk.duration
            worstAhead[source] = max(worstAhead[source, default: 0], end > now ? end - now : 0)
            worstLag[source] = max(worstLag[source, default: 0], now > end ? now - end : 0)
            frames[source, default: 0] += chunk.frameCount
            left[source, default: []].append(
                contentsOf: stride(from: 0, to: chunk.samples.count, by: 2).map { chunk.samples[$0] }
            )
        }
    }

    /// The amplitude of `hertz` in the last 0.5 s of a source (Goertzel).
    func amplitude(_ source: AudioSource, hertz: Double) -> Double {
        let samples = (left[source] ?? []).suffix(24_000)
        guard !samples.isEmpty else { return 0 }
        let coefficient = 2 * cos(2 * Double.pi * hertz / 48_000)
        var s1 = 0.0
        var s2 = 0.0
        for sample in samples {
            let s0 = Double(sample) + coefficient * s1 - s2
            s2 = s1
            s1 = s0
        }
        let power = s1 * s1 + s2 * s2 - coefficient * s1 * s2
        return 2 * power.squareRoot() / Double(samples.count)
    }
}
