import Foundation
import Ingest
import Logging
import Synchronization

/// A logger that drops everything (tests assert on events and counters, not log lines).
let quietLogger = Logger(label: "ingest-tests", factory: { _ in SwiftLogNoOpLogHandler() })

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A fresh Unix-domain socket path under /tmp (short enough for `sun_path`).
func temporarySocketAddress() -> IngestAddress {
    .unix(path: "/tmp/ingest-test-\(UInt32.random(in: 0...UInt32.max))-\(getpid()).sock")
}

/// An ingest server running in-process, with every event it delivers recorded.
final class TestServer: Sendable {
    let server: IngestServer
    let recorder: EventRecorder
    private let serving: Task<Void, Never>
    private let consuming: Task<Void, Never>

    /// `consumerDelay` makes the consumer slow on purpose (per video event); recorded frames after
    /// the first `keepPlanes` lose their pixels, so a long run does not pile them up.
    init(
        address: IngestAddress? = nil,
        configuration: IngestServerConfiguration = IngestServerConfiguration(),
        consumerDelay: Duration = .zero,
        keepPlanes: Int = .max
    ) async throws {
        let server = try await IngestServer.bind(
            address ?? temporarySocketAddress(),
            configuration: configuration,
            logger: quietLogger
        )
        let recorder = EventRecorder()
        self.server = server
        self.recorder = recorder
        serving = Task { await server.run() }
        consuming = Task {
            var frames = 0
            for await event in server.events {
                if case .video(var video) = event {
                    frames += 1
                    if frames > keepPlanes { video.frame.planes = [] }
                    recorder.record(.video(video))
                } else {
                    recorder.record(event)
                }
                if case .video = event, consumerDelay > .zero {
                    try? await Task.sleep(for: consumerDelay)
                }
            }
            recorder.finish()
        }
    }

    var address: IngestAddress { server.address }

    /// Shuts the server down and waits until its events are all consumed.
    func stop() async {
        server.shutdown()
        await serving.value
        await consuming.value
    }
}

/// Collects events and lets a test wait for a condition on them.
final class EventRecorder: Sendable {
    private let state = Mutex<(events: [IngestEvent], finished: Bool)>(([], false))

    func record(_ event: IngestEvent) {
        state.withLock { $0.events.append(event) }
    }

    func finish() {
        state.withLock { $0.finished = true }
    }

    var events: [IngestEvent] { state.withLock { $0.events } }
    var isFinished: Bool { state.withLock { $0.finished } }

    /// Polls (the recorder is fed by another task) until `match` finds something.
    func waitFor<T>(
        _ what: String,
        timeout: Duration = .seconds(10),
        _ match: ([IngestEvent]) -> T?
    ) async throws -> T {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let found = match(events) { return found }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw TestFailure("no \(what) within \(timeout); events: \(events.map(\.summary))")
    }

    /// Waits for the `count`-th session end (ended or disconnected) and returns it.
    func waitForSessionEnd(number count: Int = 1) async throws -> IngestEvent {
        try await waitFor("session end #\(count)") { events in
            let ends = events.filter(\.isSessionEnd)
            return ends.count >= count ? ends[count - 1] : nil
        }
    }
}

extension IngestEvent {
    var isSessionEnd: Bool {
        switch self {
        case .ended, .disconnected: true
        default: false
        }
    }

    var disconnectReason: IngestEndReason? {
        if case .disconnected(let end) = self { return end.reason }
        return nil
    }

    var video: IngestVideoEvent? {
        if case .video(let video) = self { return video }
        return nil
    }

    var audio: IngestAudioEvent? {
        if case .audio(let audio) = self { return audio }
        return nil
    }

    var summary: String {
        switch self {
        case .connected(let hello): "connected(\(hello.name))"
        case .video: "video"
        case .audio(let audio): "audio(\(audio.source))"
        case .paused: "paused"
        case .resumed: "resumed"
        case .ended(let end): "ended(\(end))"
        case .disconnected(let end): "disconnected(\(end))"
        }
    }
}
