import DTLS
import ICE
import JSEP
import Logging
import MediaPipeline
import ProcessSupport
import SDP
import SendEngine
import Synchronization
import WHIP
import WebRTC

/// Publishes the one encode into a WHIP endpoint (RFC 9725) beside the room: our offer (we are
/// the controlling ICE agent and offer `actpass`), POST, the endpoint's answer, ICE and
/// DTLS-SRTP, then a destination like a room viewer's on the same copy → protect → burst path;
/// the endpoint's feedback (NACK, PLI/FIR, REMB, RR) is answered as any viewer's.
///
/// The driver of `WHIPSessionStateMachine`, which holds the policy (what is retried, when, and
/// what ends the run): this class does the I/O each transition asks for and feeds back what came
/// of it. A failed session is deleted and published anew after a backoff, announced on the status
/// line; the stream itself (SSRCs, clocks, sequence numbers) goes on, and the new session starts
/// at a key frame. A 4xx on the very first POST is reported through `fatal` and ends `run`.
final class WHIPPublication: Sendable {
    /// The publisher's destination id for the endpoint (in `--stats-json` `feedback`).
    static let destinationID = "whip"

    private let options: WHIPOptions
    let client: WHIPClient
    private let control: SessionControl
    private let publish: PublishOptions
    private let transportConfiguration: WebRTCTransport.Configuration
    private let logger: Logger
    /// Progress to stdout, refusals and errors to stderr (`PublishOutput`).
    private let output: PublishOutput
    /// The stream's SPS and PPS once it is described (the offer's profile-level-id).
    private let described: @Sendable () -> (sps: [UInt8], pps: [UInt8])?

    /// What the transport and the watchdog report to the session's loop.
    private enum Notice: Sendable {
        case transport(WebRTCTransport.Event)
        /// No RTCP from the endpoint for this long while live: the text says so.
        case mediaTimeout(String)
    }

    /// One session's pieces, from its POST to its DELETE; only `run`'s task touches them.
    private final class Attempt {
        let transport: WebRTCTransport
        let offer: PublishOffer
        let posted: ContinuousClock.Instant
        var session: WHIPSession
        var notices: AsyncStream<Notice>.AsyncIterator
        let continuation: AsyncStream<Notice>.Continuation
        var answer: PublishAnswer?
        var watchdog: Task<Void, Never>?

        init(
            transport: WebRTCTransport,
            offer: PublishOffer,
            posted: ContinuousClock.Instant,
            session: WHIPSession,
            notices: AsyncStream<Notice>,
            continuation: AsyncStream<Notice>.Continuation
        ) {
            self.transport = transport
            self.offer = offer
            self.posted = posted
            self.session = session
            self.notices = notices.makeAsyncIterator()
            self.continuation = continuation
        }
    }

    init(
        options: WHIPOptions,
        control: SessionControl,
        publish: PublishOptions,
        transportConfiguration: WebRTCTransport.Configuration,
        logger: Logger,
        output: PublishOutput,
        described: @escaping @Sendable () -> (sps: [UInt8], pps: [UInt8])?
    ) {
        self.options = options
        self.control = control
        self.publish = publish
        self.transportConfiguration = transportConfiguration
        self.logger = logger
        self.output = output
        self.described = described
        var configuration = WHIPClient.Configuration()
        configuration.token = options.token
        configuration.trustedCertificatesPEMPath = options.certificateAuthority
        client = WHIPClient(endpoint: options.endpoint, configuration: configuration)
    }

    /// Publishes until cancelled; `fatal` gets the line to exit with when the first POST is
    /// refused with a 4xx.
    func run(fatal: @Sendable (String) -> Void) async {
        var policy = WHIPSessionStateMachine.Policy()
        policy.maximumBackoff = options.maximumBackoff
        var machine = WHIPSessionStateMachine(policy: policy)
        report(machine.state)
        while described() == nil {
            guard (try? await Task.sleep(for: .milliseconds(20))) != nil else {
                if let state = machine.receive(.stopRequested).report { report(state) }
                return
            }
        }
        // The endpoint's STUN and TURN servers from the last 201 that named any.
        var iceServers: [WHIPICEServer] = []
        var current: Attempt?
        var transition = machine.receive(.start)
        while true {
            if let state = transition.report { report(state) }
            let event: WHIPSessionStateMachine.Event
            switch transition.action {
            case .none:
                // Nothing to do but wait for the transport, if there is a session to follow.
                guard let attempt = current, !machine.state.isFinal else { return }
                event = await next(attempt)
            case .postOffer(let number):
                update { $0.attempts = number }
                (current, event) = await post(iceServers: iceServers)
            case .startTransport(let session):
                guard let attempt = current else { return }
                if !session.iceServers.isEmpty { iceServers = session.iceServers }
                event = start(attempt)
            case .watchMedia:
                guard let attempt = current else { return }
                attempt.watchdog?.cancel()
                attempt.watchdog = startWatchdog(attempt.continuation)
                event = await next(attempt)
            case .patchICERestart(let reason):
                guard let attempt = current else { return }
                output.problem("WHIP: \(reason); restarting ICE over PATCH")
                event = await restart(attempt)
            case .deleteResource:
                if let attempt = current { await end(attempt) }
                current = nil
                event = .deleteDone
            case .scheduleRetry(let delay, let reason):
                retrying(after: delay, reason: reason)
                event = (try? await Task.sleep(for: delay)) != nil ? .timerFired : .stopRequested
            case .stopWithError(let reason):
                update { $0.lastError = reason }
                return fatal("WHIP endpoint \(options.endpoint) refused the offer: \(reason)")
            }
            transition = machine.receive(event)
            if case .iceChanged = event, case .live? = transition.report {
                output.progress("WHIP: ICE restarted, live again")
            }
        }
    }

    /// The state on the status line and in `--stats-json`; a stopped session has no resource or path.
    private func report(_ state: WHIPSessionStateMachine.State) {
        update {
            $0.state = state.description
            if state == .stopped {
                $0.resource = nil
                $0.path = nil
            }
        }
    }

    private func retrying(after delay: Duration, reason: String) {
        update {
            $0.lastError = reason
            $0.path = nil
            $0.srtpProfile = nil
        }
        logger.warning("WHIP session failed", metadata: ["reason": "\(reason)", "retry": "\(delay)"])
        output.problem("WHIP: \(reason); publishing again in \(delay)")
    }

    // MARK: One session

    /// Makes the offer and POSTs it: the session it created, or why there is none.
    private func post(iceServers: [WHIPICEServer]) async -> (Attempt?, WHIPSessionStateMachine.Event) {
        let (notices, continuation) = AsyncStream.makeStream(of: Notice.self)
        var configuration = configuration(using: iceServers)
        configuration.restartsICE = true
        let transport: WebRTCTransport
        do {
            transport = try WebRTCTransport(configuration, iceRole: .controlling) {
                continuation.yield(.transport($0))
            }
        } catch {
            return (nil, .networkError("cannot make the offer: \(error)"))
        }
        let offer: PublishOffer
        do {
            offer = try makeOffer(transport: transport, candidates: try await transport.gatherCandidates())
        } catch {
            transport.stop()
            return (nil, .networkError("cannot make the offer: \(error)"))
        }
        let posted = ContinuousClock.now
        let session: WHIPSession
        do {
            session = try await client.publish(offer: offer.sdp)
        } catch {
            transport.stop()
            if Task.isCancelled { return (nil, .stopRequested) }
            guard let status = error.status else { return (nil, .networkError("\(error)")) }
            return (nil, .httpError(status: status, reason: "\(error)"))
        }
        let answered = ContinuousClock.now
        update { $0.answerMs = Self.milliseconds(answered - posted) }
        let attempt = Attempt(
            transport: transport,
            offer: offer,
            posted: posted,
            session: session,
            notices: notices,
            continuation: continuation
        )
        return (attempt, .answerReceived(session))
    }

    /// Reads the answer and starts ICE and DTLS with it.
    private func start(_ attempt: Attempt) -> WHIPSessionStateMachine.Event {
        let session = attempt.session
        for link in session.ignoredLinks { logger.info("WHIP: Link header ignored", metadata: ["link": "\(link)"]) }
        update { $0.resource = "\(session.resource)" }
        let answer: PublishAnswer
        do {
            answer = try PublishAnswer(parsing: session.answer, answering: attempt.offer)
            try attempt.transport.start(remote: answer.remote, dtlsRole: answer.isDTLSClient ? .client : .server)
        } catch let error as JSEPError {
            return .answerRejected("the endpoint's answer SDP is refused: \(error.reason)")
        } catch {
            return .transportFailed("cannot start ICE and DTLS: \(error)")
        }
        attempt.answer = answer
        for rejected in answer.rejected { output.problem("WHIP: the endpoint rejected our section \(rejected)") }
        if let theirs = answer.video?.profileLevelID, let ours = attempt.offer.configuration.video?.profileLevelID,
            theirs.profile != ours.profile
        {
            logger.info(
                "WHIP: the answer names another H.264 profile",
                metadata: ["answer": "\(theirs)", "ours": "\(ours)"]
            )
        }
        output.progress(
            "WHIP: \(session.resource) created; ICE checking (\(answer.remote.candidates.count) candidates)"
        )
        return .transportStarted
    }

    /// The next transport notice that is an event of the session; a new ICE pair is applied on
    /// the way. The stream ends when `run` is cancelled: the publisher stops.
    private func next(_ attempt: Attempt) async -> WHIPSessionStateMachine.Event {
        while let notice = await attempt.notices.next() {
            switch notice {
            case .transport(.ice(let state)):
                return .iceChanged(WHIPSessionStateMachine.ICEProgress(state))
            case .transport(.phase(.handshaking)):
                return .handshaking
            case .transport(.connected(let link)):
                guard let answer = attempt.answer else { continue }
                do {
                    try connect(link, answer: answer, transport: attempt.transport)
                } catch {
                    return .transportFailed("cannot send to the endpoint: \(error)")
                }
                let setup = Self.milliseconds(ContinuousClock.now - attempt.posted)
                update { $0.setupMs = setup }
                output.progress("WHIP: live on \(link.pair.map { "\($0)" } ?? "?") (\(link.keys.profile))")
                return .transportConnected
            case .transport(.pathChanged(let link)):
                do {
                    _ = try control.sender.withLock {
                        try $0.replaceWebRTCPath(id: Self.destinationID, link: link, transport: attempt.transport)
                    }
                    update { $0.path = link.pair.map { "\($0)" } }
                } catch {
                    return .transportFailed("cannot send on the new ICE pair: \(error)")
                }
            case .transport(.phase(.failed(let reason))):
                return .transportFailed(reason)
            case .transport(.phase(.closed)):
                return .transportFailed("the endpoint closed DTLS (close_notify)")
            case .transport(.phase):
                continue
            case .transport(.iceLost(let reason)), .mediaTimeout(let reason):
                return .transportLost(reason)
            }
        }
        return .stopRequested
    }

    /// The ICE restart over PATCH (`restartICE`); the session keeps the new ETag.
    private func restart(_ attempt: Attempt) async -> WHIPSessionStateMachine.Event {
        guard let answer = attempt.answer else { return .restartFailed("no answer to restart from") }
        do {
            attempt.session.etag = try await restartICE(attempt.session, transport: attempt.transport, answer: answer)
            return .restartSucceeded
        } catch {
            return .restartFailed("\(error)")
        }
    }

    /// The endpoint becomes a destination: the answer's payload types, RTX when it kept ours,
    /// every simulcast layer when it took our simulcast with the rid extension (else layer 0
    /// alone, as a plain stream: RFC 8853 §5.3). Layers' RTX streams are told apart only by the
    /// repaired rid (RFC 8852 §3.2): without it, same-SSRC resends.
    private func connect(_ link: WebRTCLink, answer: PublishAnswer, transport: WebRTCTransport) throws {
        let takesLayers = answer.video?.simulcast?.isNegotiated == true && answer.video?.ridHeaderExtensionID != nil
        try control.sender.withLock { sender in
            let rtx =
                takesLayers && answer.video?.repairedRIDHeaderExtensionID == nil
                ? nil : answer.video?.retransmissionPayloadType
            try sender.addWebRTCDestination(
                id: Self.destinationID,
                link: link,
                transport: transport,
                audio: answer.audio != nil,
                options: DestinationOptions(
                    retransmission: rtx == nil ? .sameSSRC : .rtx,
                    payloadTypes: PayloadTypeRewrite(
                        sentVideo: sender.configuration.videoPayloadType,
                        sentAudio: sender.configuration.audioPayloadType,
                        video: answer.video?.payloadType ?? sender.configuration.videoPayloadType,
                        audio: answer.audio?.payloadType ?? sender.configuration.audioPayloadType,
                        retransmission: rtx
                    ),
                    transportWideSequenceNumberID: answer.video?.transportWideSequenceNumberID,
                    transportWideAudio: answer.audio?.transportWideSequenceNumberID != nil,
                    asksForKeyFrames: !(answer.video?.feedback ?? []).isDisjoint(with: [
                        .pictureLossIndication, .fullIntraRequest,
                    ]),
                    layers: takesLayers ? .all : .first
                )
            )
        }
        control.requestKeyFrame()  // The endpoint's decoders start at the next frame.
        if takesLayers, let layers = answer.video?.simulcast?.rids {
            output.progress("WHIP: simulcast layers \(layers.joined(separator: ", ")) taken by the endpoint")
        }
        control.media.statistics.withLock { $0.destinations += 1 }
        update {
            $0.connections += 1
            $0.lastError = nil
            $0.path = link.pair.map { "\($0)" }
            $0.srtpProfile = "\(link.keys.profile)"
        }
    }

    /// Once a second: no new RTCP from the endpoint for `mediaTimeout` ends the session (an SFU
    /// reports every second or so; consent freshness alone takes 30 s to notice a dead peer).
    private func startWatchdog(_ continuation: AsyncStream<Notice>.Continuation) -> Task<Void, Never> {
        let control = self.control
        let timeout = options.mediaTimeout
        return Task {
            var lastCount = -1
            var lastChange = ContinuousClock.now
            while (try? await Task.sleep(for: .seconds(1))) != nil {
                let count = control.snapshot().feedback[Self.destinationID]?.rtcpPackets ?? 0
                if count != lastCount {
                    (lastCount, lastChange) = (count, .now)
                } else if ContinuousClock.now - lastChange >= timeout {
                    continuation.yield(.mediaTimeout("no RTCP from the endpoint for \(timeout)"))
                    return
                }
            }
        }
    }

    /// After any end: the destination goes (with a BYE), the resource is deleted (RFC 9725 §4.4)
    /// and the transport closes. The DELETE runs in a task of its own, so a stop (which cancels
    /// `run`) still sends it.
    private func end(_ attempt: Attempt) async {
        attempt.watchdog?.cancel()
        attempt.continuation.finish()
        let removed = control.sender.withLock {
            $0.removeDestination(id: Self.destinationID, reason: "WHIP session ended")
        }
        if removed { control.media.statistics.withLock { $0.destinations -= 1 } }
        await delete(attempt.session)
        attempt.transport.stop()
        update { $0.resource = nil }
    }

    /// Deletes `session` and waits at most the client's DELETE timeout.
    private func delete(_ session: WHIPSession) async {
        let client = self.client
        let status = await Task { () -> String in
            do {
                return "\(try await client.delete(session))"
            } catch {
                return "\(error)"
            }
        }.value
        logger.info("WHIP: DELETE", metadata: ["resource": "\(session.resource)", "result": "\(status)"])
    }

    // MARK: Pieces

    /// The subscribers' transport settings, plus the endpoint's STUN and TURN servers from its
    /// `Link` headers (RFC 9725 §4.6) where the command line named none.
    private func configuration(using servers: [WHIPICEServer]) -> WebRTCTransport.Configuration {
        var configuration = transportConfiguration
        for server in servers {
            switch server.scheme {
            case "stun" where configuration.stunServer == nil:
                configuration.stunServer = ICEAgent.Server(host: server.host, port: server.port)
            case "turn" where configuration.turnServer == nil && server.transport != "tcp":
                guard let username = server.username, let credential = server.credential else { continue }
                configuration.turnServer = ICEAgent.TURNServer(
                    server: ICEAgent.Server(host: server.host, port: server.port),
                    username: username,
                    password: credential
                )
            default:
                continue
            }
        }
        return configuration
    }

    private func makeOffer(transport: WebRTCTransport, candidates: [ICECandidate]) throws -> PublishOffer {
        guard let sets = described() else { throw PublishError("the stream is not described yet") }
        return try control.sender.withLock { sender in
            try PublishOffer(
                PublishOffer.Configuration(
                    sender: sender,
                    transport: transport,
                    options: publish,
                    sps: sets.sps,
                    candidates: candidates
                )
            )
        }
    }

    /// Copies the endpoint's round trip, loss and REMB from its destination's feedback (once a
    /// second, before the status line is made).
    func refreshStatistics() {
        control.statistics.withLock { statistics in
            guard statistics.whip != nil else { return }
            let feedback = statistics.feedback[Self.destinationID]
            statistics.whip?.rttMs = feedback?.video?.roundTripMilliseconds
            statistics.whip?.lossPercent = feedback?.video.map { $0.fractionLost * 100 }
            statistics.whip?.bitrateCapKbps = feedback?.receiverEstimatedMaximumBitrate.map { Int($0 / 1000) }
        }
    }

    static func milliseconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) * 1000 + Double(attoseconds) / 1e15
    }

    /// Changes the `whip` statistics (and copies the endpoint's RTT, loss and REMB into them).
    func update(_ change: (inout WHIPStatistics) -> Void) {
        control.statistics.withLock { statistics in
            var whip = statistics.whip ?? WHIPStatistics(state: "\(WHIPSessionStateMachine.State.idle)")
            change(&whip)
            statistics.whip = whip
        }
    }
}

extension WHIPSessionStateMachine.ICEProgress {
    /// The agent's state, as the machine names it.
    init(_ state: ICEState) {
        switch state {
        case .new: self = .new
        case .gathering: self = .gathering
        case .connecting: self = .connecting
        case .connected: self = .connected
        case .ready: self = .ready
        case .failed: self = .failed
        case .consentLost: self = .consentLost
        case .closed: self = .closed
        }
    }
}
