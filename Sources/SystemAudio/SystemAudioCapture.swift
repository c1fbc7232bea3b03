import Media

/// System audio (Docs/capture.md): what the apps play (a sink's monitor) and the microphone (a
/// source), read through libpulse on its own thread, stamped with their capture time on the
/// monotonic clock, queued per source for the media thread to drain.
///
/// Works against PulseAudio and PipeWire's pulse server alike. Only `init` waits for the server
/// (at most ~5 s); after it nothing the caller calls waits on the server. A source that goes away
/// (server restarted, device unplugged) is silence, with one event line, until it is back.
public final class SystemAudioCapture: @unchecked Sendable {
    private let session: PulseSession

    /// Connects (bounded wait, ~5 s) and checks the sources: no server → `serverUnreachable`
    /// naming the server it tried; a source named explicitly that does not exist → `noSuchSource`
    /// listing the sources that do. A missing default (no default input or output) is no error:
    /// that source is absent, with a line in `drainEvents()`. The first capture loads libpulse
    /// (the process does not link it): `library` when it cannot be loaded.
    public init(_ configuration: SystemAudioConfiguration) throws(SystemAudioError) {
        session = try PulseSession(configuration)
    }

    deinit { session.shutdown() }

    /// Opens the record streams (48 kHz, stereo, float). Does nothing after `stop()`.
    public func start() { session.start() }

    /// Closes the streams and the connection and ends libpulse's thread. Idempotent; final: a
    /// stopped capture does not start again.
    public func stop() { session.shutdown() }

    /// Hands every queued chunk to `body` on the caller's thread, oldest first by capture time
    /// (each source's chunks in capture order). Never waits on the sound server. If `body`
    /// throws, the rest of this batch is dropped.
    public func drain(_ body: (AudioSource, AudioChunk) throws -> Void) rethrows {
        let (app, mic) = session.takeQueued()
        var a = 0
        var m = 0
        while a < app.count || m < mic.count {
            if m >= mic.count || (a < app.count && app[a].captureTime <= mic[m].captureTime) {
                try body(.app, app[a])
                a += 1
            } else {
                try body(.mic, mic[m])
                m += 1
            }
        }
    }

    /// The sources being captured; an absent source (nil in the configuration, or a default that
    /// does not exist) has no entry.
    public var statistics: [AudioSource: SystemAudioSourceStatistics] { session.statistics() }

    /// Human lines about sources coming and going since the last call (at most `maximumEvents`,
    /// the newest kept), e.g. "mic: no default input; sending app audio only".
    public func drainEvents() -> [String] { session.takeEvents() }

    public static let maximumEvents = PulseSession.maximumEvents

    /// "PulseAudio 16.1 at /run/user/0/pulse/native", or "PipeWire 0.3.65 (pulse server, as
    /// PulseAudio 15.0.0) at …".
    public var serverDescription: String { session.serverDescription }
}
