// System audio capture through libpulse; see Docs/capture.md.

/// An error from the system audio capture: a code a caller can switch on and a message naming the
/// server or the source, fit to show a user as it is.
///
/// A struct with an extensible code (as `CaptureError`), so new codes do not break callers' switches.
public struct SystemAudioError: Error, Hashable, CustomStringConvertible, Sendable {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let name: String
        public init(_ name: String) { self.name = name }
        public var description: String { name }

        /// No sound server answered (none running, a wrong socket, or no answer within the bound).
        public static let serverUnreachable = Code("server-unreachable")
        /// A source named explicitly does not exist; the message lists the ones that do.
        public static let noSuchSource = Code("no-such-source")
        /// libpulse itself failed (out of memory, a main loop that would not start), or could not be
        /// loaded (it is loaded by the first capture): the message has the loader's words.
        public static let library = Code("library")
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}

public struct SystemAudioConfiguration: Sendable {
    /// nil: `PULSE_SERVER`, else libpulse's default socket (`$XDG_RUNTIME_DIR/pulse/native`).
    public var server: String?
    /// What the shared apps play: the default output's monitor. nil: no app audio.
    public var app: String? = "@DEFAULT_MONITOR@"
    /// The presenter's microphone: the default input. nil: no mic.
    public var mic: String? = "@DEFAULT_SOURCE@"
    /// How much audio each read brings (the stream's fragsize); kept within 10...25.
    public var fragmentMilliseconds = 10
    /// Bound of each source's queue: past it the oldest chunk goes (counted as an overrun).
    public var queueMilliseconds = 200

    public init(server: String? = nil, app: String? = "@DEFAULT_MONITOR@", mic: String? = "@DEFAULT_SOURCE@") {
        self.server = server
        self.app = app
        self.mic = mic
    }
}

public struct SystemAudioSourceStatistics: Sendable, Codable, Equatable {
    /// The source's PulseAudio name as resolved ("app.monitor"); the configured name until then.
    public var name: String
    /// "starting", "capturing", "silent: <why>", "reconnecting" or "stopped".
    public var state: String
    /// Sample peak over the last 0.25–0.5 s, in dBFS; -120 when silent or nothing arrived.
    public var levelDBFS: Double
    /// How long ago the first sample of the latest read was captured (`pa_stream_get_latency`).
    public var latencyMilliseconds: Double
    /// Chunks read from the server.
    public var chunks: Int
    /// Holes in the stream (`pa_stream_peek` returned no data for a length) and 250 ms ticks
    /// with no data while some was due.
    public var underruns: Int
    /// Chunks dropped because the consumer's queue was full.
    public var overruns: Int

    public init(
        name: String,
        state: String,
        levelDBFS: Double = -120,
        latencyMilliseconds: Double = 0,
        chunks: Int = 0,
        underruns: Int = 0,
        overruns: Int = 0
    ) {
        self.name = name
        self.state = state
        self.levelDBFS = levelDBFS
        self.latencyMilliseconds = latencyMilliseconds
        self.chunks = chunks
        self.underruns = underruns
        self.overruns = overruns
    }
}
