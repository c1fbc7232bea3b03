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
/// A session that fails (5xx, no answer, an answer we cannot use, ICE or DTLS failure, consent
/// lost, no RTCP for `mediaTimeout`) is deleted and published anew after a backoff, announced on
/// the status line; the stream itself (SSRCs, clocks, sequence numbers) goes on, and the new
/// session starts at a key frame. A 4xx on the very first POST is the user's to fix (a bad token,
/// no such endpoint): `run` reports it through `fatal` and ends.
final class WHIPPublication: Sendable {
    /// The publisher's destination id for the endpoint (in `--stats-json` `feedback`).
    static let destinationID = "whip"
    /// ICE restarts in a row without ICE connecting again before a new session is published.
    static let maximumRestartsWithoutRecovery = 3

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

    /// What the transport and the watchdog report to the attempt's loop.
    private enum Notice: Sendable {
        case transport(WebRTCTransport.Event)
        /// No RTCP from the endpoint for this long while live: the text says so.
        case mediaTimeout(String)
    }

    private enum Outcome {
        /// A 4xx: the request itself is wrong.
        case refused(WHIPError)
        case failed(String, wasLive: Bool)
        case cancelled
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
        update { $0 = WHIPStatistics(state: "waiting for the stream") }
        while described() == nil {
            guard (try? await Task.sleep(for: .milliseconds(20))) != nil else { return finish() }
        }
        var backoff = Duration.seconds(1)
        var iceServers: [WHIPICEServer] = []
        var attempt = 0
        while !Task.isCancelled {
            attempt += 1
            switch await publishOnce(iceServers: &iceServers) {
            case .cancelled:
                return finish()
            case .refused(let error) where attempt == 1:
                update {
                    $0.state = "refused"
                    $0.lastError = error.description
                }
                fatal("WHIP endpoint \(options.endpoint) refused the offer: \(error)")
                return
            case .refused(let error):
                retrying(after: backoff, reason: "\(error)")
            case .failed(let reason, let wasLive):
                if wasLive { backoff = .seconds(1) }
                retrying(after: backoff, reason: reason)
            }
            guard (try? await Task.sleep(for: backoff)) != nil else { return finish() }
            backoff = min(backoff * 2, options.maximumBackoff)
        }
        finish()
    }

    private func retrying(after delay: Duration, reason: String) {
        update {
            $0.state = "retrying in \(delay)"
            $0.lastError = reason
            $0.path = nil
            $0.srtpProfile = nil
        }
        logger.warning("WHIP session failed", metadata: ["reason": "\(reason)", "retry": "\(delay)"])
        output.problem("WHIP: \(reason); publishing again in \(delay)")
    }

    private func finish() {
        update {
            $0.state = "stopped"
            $0.resource = nil
            $0.path = nil
        }
    }

    // MARK: One session

    /// One session from offer to its end: failure, cancellation (stop), or refusal.
    private func publishOnce(iceServers: inout [WHIPICEServer]) async -> Outcome {
        update {
            $0.attempts += 1
            $0.state = "posting"
        }
        let (notices, continuation) = AsyncStream.makeStream(of: Notice.self)
        var configuration = configuration(using: iceServers)
        configuration.restartsICE = true
        let transport: WebRTCTransport
        do {
            transport = try WebRTCTransport(configuration, iceRole: .controlling) {
                continuation.yield(.transport($0))
            }
        } catch {
            return .failed("cannot make the offer: \(error)", wasLive: false)
        }
        let offer: PublishOffer
        do {
            offer = try makeOffer(transport: transport, candidates: try await transport.gatherCandidates())
        } catch {
            transport.stop()
            return .failed("cannot make the offer: \(error)", wasLive: false)
        }
        let session: WHIPSession
        let posted = ContinuousClock.now
        do {
            session = try await client.publish(offer: offer.sdp)
            let answered = ContinuousClock.now
            update { $0.answerMs = Self.milliseconds(answered - posted) }
        } catch {
            transport.stop()
            if Task.isCancelled { return .cancelled }
            return error.isClientError ? .refused(error) : .failed("\(error)", wasLive: false)
        }
        if !session.iceServers.isEmpty { iceServers = session.iceServers }
        for link in session.ignoredLinks { logger.info("WHIP: Link header ignored", metadata: ["link": "\(link)"]) }
        update { $0.resource = "\(session.resource)" }
        let outcome = await follow(
            session,
            offer: offer,
            transport: transport,
            posted: posted,
            notices: notices,
            continuation
        )
        continuation.finish()
        await end(session, transport: transport)
        return outcome
    }

    /// Reads the answer, starts ICE and DTLS, and follows the transport until it ends.
    private func follow(
        _ session: WHIPSession,
        offer: PublishOffer,
        transport: WebRTCTransport,
        posted: ContinuousClock.Instant,
        notices: AsyncStream<Notice>,
        _ continuation: AsyncStream<Notice>.Continuation
    ) async -> Outcome {
        let answer: PublishAnswer
        do {
            answer = try PublishAnswer(parsing: session.answer, answering: offer)
            try transport.start(remote: answer.remote, dtlsRole: answer.isDTLSClient ? .client : .server)
        } catch let error as JSEPError {
            return .failed("the endpoint's answer SDP is refused: \(error.reason)", wasLive: false)
        } catch {
            return .failed("cannot start ICE and DTLS: \(error)", wasLive: false)
        }
        for rejected in answer.rejected { output.problem("WHIP: the endpoint rejected our section \(rejected)") }
        if let theirs = answer.video?.profileLevelID, let ours = offer.configuration.video?.profileLevelID,
            theirs.profile != ours.profile
        {
            logger.info(
                "WHIP: the answer names another H.264 profile",
                metadata: ["answer": "\(theirs)", "ours": "\(ours)"]
            )
        }
        update { $0.state = "connecting" }
        output.progress(
            "WHIP: \(session.resource) created; ICE checking (\(answer.remote.candidates.count) candidates)"
        )
        var watchdog: Task<Void, Never>?
        defer { watchdog?.cancel() }
        var live = false
        /// ICE restarts since ICE last connected: a path down for longer than one restart's checks
        /// gets a few more before the session is given up.
        var restartsWithoutRecovery = 0
        var session = session
        for await notice in notices {
            switch notice {
            case .transport(.ice(let state)) where !live:
                update { $0.state = "ice \(state)" }
            case .transport(.ice(let state)):
                if restartsWithoutRecovery > 0, state == .connected || state == .ready {
                    restartsWithoutRecovery = 0
                    update { $0.state = "live" }
                    output.progress("WHIP: ICE restarted, live again")
                }
            case .transport(.phase(.handshaking)):
                update { $0.state = "dtls-handshake" }
            case .transport(.connected(let link)):
                do {
                    try connect(link, answer: answer, transport: transport)
                } catch {
                    return .failed("cannot send to the endpoint: \(error)", wasLive: false)
                }
                live = true
                let setup = Self.milliseconds(ContinuousClock.now - posted)
                update { $0.setupMs = setup }
                watchdog = startWatchdog(continuation)
                output.progress("WHIP: live on \(link.pair.map { "\($0)" } ?? "?") (\(link.keys.profile))")
            case .transport(.pathChanged(let link)):
                do {
                    _ = try control.sender.withLock {
                        try $0.replaceWebRTCPath(id: Self.destinationID, link: link, transport: transport)
                    }
                    update { $0.path = link.pair.map { "\($0)" } }
                } catch {
                    return .failed("cannot send on the new ICE pair: \(error)", wasLive: live)
                }
            case .transport(.phase(.failed(let reason))):
                return .failed(reason, wasLive: live)
            case .transport(.phase(.closed)):
                return .failed("the endpoint closed DTLS (close_notify)", wasLive: live)
            case .transport(.phase):
                break
            case .transport(.iceLost(let reason)), .mediaTimeout(let reason):
                // RFC 9725 §4.3.2: an endpoint that accepts PATCH can restart ICE and keep the
                // session (its viewers keep their subscription).
                guard live, session.acceptsTrickle, restartsWithoutRecovery < Self.maximumRestartsWithoutRecovery else {
                    return .failed(reason, wasLive: live)
                }
                output.problem("WHIP: \(reason); restarting ICE over PATCH")
                do {
                    session.etag = try await restartICE(session, transport: transport, answer: answer)
                } catch {
                    return .failed("\(reason); the ICE restart failed: \(error)", wasLive: live)
                }
                restartsWithoutRecovery += 1
                watchdog?.cancel()
                watchdog = startWatchdog(continuation)
            }
        }
        return .cancelled
    }

    /// The endpoint becomes a destination: the answer's payload types, RTX when it kept ours.
    private func connect(_ link: WebRTCLink, answer: PublishAnswer, transport: WebRTCTransport) throws {
        try control.sender.withLock { sender in
            let rtx = answer.video?.retransmissionPayloadType
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
                    transportWideAudio: answer.audio?.transportWideSequenceNumberID != nil
                )
            )
        }
        control.requestKeyFrame()  // The endpoint's decoders start at the next frame.
        control.media.statistics.withLock { $0.destinations += 1 }
        update {
            $0.state = "live"
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
    private func end(_ session: WHIPSession, transport: WebRTCTransport) async {
        let removed = control.sender.withLock {
            $0.removeDestination(id: Self.destinationID, reason: "WHIP session ended")
        }
        if removed { control.media.statistics.withLock { $0.destinations -= 1 } }
        await delete(session)
        transport.stop()
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
            var whip = statistics.whip ?? WHIPStatistics(state: "starting")
            change(&whip)
            statistics.whip = whip
        }
    }
}
