import DTLS
import Dispatch
import ICE
import JSEP
import SDP
import Synchronization
import Transport

/// One WebRTC peer's transport (RFC 8829 §4, RFC 8843 BUNDLE, RFC 5761 rtcp-mux): an ICE agent
/// (controlled for a viewer, whose offer we answer; controlling toward a WHIP endpoint, to which
/// we offer) and a DTLS-SRTP session on its one 5-tuple, demultiplexed as RFC 7983 says. It ends in a `WebRTCLink`: the SRTP keys the handshake exported and the socket the
/// selected pair sends from, which the publisher's destination uses like an SDES one.
///
/// Use: `init`, `gatherCandidates()`, write our description (answer or offer) with
/// `localCredentials`, `fingerprint` and those candidates, then, once both descriptions are known,
/// `start(remote:dtlsRole:)`. Events report each phase;
/// `.connected` carries the link (and `.pathChanged` a new one when ICE switches pairs). SRTCP
/// the peer sends lands in `inbox`. `stop()` ends it (close_notify when connected).
///
/// Threads: libnice calls back on its GLib thread, the DTLS timer fires on a queue of its own;
/// both take `lock` for the DTLS session and the phase, and send after releasing it. `onEvent`
/// runs on either, in order for one transport, and must not block: hand the work on.
public final class WebRTCTransport: @unchecked Sendable {
    public enum Event: Sendable {
        /// The transport's phase changed (a failure carries its reason).
        case phase(WebRTCTransportPhase)
        /// ICE's own state changed (for the status line).
        case ice(ICEState)
        /// DTLS is done: media may flow on `link`.
        case connected(WebRTCLink)
        /// ICE selected another pair after connecting: send on this link from now on.
        case pathChanged(WebRTCLink)
        /// Connected, then ICE failed or consent was lost, with `Configuration.restartsICE`: the
        /// transport waits (DTLS and SRTP kept) for `restartICE()` or `stop()`.
        case iceLost(String)
    }

    public struct Statistics: Sendable, Equatable {
        /// DTLS datagrams that came before ICE passed (dropped).
        public var dtlsBeforeICE = 0
        /// DTLS datagrams the session refused (malformed, after failure), each logged once a second at most.
        public var dtlsRefused = 0
        /// SRTP from the peer: a recvonly viewer or endpoint sends none, so it is dropped.
        public var srtpIgnored = 0
        /// SRTCP put into the inbox.
        public var srtcpReceived = 0
        /// DTLS flights resent on timeout.
        public var dtlsRetransmissions = 0
    }

    public let configuration: Configuration
    /// The viewer's SRTCP (receiver reports, NACK, PLI, REMB), for the sender thread.
    public let inbox: DatagramInbox
    /// Our `a=ice-ufrag` and `a=ice-pwd`.
    public var localCredentials: ICECredentials { agent.localCredentials }
    /// The `a=fingerprint` of our certificate.
    public var fingerprint: DTLSFingerprint { configuration.certificate.fingerprint }
    public var phase: WebRTCTransportPhase { core.withLock { $0.machine.phase } }
    public var iceState: ICEState { agent.state }
    public var statistics: Statistics { core.withLock { $0.statistics } }
    public var iceStatistics: ICEStatistics { agent.statistics }

    /// `@unchecked Sendable`: only ever touched under `core`'s lock (the DTLS session in it is a
    /// class OpenSSL state lives in).
    private struct Core: @unchecked Sendable {
        var machine = WebRTCTransportMachine()
        var dtls: DTLSSession?
        var statistics = Statistics()
        /// DTLS that arrived while ICE was still checking on its side; replayed once it passes.
        var early: [[UInt8]] = []
        var gathered: [ICECandidate]?
        /// When the handshake must be done, from the moment ICE passed.
        var handshakeDeadline: ContinuousClock.Instant?
        /// When `start` gave ICE the peer's description: the connect deadlines count from here.
        var checksStarted: ContinuousClock.Instant?
        var lastRefusalLog: ContinuousClock.Instant?
        var onEvent: (@Sendable (Event) -> Void)?
    }

    /// A ClientHello that overtook the ICE check that would let it in: kept, at most this many.
    static let maximumEarlyDatagrams = 4

    private let agent: ICEAgent
    private let core: Mutex<Core>
    private let timerQueue = DispatchQueue(label: "rtc-webrtc-dtls")
    private let timer: DispatchSourceTimer

    /// Creates the ICE agent on the configured addresses and servers: `controlled` when we answer
    /// (viewers), `controlling` when we offer (WHIP; RFC 8445 §6.1.1).
    public init(
        _ configuration: Configuration,
        iceRole: ICERole = .controlled,
        onEvent: @escaping @Sendable (Event) -> Void
    ) throws {
        try configuration.validate()
        self.configuration = configuration
        self.inbox = try DatagramInbox()
        self.core = Mutex(Core(onEvent: onEvent))
        let relay = CallbackRelay()
        self.agent = try ICEAgent(
            ICEAgent.Configuration(
                role: iceRole,
                localAddresses: configuration.localAddresses,
                stunServer: configuration.stunServer,
                turnServer: configuration.turnServer,
                relayOnly: configuration.relayOnly,
                portRange: configuration.portRange,
                log: configuration.log
            ),
            onEvent: { event in relay.transport?.handle(event) },
            onReceive: { bytes, kind in relay.transport?.receive(bytes, kind) }
        )
        timer = DispatchSource.makeTimerSource(queue: timerQueue)
        relay.transport = self
        timer.setEventHandler { [weak self] in self?.timerFired() }
        timer.activate()
    }

    deinit {
        timer.cancel()
        agent.stop()
    }

    /// Gathers our candidates and returns them once gathering is done, or after `timeout` with
    /// those found so far (host candidates come at once; a STUN or TURN server that does not
    /// answer must not hold the viewer up).
    /// Under a relay-only policy the relayed candidates' related addresses are hidden.
    public func gatherCandidates(timeout: Duration = .seconds(3)) async throws -> [ICECandidate] {
        try agent.gather()
        let deadline = ContinuousClock.now + timeout
        var candidates: [ICECandidate]?
        while ContinuousClock.now < deadline {
            if let done = core.withLock({ $0.gathered }) {
                candidates = done
                break
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        if candidates == nil {
            let partial = agent.localCandidates
            configuration.log("ICE: gathering not done after \(timeout); answering with \(partial.count) candidates")
            candidates = partial
        }
        let found = candidates ?? []
        guard configuration.relayOnly else { return found }
        guard !found.isEmpty else {
            let server = configuration.turnServer.map { "\($0.server)" } ?? "none"
            throw ICEError(.agent, "relay-only policy, but the TURN server (\(server)) gave no relayed candidate")
        }
        return found.map(\.relatedAddressHidden)
    }

    /// Both descriptions are known: gives ICE the peer's credentials and candidates (a complete
    /// description: its candidate list ends here) and sets up our DTLS side in `dtlsRole`, checking
    /// the peer's certificate against its description's sha-256 fingerprint.
    public func start(remote: WebRTCAnswer.RemoteTransport, dtlsRole: DTLSRole) throws {
        guard let offered = remote.fingerprints.first(where: { $0.hashFunction == .sha256 }) else {
            throw DTLSError(
                .invalidConfiguration,
                "the peer's description has no sha-256 a=fingerprint (RFC 8827 §6.5)"
            )
        }
        let session = try DTLSSession(
            DTLSSession.Configuration(
                role: dtlsRole,
                certificate: configuration.certificate,
                remoteFingerprint: try DTLSFingerprint(bytes: offered.digest),
                handshakeTimeout: configuration.handshakeTimeout
            )
        )
        let started = core.withLock { core in
            guard core.machine.descriptionsExchanged() else { return false }
            core.dtls = session
            core.checksStarted = .now
            return true
        }
        guard started else { throw ICEError(.stopped, "the transport already ended (\(phase))") }
        emit(.phase(.checking))
        try agent.setRemoteCredentials(remote.ice)
        try agent.addRemoteCandidates(remote.candidates)
        // The offer was complete (JSEP without trickle): no more candidates will come.
        try agent.remoteCandidatesComplete()
        // ICE may take long to find nothing (a viewer that never checks): the whole connection,
        // not only the handshake, has a deadline, and a peer that never checks a shorter one.
        schedule(
            after: min(configuration.firstCheckTimeout ?? configuration.connectTimeout, configuration.connectTimeout)
        )
    }

    /// Sends one protected datagram through libnice (a TURN-relayed pair: libnice wraps it).
    public func sendRelayed(_ datagram: UnsafeRawBufferPointer) -> Bool {
        (try? agent.send(datagram)) != nil
    }

    /// Ends the transport: close_notify when connected, then the agent and its sockets go. No
    /// event follows. Idempotent; not from an event handler.
    public func stop() {
        let goodbye = core.withLock { core -> [[UInt8]] in
            core.onEvent = nil
            _ = core.machine.close()
            return core.dtls?.close().datagrams ?? []
        }
        for datagram in goodbye { try? agent.send(datagram) }
        timer.cancel()
        agent.stop()
    }

    // MARK: Events from ICE (GLib thread)

    private func handle(_ event: ICEEvent) {
        switch event {
        case .gatheringDone(let candidates):
            core.withLock { $0.gathered = candidates }
        case .state(let state, _):
            emit(.ice(state))
            switch state {
            case .connected, .ready: iceConnected()
            case .failed: iceLost("ICE failed: no candidate pair answered our checks")
            case .consentLost: iceLost("consent lost: the peer stopped answering ICE consent checks (RFC 7675)")
            default: break
            }
        case .selectedPair:
            guard phase == .connected, let link = try? currentLink() else { return }
            emit(.pathChanged(link))
        case .localCandidate, .peerReflexive:
            break
        }
    }

    /// A connected transport whose owner can restart ICE (`restartsICE`) keeps its DTLS session
    /// and reports the loss; any other fails.
    private func iceLost(_ reason: String) {
        guard configuration.restartsICE, phase == .connected else { return fail(reason) }
        emit(.iceLost(reason))
    }

    /// RFC 8445 §9: new local credentials and checks from the start on the same candidates, while
    /// DTLS and SRTP go on (RFC 8842 §4.4: an ICE restart alone does not renegotiate DTLS). The
    /// peer's new credentials follow with `completeICERestart`; `.pathChanged` reports the pair.
    public func restartICE() throws -> ICECredentials {
        guard phase == .connected else {
            throw ICEError(.stopped, "only a connected transport restarts ICE (\(phase))")
        }
        return try agent.restart()
    }

    /// The peer's side of the restart: its new credentials and candidates (a complete list).
    public func completeICERestart(remote credentials: ICECredentials, candidates: [ICECandidate]) throws {
        try agent.setRemoteCredentials(credentials)
        try agent.addRemoteCandidates(candidates)
        try agent.remoteCandidatesComplete()
    }

    /// Our candidates (the same after an ICE restart: the sockets stay).
    public var localCandidates: [ICECandidate] { agent.localCandidates }

    private func iceConnected() {
        let started = core.withLock { core -> Result<(DTLSOutput, [[UInt8]]), DTLSError>? in
            guard core.machine.iceConnected(), let dtls = core.dtls else { return nil }
            core.handshakeDeadline = .now + configuration.handshakeTimeout
            let early = core.early
            core.early = []
            guard dtls.role == .client else { return .success((DTLSOutput(), early)) }
            do {
                return .success((try dtls.start(), early))
            } catch let error as DTLSError {
                return .failure(error)
            } catch {
                return .failure(DTLSError(.openSSL, "\(error)"))
            }
        }
        let output: DTLSOutput
        let early: [[UInt8]]
        switch started {
        case nil: return
        case .failure(let error):
            fail("DTLS: \(error.message)")
            return
        case .success(let result): (output, early) = result
        }
        emit(.phase(.handshaking))
        deliver(output)
        for datagram in early { datagram.withUnsafeBytes { receiveDTLS($0) } }
        schedule(after: configuration.handshakeTimeout)
    }

    // MARK: Datagrams (GLib thread)

    private func receive(_ bytes: UnsafeRawBufferPointer, _ kind: ICEDatagramClass) {
        switch kind {
        case .dtls:
            receiveDTLS(bytes)
        case .srtcp:
            let connected = core.withLock { core in
                guard core.machine.phase == .connected else { return false }
                core.statistics.srtcpReceived += 1
                return true
            }
            if connected { inbox.put(bytes) }
        case .srtp:
            core.withLock { $0.statistics.srtpIgnored += 1 }
        }
    }

    private func receiveDTLS(_ bytes: UnsafeRawBufferPointer) {
        let result = core.withLock { core -> Result<DTLSOutput, DTLSError>? in
            guard core.machine.phase.iceHasPassed, let dtls = core.dtls else {
                // RFC 8842 §5: DTLS only on a 5-tuple ICE has checked. A ClientHello may overtake
                // the check that completes our side: kept for a moment, not answered.
                if case .checking = core.machine.phase, core.early.count < Self.maximumEarlyDatagrams {
                    core.early.append(Array(bytes))
                } else {
                    core.statistics.dtlsBeforeICE += 1
                }
                return nil
            }
            do {
                return .success(try dtls.receive(bytes))
            } catch let error as DTLSError {
                core.statistics.dtlsRefused += 1
                return .failure(error)
            } catch {
                core.statistics.dtlsRefused += 1
                return .failure(DTLSError(.openSSL, "\(error)"))
            }
        }
        switch result {
        case .success(let output): deliver(output)
        case .failure(let error): logRefusal(error)
        case nil: break
        }
    }

    /// Sends a session's datagrams and acts on its events.
    private func deliver(_ output: DTLSOutput) {
        for datagram in output.datagrams { try? agent.send(datagram) }
        for event in output.events {
            switch event {
            case .connected:
                dtlsConnected()
            case .failed(let error):
                fail("DTLS: \(error.message)")
            case .closedByPeer:
                let closed = core.withLock { $0.machine.close() }
                if closed { emit(.phase(.closed)) }
            }
        }
        rescheduleDTLSTimer()
    }

    private func dtlsConnected() {
        let connected = core.withLock { $0.machine.dtlsConnected() }
        guard connected else { return }
        do {
            let link = try currentLink()
            emit(.phase(.connected))
            emit(.connected(link))
        } catch {
            fail("no usable ICE path after the handshake: \(error)")
        }
    }

    private func currentLink() throws -> WebRTCLink {
        guard let keys = core.withLock({ $0.dtls?.srtpKeys }) else {
            throw DTLSError(.invalidState, "no SRTP keys exported")
        }
        return WebRTCLink(keys: keys, pair: agent.selectedPair, socket: try agent.selectedSocket())
    }

    private func fail(_ reason: String) {
        let failed = core.withLock { $0.machine.fail(reason) }
        if failed { emit(.phase(.failed(reason))) }
    }

    /// A refused DTLS datagram is logged at most once a second: garbage on the media port must not
    /// flood the log.
    private func logRefusal(_ error: DTLSError) {
        let now = ContinuousClock.now
        let due = core.withLock { core -> Bool in
            if let last = core.lastRefusalLog, now - last < .seconds(1) { return false }
            core.lastRefusalLog = now
            return true
        }
        if due { configuration.log("DTLS datagram refused (\(error.code)): \(error.message)") }
    }

    private func emit(_ event: Event) {
        core.withLock { $0.onEvent }?(event)
    }

    // MARK: Timers (timer queue)

    /// Arms the one timer: the connection deadline, the handshake deadline, or the DTLS
    /// retransmission timer, whichever the phase needs next.
    private func schedule(after delay: Duration) {
        let (seconds, attoseconds) = delay.components
        let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
        timer.schedule(deadline: .now() + .nanoseconds(max(nanoseconds, 1_000_000)))
    }

    private func rescheduleDTLSTimer() {
        let next = core.withLock { core -> Duration? in
            guard case .handshaking = core.machine.phase else { return nil }
            let retransmit = core.dtls?.nextTimeout
            let deadline = core.handshakeDeadline.map { max(.zero, ContinuousClock.now.duration(to: $0)) }
            switch (retransmit, deadline) {
            case (let a?, let b?): return min(a, b)
            case (let a?, nil): return a
            case (nil, let b?): return b
            case (nil, nil): return nil
            }
        }
        if let next { schedule(after: next) }
    }

    private func timerFired() {
        let now = ContinuousClock.now
        let (phase, deadline) = core.withLock { ($0.machine.phase, $0.handshakeDeadline) }
        switch phase {
        case .gathering, .checking:
            let elapsed =
                core.withLock { $0.checksStarted }.map { $0.duration(to: now) } ?? configuration.connectTimeout
            if elapsed >= configuration.connectTimeout {
                fail("ICE did not connect within \(configuration.connectTimeout)")
            } else if let firstCheck = configuration.firstCheckTimeout, !agent.statistics.peerChecksReceived {
                fail(
                    "no ICE connectivity check from the peer within \(firstCheck) of the answer "
                        + "(the answer never reached it, or it never started ICE)"
                )
            } else {
                // Its checks began: it keeps the whole connect timeout.
                schedule(after: configuration.connectTimeout - elapsed)
            }
        case .handshaking:
            if let deadline, now >= deadline {
                fail("no DTLS handshake within \(configuration.handshakeTimeout) of ICE connecting")
                return
            }
            let output = core.withLock { core -> DTLSOutput? in
                guard let dtls = core.dtls else { return nil }
                let before = dtls.retransmissions
                let output = dtls.handleTimeout()
                core.statistics.dtlsRetransmissions += dtls.retransmissions - before
                return output
            }
            if let output { deliver(output) } else { rescheduleDTLSTimer() }
        case .connected, .failed, .closed:
            break
        }
    }
}

/// Lets the agent's callbacks reach the transport without the agent keeping it alive.
private final class CallbackRelay: @unchecked Sendable {
    weak var transport: WebRTCTransport?
}
