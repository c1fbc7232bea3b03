import CPulse
import Glibc
import Media
import Synchronization

/// The libpulse side of `SystemAudioCapture`: a threaded main loop, one context, one record
/// stream per source, and a 250 ms tick that frees what callbacks retired, reconnects (every
/// ~1 s) and notices stalls.
///
/// Two locks, never nested the other way round: libpulse's main-loop lock guards everything the
/// main loop touches (`context`, `lanes`, the server's answers); it is held by every callback
/// and taken by `start` and `shutdown`. `shared` (a mutex) guards what the caller's thread
/// reads: queues, statistics, events. It is only ever taken inside the main-loop lock or alone,
/// and never held across a libpulse call, so `drain` never waits on the server.
final class PulseSession: @unchecked Sendable {
    static let maximumEvents = 32
    static let sampleRate = 48_000
    static let channels = 2
    private static let bytesPerFrame = channels * MemoryLayout<Float>.size
    private static let tickMicroseconds: UInt64 = 250_000
    private static let retryNanoseconds: UInt64 = 1_000_000_000
    private static let stallNanoseconds: UInt64 = 1_000_000_000
    private static let firstDataNanoseconds: UInt64 = 3_000_000_000
    private static let connectNanoseconds: UInt64 = 5_000_000_000

    /// One source's stream, as the main loop sees it.
    private struct Lane {
        let source: AudioSource
        /// As configured: a name or "@DEFAULT_MONITOR@", "@DEFAULT_SINK@", "@DEFAULT_SOURCE@".
        let requested: String
        var stream: OpaquePointer?
        var condition = Condition.stopped
        /// Went silent after capturing: the next time it captures is news ("capturing again").
        var troubled = false
        /// When the stream became ready, and when data last came (0: none yet on this stream).
        var readyTime: UInt64 = 0
        var lastData: UInt64 = 0
        /// Where the previous chunk ended, so capture times never go back when latency jitters.
        var nextTime: UInt64 = 0
        /// µs, as `pa_stream_get_latency` gave it last; negative on a monitor whose sink renders
        /// ahead of playing (the samples are heard that much later).
        var latency: Int64 = 0
        var nextRetry: UInt64 = 0
    }

    private enum Condition: Equatable {
        case stopped, starting, capturing, reconnecting
        case silent(String)

        var text: String {
            switch self {
            case .stopped: "stopped"
            case .starting: "starting"
            case .capturing: "capturing"
            case .reconnecting: "reconnecting"
            case .silent(let why): "silent: " + why
            }
        }
    }

    private struct SourceEntry {
        var name: String
        /// The sink it monitors; nil for an input.
        var monitorOf: String?
    }

    /// Peak over the current 250 ms block and the one before it.
    private struct PeakWindow {
        var current: Float = 0
        var previous: Float = 0
        var blockStart: UInt64 = 0

        mutating func add(_ peak: Float, at now: UInt64) {
            let age = now &- blockStart
            if blockStart == 0 || age >= 250_000_000 {
                previous = age < 500_000_000 ? current : 0
                current = 0
                blockStart = now
            }
            current = max(current, peak)
        }

        func dBFS(at now: UInt64) -> Double {
            guard blockStart != 0, now &- blockStart < 750_000_000 else { return -120 }
            let peak = Double(max(current, previous))
            return peak > 0 ? max(-120, 20 * log10(peak)) : -120
        }
    }

    private struct Shared {
        var queues: [[AudioChunk]] = [[], []]
        var queuedFrames = [0, 0]
        var statistics: [SystemAudioSourceStatistics?] = [nil, nil]
        var peaks = [PeakWindow(), PeakWindow()]
        var events: [String] = []
        var serverDescription = ""
        var finished = false

        mutating func note(_ line: String) {
            if events.count >= PulseSession.maximumEvents { events.removeFirst() }
            events.append(line)
        }
    }

    private let configuration: SystemAudioConfiguration
    private let fragmentMilliseconds: Int
    private let queueFrames: Int
    private let mainloop: OpaquePointer
    private let api: UnsafeMutablePointer<pa_mainloop_api>
    private let shared = Mutex(Shared())
    /// Human name of the server tried, for messages.
    private let serverName: String

    // Main-loop state (libpulse's lock held).
    private var context: OpaquePointer?
    private var contextFailure: String?
    private var nextContextRetry: UInt64 = 0
    private var tick: OpaquePointer?
    private var lanes: [Lane?] = [nil, nil]
    private var started = false
    private var finished = false
    /// Contexts and streams whose callbacks have been cleared, unreferenced on the next tick
    /// (not inside their own callback).
    private var retiredContexts: [OpaquePointer] = []
    private var retiredStreams: [OpaquePointer] = []
    /// A server-info + source-list query in flight, and the last one's answers.
    private var refreshing = false
    private var refreshed = false
    private var refreshFailure: String?
    private var defaultSink: String?
    private var defaultSource: String?
    private var sources: [SourceEntry] = []
    private var listing: [SourceEntry] = []

    init(_ configuration: SystemAudioConfiguration) throws(SystemAudioError) {
        self.configuration = configuration
        fragmentMilliseconds = min(max(configuration.fragmentMilliseconds, 10), 25)
        let queueMilliseconds = min(max(configuration.queueMilliseconds, 2 * fragmentMilliseconds), 5_000)
        queueFrames = queueMilliseconds * Self.sampleRate / 1000
        serverName = Self.describeServerTried(configuration.server)
        if let problem = Self.libraryProblem {
            throw SystemAudioError(.library, "libpulse cannot be loaded: \(problem)")
        }
        guard let mainloop = rtc_pa_threaded_mainloop_new()() else {
            throw SystemAudioError(.library, "pa_threaded_mainloop_new failed")
        }
        guard let api = rtc_pa_threaded_mainloop_get_api()(mainloop) else {
            rtc_pa_threaded_mainloop_free()(mainloop)
            throw SystemAudioError(.library, "pa_threaded_mainloop_get_api failed")
        }
        self.mainloop = mainloop
        self.api = api
        for source in AudioSource.allCases {
            let requested = source == .app ? configuration.app : configuration.mic
            if let requested { lanes[source.rawValue] = Lane(source: source, requested: requested) }
        }
        do throws(SystemAudioError) {
            try connect()
        } catch {
            shutdown()
            throw error
        }
    }

    deinit { shutdown() }

    /// libpulse is loaded by the first session, not at start (CPulse's shim.h says why), and this
    /// is where: nil when every function this file calls through `rtc_…()` was found. Every such
    /// call is made by a session, after its `init` checked this, so none can find a symbol missing.
    private static let libraryProblem: String? = rtc_pulse_load_error().map { String(cString: $0) }

    /// The server `init` tries, as a user would recognise it.
    private static func describeServerTried(_ server: String?) -> String {
        if let server { return server }
        if let environment = getenv("PULSE_SERVER"), environment.pointee != 0 {
            return String(cString: environment) + " (PULSE_SERVER)"
        }
        if let runtime = getenv("PULSE_RUNTIME_PATH"), runtime.pointee != 0 {
            return String(cString: runtime) + "/native (the default socket)"
        }
        if let runtime = getenv("XDG_RUNTIME_DIR"), runtime.pointee != 0 {
            return String(cString: runtime) + "/pulse/native (the default socket)"
        }
        return "the default socket ($XDG_RUNTIME_DIR is unset)"
    }

    // MARK: - Connecting (init)

    private func connect() throws(SystemAudioError) {
        guard rtc_pa_threaded_mainloop_start()(mainloop) >= 0 else {
            throw SystemAudioError(.library, "libpulse's main loop thread did not start")
        }
        rtc_pa_threaded_mainloop_lock()(mainloop)
        defer { rtc_pa_threaded_mainloop_unlock()(mainloop) }
        guard scheduleTick() else { throw SystemAudioError(.library, "libpulse's main loop has no timer") }
        let deadline = MonotonicClock.now() + Self.connectNanoseconds
        if let failure = openContext() {
            throw SystemAudioError(
                .serverUnreachable,
                "cannot connect to the sound server at \(serverName): \(failure)"
            )
        }
        // Woken by the callbacks and by every tick, so the deadline is checked at least every 250 ms.
        while context.map({ rtc_pa_context_get_state()($0) != PA_CONTEXT_READY }) ?? false,
            contextFailure == nil, MonotonicClock.now() < deadline
        {
            rtc_pa_threaded_mainloop_wait()(mainloop)
        }
        guard let context, rtc_pa_context_get_state()(context) == PA_CONTEXT_READY else {
            let why = contextFailure ?? "no answer within 5 s"
            throw SystemAudioError(.serverUnreachable, "cannot connect to the sound server at \(serverName): \(why)")
        }
        while !refreshed, refreshFailure == nil, contextFailure == nil, MonotonicClock.now() < deadline {
            rtc_pa_threaded_mainloop_wait()(mainloop)
        }
        guard refreshed else {
            let why = refreshFailure ?? contextFailure ?? "no answer within 5 s"
            throw SystemAudioError(
                .serverUnreachable,
                "the sound server at \(serverName) did not list its sources: \(why)"
            )
        }
        try checkSources()
    }

    /// Explicit names must exist; a missing default leaves that source out, with an event.
    private func checkSources() throws(SystemAudioError) {
        var absent: [(AudioSource, String)] = []
        for case let lane? in lanes {
            switch resolve(lane) {
            case .found:
                break
            case .absent(let why):
                absent.append((lane.source, why))
            case .missing(let name):
                let known = sources.map(\.name).joined(separator: ", ")
                throw SystemAudioError(
                    .noSuchSource,
                    "no source named \"\(name)\" on \(serverName) (\(lane.source) audio); sources: "
                        + (known.isEmpty ? "none" : known)
                )
            }
        }
        for (source, _) in absent { lanes[source.rawValue] = nil }
        let present = lanes.compactMap { $0?.source.description }
        for (source, why) in absent {
            let rest = present.isEmpty ? "sending no audio" : "sending \(present.joined(separator: " and ")) audio only"
            shared.withLock { $0.note("\(source): \(why); \(rest)") }
        }
        shared.withLock { shared in
            for case let lane? in lanes {
                shared.statistics[lane.source.rawValue] = SystemAudioSourceStatistics(
                    name: resolvedName(lane) ?? lane.requested,
                    state: Condition.stopped.text
                )
            }
        }
    }

    private enum Resolution {
        case found(String)
        case absent(String)
        case missing(String)
    }

    /// Resolves a lane's name against the last source list. Defaults are looked up here (not left
    /// to the server) so that a missing one is known before any stream opens. A default input that
    /// is the default output's own monitor (PulseAudio's choice when there is no input device)
    /// would send the app audio twice: it counts as no input.
    private func resolve(_ lane: Lane) -> Resolution {
        switch lane.requested {
        case "@DEFAULT_MONITOR@", "@DEFAULT_SINK@":
            guard let sink = defaultSink, let monitor = sources.first(where: { $0.monitorOf == sink }) else {
                return .absent("no default output")
            }
            return .found(monitor.name)
        case "@DEFAULT_SOURCE@":
            guard let name = defaultSource, let entry = sources.first(where: { $0.name == name }) else {
                return .absent("no default input")
            }
            if lanes[AudioSource.app.rawValue] != nil, let sink = entry.monitorOf, sink == defaultSink {
                return .absent("no default input (the default source \(name) is the default output's monitor)")
            }
            return .found(name)
        default:
            return sources.contains(where: { $0.name == lane.requested })
                ? .found(lane.requested) : .missing(lane.requested)
        }
    }

    private func resolvedName(_ lane: Lane) -> String? {
        if case .found(let name) = resolve(lane) { return name }
        return nil
    }

    // MARK: - Caller's side

    func start() {
        rtc_pa_threaded_mainloop_lock()(mainloop)
        defer { rtc_pa_threaded_mainloop_unlock()(mainloop) }
        guard !started, !finished else { return }
        started = true
        for index in lanes.indices where lanes[index] != nil {
            transition(index, to: .starting, event: nil)
        }
        openStreams()
    }

    /// Idempotent. Clears every callback before freeing, then ends the thread.
    func shutdown() {
        let first = shared.withLock { shared in
            defer { shared.finished = true }
            return !shared.finished
        }
        guard first else { return }
        rtc_pa_threaded_mainloop_lock()(mainloop)
        finished = true
        for index in lanes.indices {
            if let stream = lanes[index]?.stream {
                retire(stream: stream)
                lanes[index]?.stream = nil
            }
            if lanes[index] != nil { transition(index, to: .stopped, event: nil) }
        }
        if let context { retire(context: context) }
        context = nil
        freeRetired()
        if let tick, let free = api.pointee.time_free { free(tick) }
        tick = nil
        rtc_pa_threaded_mainloop_unlock()(mainloop)
        rtc_pa_threaded_mainloop_stop()(mainloop)
        rtc_pa_threaded_mainloop_free()(mainloop)
    }

    func takeQueued() -> ([AudioChunk], [AudioChunk]) {
        shared.withLock { shared in
            var app: [AudioChunk] = []
            var mic: [AudioChunk] = []
            swap(&app, &shared.queues[AudioSource.app.rawValue])
            swap(&mic, &shared.queues[AudioSource.mic.rawValue])
            shared.queuedFrames = [0, 0]
            return (app, mic)
        }
    }

    func statistics() -> [AudioSource: SystemAudioSourceStatistics] {
        let now = MonotonicClock.now()
        return shared.withLock { shared in
            var result: [AudioSource: SystemAudioSourceStatistics] = [:]
            for source in AudioSource.allCases {
                guard var entry = shared.statistics[source.rawValue] else { continue }
                entry.levelDBFS = shared.peaks[source.rawValue].dBFS(at: now)
                result[source] = entry
            }
            return result
        }
    }

    func takeEvents() -> [String] {
        shared.withLock { shared in
            defer { shared.events.removeAll(keepingCapacity: true) }
            return shared.events
        }
    }

    var serverDescription: String { shared.withLock { $0.serverDescription } }

    // MARK: - Main loop: state changes

    /// Records a lane's new condition; the event line goes out only when the condition changes.
    private func transition(_ index: Int, to condition: Condition, event: String?) {
        guard let lane = lanes[index], lane.condition != condition else { return }
        lanes[index]?.condition = condition
        let name = lane.stream == nil ? (resolvedName(lane) ?? lane.requested) : nil
        shared.withLock { shared in
            shared.statistics[index]?.state = condition.text
            if let name { shared.statistics[index]?.name = name }
            if let event { shared.note("\(lane.source): \(event)") }
        }
    }

    /// A lane that lost its stream: silent (or reconnecting, when the whole server went away).
    private func lose(_ index: Int, _ condition: Condition, event: String) {
        guard let lane = lanes[index] else { return }
        if let stream = lane.stream { retire(stream: stream) }
        lanes[index]?.stream = nil
        lanes[index]?.nextRetry = MonotonicClock.now() + Self.retryNanoseconds
        if lane.condition == .capturing || lane.condition == .starting { lanes[index]?.troubled = true }
        transition(index, to: condition, event: event)
    }

    private func retire(stream: OpaquePointer) {
        rtc_pa_stream_set_state_callback()(stream, nil, nil)
        rtc_pa_stream_set_read_callback()(stream, nil, nil)
        if rtc_pa_stream_get_state()(stream) == PA_STREAM_READY
            || rtc_pa_stream_get_state()(stream) == PA_STREAM_CREATING
        {
            rtc_pa_stream_disconnect()(stream)
        }
        retiredStreams.append(stream)
    }

    private func retire(context: OpaquePointer) {
        rtc_pa_context_set_state_callback()(context, nil, nil)
        let state = rtc_pa_context_get_state()(context)
        if state != PA_CONTEXT_FAILED, state != PA_CONTEXT_TERMINATED { rtc_pa_context_disconnect()(context) }
        retiredContexts.append(context)
    }

    private func freeRetired() {
        for stream in retiredStreams { rtc_pa_stream_unref()(stream) }
        retiredStreams.removeAll()
        for context in retiredContexts { rtc_pa_context_unref()(context) }
        retiredContexts.removeAll()
    }

    private var userdata: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    private static func session(_ userdata: UnsafeMutableRawPointer?) -> PulseSession? {
        guard let userdata else { return nil }
        return Unmanaged<PulseSession>.fromOpaque(userdata).takeUnretainedValue()
    }

    private func errorText(_ context: OpaquePointer?) -> String {
        guard let context, let text = rtc_pa_strerror()(rtc_pa_context_errno()(context)) else { return "unknown error" }
        return String(cString: text)
    }

    // MARK: - Main loop: the tick

    private func scheduleTick() -> Bool {
        var when = timeval()
        gettimeofday(&when, nil)
        rtc_pa_timeval_add()(&when, Self.tickMicroseconds)
        if let tick {
            guard let restart = api.pointee.time_restart else { return false }
            restart(tick, &when)
            return true
        }
        guard let create = api.pointee.time_new else { return false }
        tick = create(
            api,
            &when,
            { _, _, _, userdata in PulseSession.session(userdata)?.onTick() },
            userdata
        )
        return tick != nil
    }

    private func onTick() {
        freeRetired()
        // Wakes `connect`'s bounded wait.
        rtc_pa_threaded_mainloop_signal()(mainloop, 0)
        guard !finished else { return }
        _ = scheduleTick()
        guard started else { return }
        let now = MonotonicClock.now()
        guard let context else {
            if now >= nextContextRetry {
                nextContextRetry = now + Self.retryNanoseconds
                _ = openContext()
            }
            return
        }
        guard rtc_pa_context_get_state()(context) == PA_CONTEXT_READY else { return }
        let waiting = lanes.contains { lane in lane.map { $0.stream == nil && now >= $0.nextRetry } ?? false }
        if waiting, !refreshing {
            for index in lanes.indices where lanes[index]?.stream == nil {
                lanes[index]?.nextRetry = now + Self.retryNanoseconds
            }
            refresh()
        }
        checkStalls(now: now)
    }

    /// A stream that is open but has brought nothing for a while: an underrun per tick, and after
    /// a second "silent" (once) until data comes again.
    ///
    /// A sink's monitor gets data when the sink renders, in blocks of the sink's latency: up to
    /// 2 s (PulseAudio's null and timer-scheduled ALSA sinks) before the first block once a record
    /// stream asks for less. So the first data may take `firstDataNanoseconds`.
    private func checkStalls(now: UInt64) {
        let due = UInt64(2 * fragmentMilliseconds + 100) * 1_000_000
        for index in lanes.indices {
            guard let lane = lanes[index], let stream = lane.stream,
                rtc_pa_stream_get_state()(stream) == PA_STREAM_READY
            else { continue }
            guard lane.lastData != 0 else {
                if now &- lane.readyTime > Self.firstDataNanoseconds, lane.condition == .capturing {
                    lanes[index]?.troubled = true
                    let name = rtc_pa_stream_get_device_name()(stream).map { String(cString: $0) } ?? lane.requested
                    transition(index, to: .silent("no data"), event: "no data from \(name) yet; silent until it comes")
                }
                continue
            }
            guard now &- lane.lastData > due else { continue }
            shared.withLock { $0.statistics[index]?.underruns += 1 }
            if now &- lane.lastData > Self.stallNanoseconds, lane.condition == .capturing {
                lanes[index]?.troubled = true
                let name = rtc_pa_stream_get_device_name()(stream).map { String(cString: $0) } ?? lane.requested
                transition(
                    index,
                    to: .silent("no data"),
                    event: "no data from \(name) for 1 s; silent until it resumes"
                )
            }
        }
    }

    // MARK: - Main loop: the context

    /// A new context, connecting. Returns why not when libpulse refuses at once.
    private func openContext() -> String? {
        guard let context = rtc_pa_context_new()(api, "rtc-publish") else { return "pa_context_new failed" }
        contextFailure = nil
        refreshed = false
        refreshFailure = nil
        rtc_pa_context_set_state_callback()(
            context,
            { context, userdata in PulseSession.session(userdata)?.onContextState(context) },
            userdata
        )
        self.context = context
        // No autospawn: the capture never starts a sound server of its own.
        let flags = pa_context_flags_t(rawValue: PA_CONTEXT_NOAUTOSPAWN.rawValue)
        if rtc_pa_context_connect()(context, configuration.server, flags, nil) < 0 {
            let why = errorText(context)
            contextFailure = why
            // The state callback may have seen FAILED already and retired it: retire once.
            if self.context == context {
                retire(context: context)
                self.context = nil
            }
            return why
        }
        return nil
    }

    private func onContextState(_ changed: OpaquePointer?) {
        defer { rtc_pa_threaded_mainloop_signal()(mainloop, 0) }
        guard let changed, changed == context else { return }
        let state = rtc_pa_context_get_state()(changed)
        if state == PA_CONTEXT_READY {
            refresh()
        } else if state == PA_CONTEXT_FAILED || state == PA_CONTEXT_TERMINATED {
            let why = errorText(changed)
            contextFailure = why
            retire(context: changed)
            context = nil
            refreshing = false
            nextContextRetry = MonotonicClock.now() + Self.retryNanoseconds
            guard started else { return }
            for index in lanes.indices where lanes[index] != nil {
                lose(
                    index,
                    .reconnecting,
                    event: "source gone (sound server went away: \(why)); silent until it is back"
                )
            }
        }
    }

    // MARK: - Main loop: server info and sources

    /// Asks for the defaults and the source list; `onSourceList` opens what is missing.
    private func refresh() {
        guard let context, !refreshing else { return }
        refreshing = true
        listing = []
        let operation = rtc_pa_context_get_server_info()(
            context,
            { _, info, userdata in PulseSession.session(userdata)?.onServerInfo(info) },
            userdata
        )
        if let operation {
            rtc_pa_operation_unref()(operation)
        } else {
            refreshing = false
            refreshFailure = errorText(context)
        }
    }

    private func onServerInfo(_ info: UnsafePointer<pa_server_info>?) {
        guard let context, refreshing else { return }
        guard let info else {
            refreshing = false
            refreshFailure = errorText(context)
            rtc_pa_threaded_mainloop_signal()(mainloop, 0)
            return
        }
        let text = { (pointer: UnsafePointer<CChar>?) -> String? in
            guard let pointer, pointer.pointee != 0 else { return nil }
            return String(cString: pointer)
        }
        defaultSink = text(info.pointee.default_sink_name)
        defaultSource = text(info.pointee.default_source_name)
        let name = text(info.pointee.server_name) ?? "unknown server"
        let version = text(info.pointee.server_version) ?? "?"
        var address = text(rtc_pa_context_get_server()(context)) ?? serverName
        if address.hasPrefix("unix:") { address.removeFirst(5) }
        let description: String
        let words = name.split(separator: " ")
        if let at = words.firstIndex(of: "PipeWire") {
            // PipeWire calls itself "PulseAudio (on PipeWire 0.3.65)" with a PulseAudio version.
            let pipewire = at + 1 < words.count ? words[at + 1].filter { $0 != ")" } : "?"
            description = "PipeWire \(pipewire) (pulse server, as PulseAudio \(version)) at \(address)"
        } else if name == "pulseaudio" {
            description = "PulseAudio \(version) at \(address)"
        } else {
            description = "\(name) \(version) at \(address)"
        }
        shared.withLock { $0.serverDescription = description }
        let operation = rtc_pa_context_get_source_info_list()(
            context,
            { _, info, eol, userdata in PulseSession.session(userdata)?.onSource(info, end: eol) },
            userdata
        )
        if let operation {
            rtc_pa_operation_unref()(operation)
        } else {
            refreshing = false
            refreshFailure = errorText(context)
        }
    }

    private func onSource(_ info: UnsafePointer<pa_source_info>?, end: Int32) {
        guard refreshing else { return }
        if let info, end == 0 {
            if let name = info.pointee.name {
                let monitorOf = info.pointee.monitor_of_sink_name.map { String(cString: $0) }
                listing.append(SourceEntry(name: String(cString: name), monitorOf: monitorOf))
            }
            return
        }
        refreshing = false
        if end < 0 {
            refreshFailure = errorText(context)
        } else {
            sources = listing
            refreshed = true
            openStreams()
        }
        rtc_pa_threaded_mainloop_signal()(mainloop, 0)
    }

    // MARK: - Main loop: streams

    /// Opens a stream for every lane without one, against the last source list.
    private func openStreams() {
        guard started, !finished, let context, rtc_pa_context_get_state()(context) == PA_CONTEXT_READY else { return }
        for index in lanes.indices {
            guard let lane = lanes[index], lane.stream == nil else { continue }
            switch resolve(lane) {
            case .found(let name):
                openStream(index, name: name, context: context)
            case .absent(let why):
                transition(index, to: .silent(why), event: "\(why); silent until there is one")
            case .missing(let name):
                transition(index, to: .silent("no source \(name)"), event: "no source \(name); silent until it is back")
            }
        }
    }

    private func openStream(_ index: Int, name: String, context: OpaquePointer) {
        var spec = pa_sample_spec(
            format: PA_SAMPLE_FLOAT32LE,
            rate: UInt32(Self.sampleRate),
            channels: UInt8(Self.channels)
        )
        var map = pa_channel_map()
        rtc_pa_channel_map_init_stereo()(&map)
        guard let lane = lanes[index],
            let stream = rtc_pa_stream_new()(context, "rtc-publish \(lane.source)", &spec, &map)
        else {
            transition(index, to: .silent("cannot open a stream"), event: "pa_stream_new failed: \(errorText(context))")
            return
        }
        rtc_pa_stream_set_state_callback()(
            stream,
            { stream, userdata in PulseSession.session(userdata)?.onStreamState(stream) },
            userdata
        )
        rtc_pa_stream_set_read_callback()(
            stream,
            { stream, _, userdata in PulseSession.session(userdata)?.onRead(stream) },
            userdata
        )
        let fragment = UInt32(rtc_pa_usec_to_bytes()(UInt64(fragmentMilliseconds) * 1000, &spec))
        var attributes = pa_buffer_attr(
            maxlength: UInt32.max,
            tlength: UInt32.max,
            prebuf: UInt32.max,
            minreq: UInt32.max,
            fragsize: fragment
        )
        let flags = pa_stream_flags_t(
            rawValue: PA_STREAM_ADJUST_LATENCY.rawValue | PA_STREAM_AUTO_TIMING_UPDATE.rawValue
                | PA_STREAM_INTERPOLATE_TIMING.rawValue
        )
        lanes[index]?.stream = stream
        lanes[index]?.latency = 0
        if rtc_pa_stream_connect_record()(stream, name, &attributes, flags) < 0 {
            lose(
                index,
                .silent("cannot record from \(name)"),
                event: "cannot record from \(name): \(errorText(context))"
            )
            return
        }
        shared.withLock { $0.statistics[index]?.name = name }
    }

    private func laneIndex(of stream: OpaquePointer?) -> Int? {
        guard let stream else { return nil }
        return lanes.firstIndex { $0?.stream == stream }
    }

    private func onStreamState(_ stream: OpaquePointer?) {
        guard let stream, let index = laneIndex(of: stream), let lane = lanes[index] else { return }
        let state = rtc_pa_stream_get_state()(stream)
        if state == PA_STREAM_READY {
            lanes[index]?.readyTime = MonotonicClock.now()
            lanes[index]?.lastData = 0
            lanes[index]?.troubled = false
            transition(index, to: .capturing, event: lane.troubled ? "capturing again" : nil)
        } else if state == PA_STREAM_FAILED || state == PA_STREAM_TERMINATED {
            let why = errorText(context)
            if let context, rtc_pa_context_get_state()(context) == PA_CONTEXT_READY {
                lose(index, .silent("source gone"), event: "source gone (\(why)); silent until it is back")
            } else {
                lose(
                    index,
                    .reconnecting,
                    event: "source gone (sound server went away: \(why)); silent until it is back"
                )
            }
        }
    }

    /// Copies every fragment the stream holds into chunks. The stream's latency, taken before the
    /// first peek, is how long ago the first sample to be read was captured; each later fragment
    /// starts where the one before it ended.
    private func onRead(_ stream: OpaquePointer?) {
        guard let stream, let index = laneIndex(of: stream), var lane = lanes[index] else { return }
        let now = MonotonicClock.now()
        var latency: pa_usec_t = 0
        var negative: Int32 = 0
        if rtc_pa_stream_get_latency()(stream, &latency, &negative) == 0, latency < 10_000_000 {
            lane.latency = negative != 0 ? -Int64(latency) : Int64(latency)
        }
        var time = UInt64(max(0, Int64(now) - lane.latency * 1000))
        var chunks: [AudioChunk] = []
        var holes = 0
        var peak: Float = 0
        while true {
            var data: UnsafeRawPointer?
            var length = 0
            guard rtc_pa_stream_peek()(stream, &data, &length) == 0, length > 0 else { break }
            let frames = length / Self.bytesPerFrame
            let duration = UInt64(frames) * 1_000_000_000 / UInt64(Self.sampleRate)
            if let data, frames > 0 {
                let count = frames * Self.channels
                let samples = [Float](unsafeUninitializedCapacity: count) { buffer, initialized in
                    if let base = buffer.baseAddress { memcpy(base, data, count * MemoryLayout<Float>.size) }
                    initialized = count
                }
                for sample in samples { peak = max(peak, abs(sample)) }
                let start = max(time, lane.nextTime)
                if let chunk = try? AudioChunk(
                    samples: samples,
                    sampleRate: Self.sampleRate,
                    channels: Self.channels,
                    captureTime: start
                ) {
                    chunks.append(chunk)
                }
                lane.nextTime = start + duration
            } else if data == nil {
                holes += 1
            }
            rtc_pa_stream_drop()(stream)
            time += duration
        }
        let resumed = lane.condition == .silent("no data") && !chunks.isEmpty
        if !chunks.isEmpty { lane.lastData = now }
        lanes[index] = lane
        let bound = queueFrames
        shared.withLock { shared in
            for chunk in chunks {
                shared.queues[index].append(chunk)
                shared.queuedFrames[index] += chunk.frameCount
            }
            var dropped = 0
            while shared.queuedFrames[index] > bound, !shared.queues[index].isEmpty {
                shared.queuedFrames[index] -= shared.queues[index].removeFirst().frameCount
                dropped += 1
            }
            shared.statistics[index]?.chunks += chunks.count
            shared.statistics[index]?.underruns += holes
            shared.statistics[index]?.overruns += dropped
            shared.statistics[index]?.latencyMilliseconds = Double(lane.latency) / 1000
            if !chunks.isEmpty { shared.peaks[index].add(peak, at: now) }
        }
        if resumed {
            lanes[index]?.troubled = false
            transition(index, to: .capturing, event: "capturing again")
        }
    }
}
