import Media
import ProcessSupport
import SystemAudio

/// `--audio system` on the media thread: what the sound server captured since the last look
/// (app audio and the microphone, each stamped with its capture time) into the mixer, and each
/// source's level, latency and gaps into the statistics. Never waits on the sound server: the
/// capture runs on libpulse's thread and hands chunks over through bounded queues.
public final class SystemAudioPump {
    private let capture: SystemAudioCapture
    private let output: PublishOutput
    private let control: MediaControl
    private var rejected = 0
    private var lastRefresh: UInt64 = 0

    public init(capture: SystemAudioCapture, control: MediaControl, output: PublishOutput) {
        self.capture = capture
        self.control = control
        self.output = output
    }

    /// Starts the record streams (at the stream's start, so nothing queues before it).
    func start() {
        capture.start()
        output.progress("audio: system sound from \(capture.serverDescription)")
    }

    public func stop() { capture.stop() }

    /// Drops what is queued (before the stream has started).
    func discard() {
        capture.drain { _, _ in }
        for line in capture.drainEvents() { output.progress("audio: \(line)") }
    }

    /// Moves every queued chunk into `audioPath`; four times a second, the statistics.
    func pump(into audioPath: AudioPath) {
        capture.drain { source, chunk in
            do {
                try audioPath.push(chunk, from: source)
            } catch {
                // A chunk the mixer refuses is dropped and counted; the stream goes on.
                rejected += 1
                if rejected == 1 || rejected % 100 == 0 {
                    output.problem("system audio chunk rejected (\(rejected) so far): \(error)")
                }
            }
        }
        for line in capture.drainEvents() { output.progress("audio: \(line)") }
        let now = MonotonicClock.now()
        guard now - lastRefresh >= 250_000_000 else { return }
        lastRefresh = now
        let sources = capture.statistics
        control.statistics.withLock { statistics in
            statistics.systemAudio = Dictionary(
                uniqueKeysWithValues: sources.map { ($0.key.description, $0.value) }
            )
        }
    }
}
