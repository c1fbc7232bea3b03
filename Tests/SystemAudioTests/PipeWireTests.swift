import Foundation
import Media
import SystemAudio
import TestSupport
import Testing

/// System audio against a private PipeWire's pulse server (`PipeWireServer`: pipewire,
/// WirePlumber, pipewire-pulse): the same null sinks and tones as against PulseAudio
/// (SystemAudioCaptureTests), captured through their monitors with the same checks.
/// Serialized: each test runs four daemons and real-time streams, and the machine is shared.
@Suite(.serialized)
struct PipeWireTests {
    /// Two sinks with a tone each: 440 Hz into "app", 1 kHz into "micsink".
    private func toneServer() throws -> PipeWireServer {
        let pipewire = try PipeWireServer()
        try pipewire.addNullSink("app")
        try pipewire.addNullSink("micsink")
        try pipewire.playTone(sink: "app", hertz: 440)
        try pipewire.playTone(sink: "micsink", hertz: 1000)
        return pipewire
    }

    @Test func capturesTwoNamedMonitors() throws {
        let pipewire = try toneServer()
        let capture = try SystemAudioCapture(
            SystemAudioConfiguration(server: pipewire.server, app: "app.monitor", mic: "micsink.monitor")
        )
        // pipewire-pulse calls itself "PulseAudio (on PipeWire 0.3.65)", version "15.0.0".
        #expect(capture.serverDescription.hasPrefix("PipeWire 0.3."), "\(capture.serverDescription)")
        #expect(capture.serverDescription.contains("pulse server"), "\(capture.serverDescription)")
        #expect(capture.serverDescription.hasSuffix(" at " + pipewire.socketPath), "\(capture.serverDescription)")
        capture.start()
        try waitForAudio(capture, pipewire)
        let run = Collected(capture, seconds: 1.5)
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
            // The tone's amplitude is 0.5: -6 dBFS.
            #expect(entry.levelDBFS > -9 && entry.levelDBFS < -3, "\(source): \(entry.levelDBFS) dBFS")
            #expect(abs(entry.latencyMilliseconds) < 100, "\(source): latency \(entry.latencyMilliseconds) ms")
            #expect(entry.chunks > 0)
            #expect(entry.overruns == 0)
        }
        #expect(statistics[.app]?.name == "app.monitor")
        #expect(statistics[.mic]?.name == "micsink.monitor")
        #expect(capture.drainEvents() == [])
        capture.stop()
        capture.stop()
        #expect(capture.statistics[.app]?.state == "stopped")
    }

    @Test func unknownSourceListsTheSources() throws {
        let pipewire = try toneServer()
        do {
            _ = try SystemAudioCapture(SystemAudioConfiguration(server: pipewire.server, app: "nosuch", mic: nil))
            Issue.record("opened a source named nosuch")
        } catch {
            #expect(error.code == .noSuchSource)
            #expect(error.message.contains("nosuch"), "\(error)")
            #expect(error.message.contains("app.monitor"), "\(error)")
            #expect(error.message.contains("micsink.monitor"), "\(error)")
        }
    }

    @Test func stopsEveryChild() throws {
        let pipewire = try toneServer()
        #expect(pipewire.isRunning)
        pipewire.stop()
        pipewire.stop()
        #expect(!pipewire.isRunning)
        do {
            _ = try SystemAudioCapture(SystemAudioConfiguration(server: pipewire.server))
            Issue.record("connected to a stopped server")
        } catch {
            #expect(error.code == .serverUnreachable)
        }
    }

    /// Until both sources delivered something and settled, drained and dropped.
    private func waitForAudio(_ capture: SystemAudioCapture, _ pipewire: PipeWireServer) throws {
        var heard: Set<AudioSource> = []
        let deadline = Date().addingTimeInterval(10)
        while true {
            capture.drain { source, _ in heard.insert(source) }
            let statistics = capture.statistics
            let settled = AudioSource.allCases.allSatisfy { abs(statistics[$0]?.latencyMilliseconds ?? 1000) < 50 }
            if heard.count == 2, settled { return }
            guard Date() < deadline else {
                throw InteropFailure(
                    "no steady audio within 10 s (heard \(heard), \(statistics), events \(capture.drainEvents()))\n"
                        + pipewire.errors
                )
            }
            usleep(20_000)
        }
    }
}
