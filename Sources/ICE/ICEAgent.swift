import CNice
import Dispatch
import SDP
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Full ICE (RFC 8445, NICE_COMPATIBILITY_RFC5245) for one bundled, rtcp-muxed transport: one
/// libnice stream with one component, on one of the process's shared GLib loops
/// (`GLibLoopPool`).
///
/// Use: create it with a role and the local addresses, read `localCredentials`, `gather()`,
/// trickle the `.localCandidate` events (or wait for `.gatheringDone`), give the peer's
/// credentials and candidates, `remoteCandidatesComplete()` at its end-of-candidates, then watch
/// the `.state` events. Datagrams arrive in the receive handler with their RFC 7983 class; send
/// with `send(_:)`, or, for the media fast path, on `selectedSocket()`.
///
/// The first agent loads libnice and GLib (the process does not link them); when they cannot be
/// loaded, `init` throws `ICEError.library` with the loader's words.
///
/// Always on: consent freshness (RFC 7675; libnice 0.1.21 checks every 4–6 s and declares
/// consent lost 10 s after the last answer), ICE trickle (so failure waits for the peer's
/// end-of-candidates), regular nomination (RFC 8445; aggressive nomination is deprecated),
/// UDP only (no ICE-TCP, no UPnP), and peer-reflexive candidates learnt from checks.
///
/// Threading. Every libnice call is marshalled onto the agent's GLib loop thread, except
/// `nice_agent_send` in `send(_:)`, which libnice makes safe from any thread with its agent mutex
/// (and which queues no signal). The event handler, the receive handler and `log` are called on
/// that thread, in order: they must not block (no waiting for I/O, locks held long, or this
/// agent's `stop()`), or every timer and check of every agent on the loop stalls with them; hand
/// work on.
/// They may call this agent's methods (the call then runs inline). The bytes given to the
/// receive handler are valid only during the call. `send` and `stop()` are serialised by a lock:
/// `send` after `stop` throws `.stopped`.
public final class ICEAgent: @unchecked Sendable {
    /// The largest datagram sent or delivered: an Ethernet MTU. WebRTC media and DTLS flights stay
    /// under ~1200 bytes; anything longer would be fragmented on the way.
    public static let maximumDatagramLength = 1500
    /// Remote candidates accepted (libnice itself keeps at most 25 per component).
    public static let maximumRemoteCandidates = 20
    /// `Configuration.localAddresses` accepted.
    public static let maximumLocalAddresses = 8
    /// The longest remote `candidate:…` attribute handed to libnice, in bytes: one with every
    /// extension a browser adds is under 250.
    public static let maximumCandidateLength = 512
    /// How long `stop()` waits for libnice to release TURN allocations (a loopback or LAN server
    /// answers in milliseconds; an unreachable one must not hold a viewer's removal up).
    static let closeWait = DispatchTimeInterval.milliseconds(500)
    /// Components of the one stream: RTP and RTCP are muxed (RFC 5761), so just component 1.
    static let componentCount: guint = 1

    public typealias EventHandler = @Sendable (ICEEvent) -> Void
    public typealias ReceiveHandler = @Sendable (UnsafeRawBufferPointer, ICEDatagramClass) -> Void

    public let configuration: Configuration
    /// Our `a=ice-ufrag` / `a=ice-pwd` (new ones after `restart()`).
    public var localCredentials: ICECredentials { credentials.withLock { $0 } }
    public var role: ICERole { configuration.role }
    public var state: ICEState { core.inner.withLock { $0.state } }
    public var statistics: ICEStatistics { core.inner.withLock { $0.statistics } }
    public var selectedPair: ICECandidatePair? { core.inner.withLock { $0.pair } }
    /// The local candidates gathered so far (all of them once `.gatheringDone` was reported).
    public var localCandidates: [ICECandidate] { core.inner.withLock { $0.localCandidates } }

    private let lease: GLibLoopPool.Lease
    private var glib: GLibThread { lease.loop }
    /// `NiceAgent *`, owned; unreferenced on the GLib thread by `stop()`.
    private let agent: OpaquePointer
    private let streamID: guint
    private let core: Core
    private let signalHandlers: [gulong]
    private let credentials: Mutex<ICECredentials>
    /// Set by `stop()`; `send` holds it while it uses the agent.
    private let stopped = Mutex(false)

    public init(
        _ configuration: Configuration,
        onEvent: @escaping EventHandler,
        onReceive: @escaping ReceiveHandler
    ) throws {
        try configuration.validate()
        if let problem = Self.libraryProblem {
            throw ICEError(.library, "libnice and GLib cannot be loaded: \(problem)")
        }
        let stun = try configuration.stunServer.map { try resolveNumeric($0.host) }
        let turn = try configuration.turnServer.map { try resolveNumeric($0.server.host) }
        self.configuration = configuration
        let lease = GLibLoopPool.shared.acquire()
        let glib = lease.loop
        self.lease = lease
        let made: Result<(OpaquePointer, guint, ICECredentials, Core, [gulong]), ICEError> = glib.sync {
            Self.makeAgent(configuration, stun: stun, turn: turn, context: glib.context, onEvent, onReceive)
        }
        switch made {
        case .success(let (agent, streamID, credentials, core, handlers)):
            self.agent = agent
            self.streamID = streamID
            self.credentials = Mutex(credentials)
            self.core = core
            self.signalHandlers = handlers
        case .failure(let error):
            GLibLoopPool.shared.release(lease)
            throw error
        }
    }

    deinit { stop() }

    /// libnice and GLib are loaded by the first agent, not at start (CNice's shim.h says why), and
    /// this is where: nil when every function the module calls through `rtc_…()` was found. Every
    /// such call is made by an agent or for one, after its `init` checked this, so none can find a
    /// symbol missing.
    private static let libraryProblem: String? = rtc_nice_load_error().map { String(cString: $0) }

    /// Starts gathering: host candidates on the configured addresses, then STUN and TURN.
    /// Candidates come as `.localCandidate` events, then `.gatheringDone`. With
    /// `Configuration.portRange`, a local address with no free port in it makes this throw.
    public func gather() throws {
        let ok = try onLoop { rtc_nice_agent_gather_candidates()(agent, streamID) != 0 }
        guard ok else {
            if let range = configuration.portRange {
                let ports = "\(range.lowerBound)-\(range.upperBound)"
                throw ICEError(.agent, "libnice gathered nothing (no free UDP port in \(ports) on a local address?)")
            }
            throw ICEError(.agent, "libnice gathered nothing (no usable local address?)")
        }
    }

    /// RFC 8445 §9 ICE restart: new local credentials, the checks start over on the candidates
    /// already gathered (same sockets), consent restored. The peer's new credentials (and its
    /// candidates again: libnice forgets the old credentials) follow with `setRemoteCredentials`,
    /// `addRemoteCandidates` and `remoteCandidatesComplete`. Returns the new credentials.
    public func restart() throws -> ICECredentials {
        let fresh = try onLoop { () throws -> ICECredentials in
            guard rtc_nice_agent_restart_stream()(agent, streamID) != 0 else {
                throw ICEError(.agent, "libnice refused to restart the stream")
            }
            return try Self.readLocalCredentials(agent, stream: streamID)
        }
        credentials.withLock { $0 = fresh }
        // `failed` and `consent-lost` are final for one run of checks, not across a restart.
        core.inner.withLock { inner in
            if inner.state != .closed { inner.state = .connecting }
        }
        return fresh
    }

    /// The peer's `a=ice-ufrag` and `a=ice-pwd`. Checks the peer sends before this are kept by
    /// libnice and answered once the credentials are known.
    public func setRemoteCredentials(_ credentials: ICECredentials) throws {
        let ok = try onLoop {
            rtc_nice_agent_set_remote_credentials()(agent, streamID, credentials.ufrag, credentials.password) != 0
        }
        guard ok else { throw ICEError(.agent, "libnice refused the remote credentials") }
    }

    /// One remote candidate, as JSEP read it from the offer (SDP's `ICECandidate`) or a trickle message. Returns false
    /// when it is ignored: an mDNS `.local` name (logged once per candidate, counted), a component
    /// other than 1 (rtcp-mux, counted) or a transport other than UDP. Throws when its
    /// `a=candidate` line would be longer than `maximumCandidateLength`, when libnice cannot read
    /// it, and past `maximumRemoteCandidates`.
    @discardableResult
    public func addRemoteCandidate(_ candidate: ICECandidate) throws -> Bool {
        try onLoop { try addRemoteCandidateOnLoop(candidate) }
    }

    /// One remote candidate as text (`a=candidate:…` or trickled `candidate:…`), read with SDP's
    /// parser (a syntax error is thrown as `.invalidCandidate`), then added as
    /// `addRemoteCandidate(_: ICECandidate)` adds it.
    @discardableResult
    public func addRemoteCandidate(_ line: String) throws -> Bool {
        // `a=` and a CRLF around the longest line taken: no need to parse anything longer.
        guard line.utf8.count <= Self.maximumCandidateLength + 4 else {
            throw ICEError(.invalidCandidate, "candidate line longer than \(Self.maximumCandidateLength) bytes")
        }
        let candidate: ICECandidate
        do throws(CandidateSyntaxError) {
            candidate = try ICECandidate(attribute: line)
        } catch {
            throw ICEError(.invalidCandidate, "malformed candidate: \(error.problem)")
        }
        return try addRemoteCandidate(candidate)
    }

    /// Several remote candidates, e.g. a complete offer's; ignores as `addRemoteCandidate` does.
    /// Returns how many reached libnice.
    @discardableResult
    public func addRemoteCandidates(_ candidates: [ICECandidate]) throws -> Int {
        var added = 0
        for candidate in candidates where try addRemoteCandidate(candidate) { added += 1 }
        return added
    }

    /// Several remote candidates as text; see `addRemoteCandidate(_: String)`.
    @discardableResult
    public func addRemoteCandidates(_ lines: [String]) throws -> Int {
        var added = 0
        for line in lines where try addRemoteCandidate(line) { added += 1 }
        return added
    }

    /// The peer's end-of-candidates (or a complete, non-trickled candidate list has been given):
    /// from now on, when every check has failed, the agent reports `.failed`.
    public func remoteCandidatesComplete() throws {
        try onLoop { _ = rtc_nice_agent_peer_candidate_gathering_done()(agent, streamID) }
    }

    /// Sends one datagram on the selected pair through libnice (a relayed pair is wrapped in TURN
    /// by libnice). Safe from any thread.
    public func send(_ datagram: UnsafeRawBufferPointer) throws {
        guard !datagram.isEmpty, datagram.count <= Self.maximumDatagramLength else {
            throw ICEError(.datagramTooLarge, "\(datagram.count) bytes (1...\(Self.maximumDatagramLength))")
        }
        let sent: gint = try stopped.withLock { stopped in
            guard !stopped else { throw ICEError(.stopped, "send after stop") }
            return rtc_nice_agent_send()(
                agent,
                streamID,
                1,
                guint(datagram.count),
                datagram.baseAddress!.assumingMemoryBound(to: gchar.self)
            )
        }
        guard sent == gint(datagram.count) else {
            throw ICEError(.notConnected, "libnice sent \(sent) of \(datagram.count) bytes (no selected pair?)")
        }
    }

    public func send(_ datagram: [UInt8]) throws {
        try datagram.withUnsafeBytes { try send($0) }
    }

    /// The selected pair's local socket and the remote address, for sending media with plain
    /// `sendto`/`sendmmsg` (the same copy → protect → burst path as SDES destinations). Nil
    /// before a pair is selected and for a relayed pair (libnice must wrap that in TURN: use
    /// `send`). Ask again after a `.selectedPair` event: the pair, and with it the socket, can
    /// change.
    public func selectedSocket() throws -> ICESelectedSocket? {
        try onLoop { () -> ICESelectedSocket? in
            guard let socket = rtc_nice_agent_get_selected_socket()(agent, streamID, 1) else { return nil }
            var local: UnsafeMutablePointer<NiceCandidate>?
            var remote: UnsafeMutablePointer<NiceCandidate>?
            guard rtc_nice_agent_get_selected_pair()(agent, streamID, 1, &local, &remote) != 0, let remote else {
                rtc_g_object_unref()(socket)
                return nil
            }
            var storage = sockaddr_storage()
            withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    rtc_nice_address_copy_to_sockaddr()(&remote.pointee.addr, $0)
                }
            }
            let length =
                Int32(storage.ss_family) == AF_INET6
                ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size
            return ICESelectedSocket(
                socket: socket,
                remoteAddress: storage,
                remoteAddressLength: socklen_t(length),
                remote: Self.endpoint(remote)
            )
        }
    }

    /// Detaches the handlers, closes the libnice agent (a TURN allocation is released with a
    /// zero-lifetime Refresh, waited for at most `closeWait`), frees it (its sockets close) and
    /// gives its loop back to the pool. No handler runs after it returns. Idempotent; not from
    /// this agent's own handlers. From another agent's handler on the same loop it does not wait
    /// for the TURN release, which completes on that loop: the agent is freed when it has.
    public func stop() {
        let first = stopped.withLock { stopped in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        let closed = DispatchSemaphore(value: 0)
        glib.sync {
            rtc_nice_agent_attach_recv()(agent, streamID, 1, glib.context, nil, nil)
            for handler in signalHandlers { rtc_g_signal_handler_disconnect()(UnsafeMutableRawPointer(agent), handler) }
            rtc_nice_agent_close_async()(
                agent,
                { _, _, user in
                    guard let user else { return }
                    Unmanaged<DispatchSemaphore>.fromOpaque(user).takeRetainedValue().signal()
                },
                Unmanaged.passRetained(closed).toOpaque()
            )
        }
        // libnice's close task holds its own reference, so the unref below never frees an agent
        // it is still closing.
        if !glib.isCurrent { _ = closed.wait(timeout: .now() + Self.closeWait) }
        glib.sync { rtc_g_object_unref()(UnsafeMutableRawPointer(agent)) }
        GLibLoopPool.shared.release(lease)
        core.inner.withLock { $0.state = .closed }
        Unmanaged.passUnretained(core).release()
    }

    /// Runs `body` on the GLib thread unless the agent is stopped.
    private func onLoop<T>(_ body: () throws -> T) throws -> T {
        guard !stopped.withLock({ $0 }) else { throw ICEError(.stopped, "the agent is stopped") }
        let result: Result<T, any Error> = glib.sync { Result { try body() } }
        return try result.get()
    }

    /// The screening libnice needs, on the parsed candidate, then libnice's own reading of the
    /// line SDP's `ICECandidate` writes for it (`a=` + `attribute`).
    private func addRemoteCandidateOnLoop(_ candidate: ICECandidate) throws -> Bool {
        let attribute = candidate.attribute
        guard attribute.utf8.count <= Self.maximumCandidateLength else {
            throw ICEError(.invalidCandidate, "candidate line longer than \(Self.maximumCandidateLength) bytes")
        }
        let line = "a=" + attribute
        // A value built in code, not parsed, could hold what the grammar forbids (a space in the
        // foundation would shift libnice's fields): the line must read back.
        guard (try? ICECandidate(attribute: line)) != nil else {
            throw ICEError(.invalidCandidate, "not an RFC 8839 candidate: \(line.prefix(120))")
        }
        if candidate.isMDNS {
            core.inner.withLock { $0.statistics.ignoredMDNSCandidates += 1 }
            configuration.log("ICE: ignoring mDNS candidate \(candidate.address):\(candidate.port) (not resolved)")
            return false
        }
        guard candidate.component == 1 else {
            core.inner.withLock { $0.statistics.ignoredOtherComponent += 1 }
            return false
        }
        guard candidate.transport == .udp else { return false }
        let room = core.inner.withLock { $0.statistics.remoteCandidates < Self.maximumRemoteCandidates }
        guard room else {
            throw ICEError(.tooManyCandidates, "more than \(Self.maximumRemoteCandidates) remote candidates")
        }
        guard let parsed = rtc_nice_agent_parse_remote_candidate_sdp()(agent, streamID, line) else {
            throw ICEError(.invalidCandidate, "libnice cannot parse: \(line.prefix(120))")
        }
        defer { rtc_nice_candidate_free()(parsed) }
        let list = rtc_g_slist_append()(nil, parsed)
        defer { rtc_g_slist_free()(list) }
        let added = rtc_nice_agent_set_remote_candidates()(agent, streamID, 1, list)
        guard added >= 0 else { throw ICEError(.invalidCandidate, "libnice refused \(candidate)") }
        core.inner.withLock { $0.statistics.remoteCandidates += 1 }
        return added > 0
    }
}

/// The selected pair's socket, for sending on the fast path. Holds a reference on libnice's
/// GSocket, so the descriptor stays open while this object lives, even after the agent switches
/// pairs or stops. Send only: libnice reads the socket (STUN, and the datagrams it hands to the
/// receive handler); never read, close or reconfigure `fd`.
public final class ICESelectedSocket: @unchecked Sendable {
    /// The UDP socket's descriptor (`g_socket_get_fd`), pinned to its interface by libnice
    /// (`IP_UNICAST_IF`).
    public let fd: Int32
    /// Where media goes: the selected remote candidate, as a `sockaddr_in` or `sockaddr_in6`.
    public let remoteAddress: sockaddr_storage
    public let remoteAddressLength: socklen_t
    public let remote: ICEEndpoint
    /// `GSocket *`, one reference owned.
    private let socket: UnsafeMutablePointer<GSocket>

    init(
        socket: UnsafeMutablePointer<GSocket>,
        remoteAddress: sockaddr_storage,
        remoteAddressLength: socklen_t,
        remote: ICEEndpoint
    ) {
        self.socket = socket
        self.fd = rtc_g_socket_get_fd()(socket)
        self.remoteAddress = remoteAddress
        self.remoteAddressLength = remoteAddressLength
        self.remote = remote
    }

    deinit { rtc_g_object_unref()(socket) }
}
