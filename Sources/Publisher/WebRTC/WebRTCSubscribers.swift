import DTLS
import JSEP
import Logging
import Media
import MediaPipeline
import ProcessSupport
import SDP
import SendEngine
import Synchronization
import WebRTC

/// The publisher's WebRTC viewers, from offer to removal: each gets a `WebRTCTransport` (ICE,
/// then DTLS-SRTP), an answer written from the offer's own numbers, and, once connected, a
/// destination on the one encode like any other (`MediaSender.addWebRTCDestination`).
///
/// The driver of each viewer's `WebRTCViewerStateMachine`: the machine says what a subscribe or a
/// transport event means, this class does the transport's and the sender's side of it and keeps
/// the viewer's status entry, and `RoomPresence` does the signaling side. The table holds only
/// viewers that are answered and not ended: a final transition takes the viewer out at once.
///
/// Transport events arrive on libnice's and the DTLS timer's threads; they are only queued there
/// (`events`) and acted on by `RoomPresence`'s task, which can also tell the subscriber.
final class WebRTCSubscribers: @unchecked Sendable {
    struct Viewer {
        var transport: WebRTCTransport
        var answer: WebRTCAnswer
        var machine: WebRTCViewerStateMachine
        /// The codec group it watches (VP8, VP9); nil: the H.264 stream.
        var group: CodecGroup?
    }

    /// One transport event of one subscriber.
    struct Notice: Sendable {
        var subscriber: String
        var transport: WebRTCTransport
        var event: WebRTCTransport.Event
    }

    /// A subscribe refused before anything was made for it (`--max-viewers`): said as any refusal.
    struct Refusal: Error {
        var reason: String
    }

    /// A viewer out of the table: its transport stops (`release`) once its destination is gone.
    struct Removed {
        var transport: WebRTCTransport
        var ending: WebRTCViewerStateMachine.Ending
        /// No viewer is left.
        var wasLast: Bool
    }

    /// What a transport event leaves for the room to do.
    enum Outcome {
        case none
        /// A destination now: the room asks its stream (`group`, or H.264) for a key frame,
        /// counts it and says so.
        case connected(WebRTCLink, group: CodecGroup?)
        /// Sent to on the new pair from now on.
        case pathChanged(WebRTCLink)
        /// Out of the table: the room removes its destination, releases it, says why.
        case removed(Removed)
    }

    let events: AsyncStream<Notice>
    private let continuation: AsyncStream<Notice>.Continuation
    private let configuration: WebRTCTransport.Configuration
    private let control: SessionControl
    private let options: PublishOptions
    private let viewers = Mutex<[String: Viewer]>([:])

    init(configuration: WebRTCTransport.Configuration, control: SessionControl, options: PublishOptions) {
        self.configuration = configuration
        self.control = control
        self.options = options
        (events, continuation) = AsyncStream.makeStream(of: Notice.self)
    }

    /// The `--dtls-cert`/`--dtls-key` certificate, or a fresh ECDSA P-256 one.
    static func certificate(_ options: WebRTCOptions) throws -> DTLSCertificate {
        switch (options.certificatePath, options.privateKeyPath) {
        case (let certificate?, let key?):
            return try DTLSCertificate(certificatePath: certificate, privateKeyPath: key)
        case (nil, nil):
            return try DTLSCertificate.generate()
        default:
            throw PublishError("--dtls-cert and --dtls-key go together")
        }
    }

    /// Admits a subscribe with an offer (`served`: the viewers served besides this member; over
    /// `--max-viewers` it is a `Refusal`), reads `text` as a JSEP offer and answers it: our ICE
    /// candidates, our certificate's fingerprint, the offer's payload types. Starts the transport
    /// and returns the answer SDP; the member's previous viewer, if any, is replaced. Throws
    /// `PublishError` with the reason a `subscribe-reject` carries.
    func answer(offer text: String, subscriber: String, served: Int) async throws -> String {
        var machine = WebRTCViewerStateMachine()
        let admission = machine.receive(.offerReceived(served: served, maximum: options.maxViewers))
        if case .refuse(let reason) = admission.action { throw Refusal(reason: reason) }
        let offer: WebRTCOffer
        do {
            offer = try WebRTCOffer(parsing: text)
        } catch let error as JSEPError {
            throw PublishError("offer refused: \(error.reason)")
        }
        let continuation = self.continuation
        let source = WeakTransport()
        let transport = try WebRTCTransport(configuration) { event in
            guard let transport = source.transport else { return }
            continuation.yield(Notice(subscriber: subscriber, transport: transport, event: event))
        }
        source.transport = transport
        let candidates = try await transport.gatherCandidates()
        let answer: WebRTCAnswer
        let group: CodecGroup?
        do {
            (answer, group) = try answerWithTheViewersCodec(offer, transport: transport, candidates: candidates)
        } catch let error as JSEPError {
            transport.stop()
            throw PublishError("offer refused: \(error.reason)")
        } catch {
            transport.stop()
            throw error
        }
        let ready = machine.receive(.answerReady)
        let replaced = viewers.withLock { viewers -> WebRTCTransport? in
            let viewer = Viewer(transport: transport, answer: answer, machine: machine, group: group)
            let previous = viewers.updateValue(viewer, forKey: subscriber)
            report(ready.report, of: subscriber)
            guard var previous, previous.machine.receive(.replaced).action == .stopTransport else { return nil }
            return previous.transport
        }
        replaced?.stop()
        do {
            try transport.start(remote: answer.remote, dtlsRole: answer.isDTLSClient ? .client : .server)
        } catch {
            throw PublishError("cannot start ICE and DTLS: \(error)")
        }
        return answer.sdp
    }

    /// The answer, on the stream of the first of `--codecs` the offer has: H.264 on the main
    /// sender; VP8 or VP9 on that codec's group (made, with its sender, on the first such
    /// viewer). An offer with none is refused with both sides' codecs (`JSEPError`).
    private func answerWithTheViewersCodec(
        _ offer: WebRTCOffer,
        transport: WebRTCTransport,
        candidates: [ICECandidate]
    ) throws -> (WebRTCAnswer, CodecGroup?) {
        let sps = try control.sender.withLock { sender in
            guard let sets = sender.parameterSets else { throw PublishError("no key frame encoded yet") }
            return sets.sps
        }
        guard sps.count >= 4 else { throw PublishError("no key frame encoded yet") }
        let profile = H264ProfileLevelID(profileIDC: sps[1], constraints: sps[2], levelIDC: sps[3])
        let codec = offer.videoCodec(preferring: options.codecs, sending: profile)
        let group = try codec.flatMap { $0 == .h264 ? nil : try control.group(for: $0) }
        let answer = try (group?.sender ?? control.sender).withLock { sender in
            var configuration = try WebRTCAnswer.Configuration(
                sender: sender,
                transport: transport,
                options: options,
                sps: sps,
                candidates: candidates
            )
            // The chosen codec alone, as its stream's SSRCs are in the configuration; none
            // chosen: all of them, so the refusal names every codec we send.
            configuration.video?.codecs = codec.map { [$0] } ?? options.codecs
            return try WebRTCAnswer(answering: offer, configuration: configuration)
        }
        return (answer, group)
    }

    /// The answer to `subscriber` failed or could not be sent: its viewer is refused, its
    /// transport stops, its status entry goes.
    func refuse(_ subscriber: String, reason: String) {
        let fed = receive(.answerFailed(reason), of: subscriber)
        control.statistics.withLock { $0.webRTCViewers[subscriber] = nil }
        if let fed, case .refuse = fed.transition.action { release(fed.viewer.transport, wasLast: fed.wasLast) }
    }

    /// Ends `subscriber`'s viewer for a reason of the room (`.goneFromRoom`, `.left`); nil when it
    /// has none. The caller removes its destination, then `release`s it.
    func end(_ subscriber: String, _ event: WebRTCViewerStateMachine.Event) -> Removed? {
        receive(event, of: subscriber)?.removed
    }

    /// One transport event of the current transport of its subscriber (a replaced one's are
    /// dropped): the machine's transition, and the transport's and the sender's side of it done.
    func handle(_ notice: Notice) -> Outcome {
        let event: WebRTCViewerStateMachine.Event
        switch notice.event {
        case .ice(let state): event = .iceChanged(state)
        case .phase(.handshaking): event = .handshaking
        case .connected: event = .transportConnected
        case .pathChanged: event = .pathChanged
        case .phase(.failed(let reason)): event = .transportFailed(reason)
        case .iceLost(let reason): event = .iceLost(reason)
        case .phase(.closed): event = .closedByViewer
        case .phase: return .none
        }
        guard let fed = receive(event, of: notice.subscriber, on: notice.transport) else { return .none }
        let viewer = fed.viewer
        switch (fed.transition.action, notice.event) {
        case (.addDestination, .connected(let link)):
            do {
                try connect(notice.subscriber, link: link, viewer: viewer)
                return .connected(link, group: viewer.group)
            } catch {
                return failed(notice, reason: "cannot send to it: \(error)")
            }
        case (.changePath, .pathChanged(let link)):
            do {
                // False only when the destination is already gone (a removal raced the switch): nothing to move.
                _ = try (viewer.group?.sender ?? control.sender).withLock {
                    try $0.replaceWebRTCPath(id: "sub:\(notice.subscriber)", link: link, transport: viewer.transport)
                }
                return .pathChanged(link)
            } catch {
                return failed(notice, reason: "cannot send on the new ICE pair: \(error)")
            }
        case (.remove, _):
            return fed.removed.map(Outcome.removed) ?? .none
        default:
            return .none
        }
    }

    /// The transport's failure to serve the viewer it just connected or moved, as a transport failure.
    private func failed(_ notice: Notice, reason: String) -> Outcome {
        let fed = receive(.transportFailed(reason), of: notice.subscriber, on: notice.transport)
        return fed?.removed.map(Outcome.removed) ?? .none
    }

    /// An event fed to a viewer: the viewer, the transition, and whether the table is empty now.
    private struct Fed {
        var viewer: Viewer
        var transition: WebRTCViewerStateMachine.Transition
        var wasLast: Bool

        /// The viewer as removed, when the transition removes it.
        var removed: Removed? {
            guard case .remove(let ending) = transition.action else { return nil }
            return Removed(transport: viewer.transport, ending: ending, wasLast: wasLast)
        }
    }

    /// Feeds `event` to `subscriber`'s viewer (only if its transport is `transport`, when given)
    /// and shows the state it reports; a viewer in a final state leaves the table at once. Nil:
    /// no such viewer.
    private func receive(
        _ event: WebRTCViewerStateMachine.Event,
        of subscriber: String,
        on transport: WebRTCTransport? = nil
    ) -> Fed? {
        viewers.withLock { viewers in
            guard var viewer = viewers[subscriber], transport.map({ $0 === viewer.transport }) ?? true else {
                return nil
            }
            let transition = viewer.machine.receive(event)
            if viewer.machine.state.isFinal {
                viewers[subscriber] = nil
            } else {
                viewers[subscriber] = viewer
            }
            report(transition.report, of: subscriber)
            return Fed(viewer: viewer, transition: transition, wasLast: viewers.isEmpty)
        }
    }

    /// A new state for `subscriber`'s status entry (its path and counters kept); a final one: gone.
    private func report(_ state: WebRTCViewerStateMachine.State?, of subscriber: String) {
        guard let state else { return }
        control.statistics.withLock { statistics in
            guard !state.isFinal else {
                statistics.webRTCViewers[subscriber] = nil
                return
            }
            let text = state.description
            statistics.webRTCViewers[subscriber, default: WebRTCViewerStatistics(state: text)].state = text
        }
    }

    /// The destination a connected viewer gets: its payload types, RTX when it offered RTX.
    /// The encoder takes the newcomer's start vote before the key frame it joins on
    /// (`MediaSender.retarget`).
    private func connect(_ subscriber: String, link: WebRTCLink, viewer: Viewer) throws {
        let target = try (viewer.group?.sender ?? control.sender).withLock { sender in
            let rtx = viewer.answer.video?.retransmissionPayloadType
            let payloadTypes = PayloadTypeRewrite(
                sentVideo: sender.configuration.videoPayloadType,
                sentAudio: sender.configuration.audioPayloadType,
                video: viewer.answer.video?.payloadType ?? sender.configuration.videoPayloadType,
                audio: viewer.answer.audio?.payloadType ?? sender.configuration.audioPayloadType,
                retransmission: rtx
            )
            try sender.addWebRTCDestination(
                id: "sub:\(subscriber)",
                link: link,
                transport: viewer.transport,
                audio: viewer.answer.audio != nil,
                options: DestinationOptions(
                    retransmission: rtx == nil ? .sameSSRC : .rtx,
                    payloadTypes: payloadTypes,
                    transportWideSequenceNumberID: viewer.answer.video?.transportWideSequenceNumberID,
                    transportWideAudio: viewer.answer.audio?.transportWideSequenceNumberID != nil,
                    // D33's start, but not with simulcast: under the top layer's need it starts
                    // on the lowest layer, and its probes cannot always show the room to move up.
                    agreedOnTransportFeedback: viewer.answer.video?.transportWideSequenceNumberID != nil
                        && sender.layers.count == 1,
                    asksForKeyFrames: !(viewer.answer.video?.feedback ?? []).isDisjoint(with: [
                        .pictureLossIndication, .fullIntraRequest,
                    ]),
                    // With simulcast, each viewer watches the layer its own estimate carries.
                    layers: sender.layers.count > 1 ? .adaptive : .first
                )
            )
            return sender.retarget(at: MonotonicClock.now())
        }
        if let target { (viewer.group?.requests ?? control.media.requests).requestBitrate(kbps: target / 1000) }
    }

    /// The subscribers that hold a transport (connecting or connected).
    var subscribers: [String] { viewers.withLock { Array($0.keys) } }

    /// Stops a removed viewer's transport. When it was the last, the memory the viewers' threads
    /// freed goes back to the system (`FrameMemory.returnFreeMemory`).
    func release(_ removed: Removed) { release(removed.transport, wasLast: removed.wasLast) }

    private func release(_ transport: WebRTCTransport, wasLast: Bool) {
        transport.stop()
        if wasLast { FrameMemory.returnFreeMemory() }
    }

    /// Copies each viewer's transport counters into the statistics (once a second, before the
    /// status line and `--stats-json` record are made).
    func refreshStatistics() {
        let current = viewers.withLock { $0.mapValues(\.transport) }
        let counters = current.mapValues { ($0.statistics, $0.iceStatistics) }
        control.statistics.withLock { statistics in
            for (subscriber, (transport, ice)) in counters {
                statistics.webRTCViewers[subscriber]?.update(transport: transport, ice: ice)
            }
        }
    }

    /// Every transport, at the end of the session.
    func stopAll() {
        let all = viewers.withLock { viewers in
            defer { viewers.removeAll() }
            return viewers.values.compactMap { viewer -> WebRTCTransport? in
                var viewer = viewer
                return viewer.machine.receive(.stop).action == .stopTransport ? viewer.transport : nil
            }
        }
        for transport in all { transport.stop() }
        continuation.finish()
    }
}

/// Lets a transport's event handler name the transport without keeping it alive.
private final class WeakTransport: @unchecked Sendable {
    weak var transport: WebRTCTransport?
}
