import Logging
import Media
import MediaPipeline
import ProcessSupport
import SRTP
import SendEngine
import SignalingClient
import SignalingProtocol
import WebRTC

/// The publisher's side of the room: join, publish, and turn each subscribe request into a
/// destination with its own keys and an answer SDP its player can open.
///
/// Media never waits for the room. If the server cannot be reached at start, the preview and
/// static destinations stream anyway while this retries with backoff (a screen share that
/// cannot start because a room server is down would be worse than one that joins late); once
/// connected, the client library re-joins and re-publishes by itself after a server restart.
struct RoomPresence {
    let options: PublishOptions
    let control: SessionControl
    let offer: String
    let audio: Bool
    let logger: Logger
    /// Progress to stdout, refusals and errors to stderr (`PublishOutput`).
    let output: PublishOutput
    /// Subscribers that come with a WebRTC offer.
    let webRTC: WebRTCSubscribers

    func run(client: SignalingClient, room: RoomID, uid: MemberID) async {
        let transports = Task { [self] in
            for await notice in webRTC.events { await handle(notice, client: client) }
        }
        defer { transports.cancel() }
        var delay = Duration.milliseconds(500)
        while !Task.isCancelled {
            do {
                try await client.connect()
                try await client.join(room: room, uid: uid, role: .publisher, token: options.token)
                try await client.publish(StreamDescription(kind: .screen, codecs: ["H264", "opus"], sdp: offer))
                setSignaling("in room \(room)")
                logger.info("joined and published", metadata: ["room": "\(room)", "uid": "\(uid)"])
                break
            } catch {
                let where_ = options.signal.map { "\($0.host):\($0.port)" } ?? "?"
                setSignaling("retrying")
                output.problem(
                    "signaling server \(where_) unreachable (\(error)); media continues, retrying in \(delay)"
                )
                try? await Task.sleep(for: delay)
                delay = min(delay * 2, .seconds(10))
            }
        }
        let stillness = Task { [self] in await tellStillness(client: client) }
        defer { stillness.cancel() }
        let layers = Task { [self] in await tellLayers(client: client) }
        defer { layers.cancel() }
        // When a held-back key-frame request was last logged: at most one line a second.
        var lastHeldBackLog: UInt64?
        for await event in client.events {
            switch event {
            case .subscribeRequest(let request):
                await answer(request, client: client)
            case .subscriberLeft(let left):
                removeSubscriber("\(left.subscriber)", reason: "\(left.reason)")
                if let removed = webRTC.end("\(left.subscriber)", .left("\(left.reason)")) { webRTC.release(removed) }
            case .signal(let signal):
                handle(signal, lastHeldBackLog: &lastHeldBackLog)
            case .disconnected(let error):
                setSignaling("reconnecting")
                output.problem("signaling connection lost (\(error.message)); media continues, reconnecting")
            case .rejoined(let joined):
                setSignaling("in room \(room)")
                output.progress("signaling: back in room \(room), stream re-published")
                await endViewersNoLongerInTheRoom(joined, client: client)
            case .closed:
                return
            default:
                continue
            }
        }
    }

    /// A member's `signal`. A viewer whose player has just bound its ports asks for a key frame
    /// with `{"request": "keyframe"}` (RTCP PLI does the same for receivers that send RTCP). It
    /// goes through the PLI/FIR limiter: a member asking in a loop gets one IDR per interval,
    /// not one per signal. A request merged into a later key frame is counted (`coalesced`) and
    /// said on stderr at most once a second (`lastHeldBackLog`), so a flood cannot flood the log.
    func handle(_ signal: ServerMessage.Signal, lastHeldBackLog: inout UInt64?) {
        guard case .object(let fields) = signal.payload, fields["request"] == .string("keyframe"),
            !control.requestKeyFrameThroughLimiter()
        else { return }
        let now = MonotonicClock.now()
        guard lastHeldBackLog.map({ now &- $0 >= 1_000_000_000 }) ?? true else { return }
        lastHeldBackLog = now
        let (coalesced, interval) = control.sender.withLock {
            ($0.keyFrameRequestStatistics.coalesced, $0.configuration.feedback.keyFrameInterval)
        }
        output.problem(
            "key-frame request from \(signal.from) merged into the next key frame (at most one per "
                + "\(interval / 1_000_000) ms); \(coalesced) coalesced so far"
        )
    }

    /// Tells the room when the screen goes still and when it moves again (`stream-state`,
    /// Docs/cadence.md): the media thread's `stillChanges` wakes this at each change of the
    /// cadence, so a viewer hears of a still screen before its first idle second looks like a
    /// freeze. Started once in the room, so nothing is said outside one; converging counts as
    /// moving. After a reconnect the client library says a still state again by itself.
    ///
    /// `still` is said once the cadence stayed still, without a change between, for
    /// ``stillDwell``: a moving screen's grab that caught no new paint makes the cadence still for
    /// a picture or a few (measured on Xvfb: 26–83 ms idle, over 100 ms on a loaded 2-core host),
    /// which would be a line to every member each time and a page flickering between `still`
    /// and `playing`. `moving` is said at once.
    private func tellStillness(client: SignalingClient) async {
        var said = StreamState.moving
        for await still in control.media.stillChanges {
            let state: StreamState = still ? .still : .moving
            guard state != said else { continue }
            if state == .still {
                // One timer per transition; the change that ends a short still waits in the stream.
                let before = control.media.stillness.changes
                try? await Task.sleep(for: Self.stillDwell)
                let after = control.media.stillness
                guard after.isStill, after.changes == before else { continue }
            }
            said = state
            await tell(state, client: client)
        }
    }

    /// With simulcast, tells each WebRTC viewer of the room the layer it now watches, in a
    /// `signal` (`{"event": "layer", "rid": "l", "index": 1, "layers": 2}`) when it moved (its
    /// page shows it, Docs/simulcast.md). Looked at twice a second: a move happens at a key
    /// frame, at most a few times a minute per viewer.
    private func tellLayers(client: SignalingClient) async {
        var told: [String: Int] = [:]
        while !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(500))
            let (watching, rids) = control.sender.withLock { sender in
                (
                    sender.destinations.compactMap { destination in
                        destination.watchedLayer.map { (destination.id, $0) }
                    },
                    sender.configuration.simulcast?.rids ?? []
                )
            }
            guard !rids.isEmpty else { return }
            told = told.filter { id, _ in watching.contains { $0.0 == id } }
            for (id, layer) in watching where told[id] != layer && rids.indices.contains(layer) {
                told[id] = layer
                guard id.hasPrefix("sub:"), let member = try? MemberID(validating: String(id.dropFirst(4))) else {
                    continue
                }
                try? await client.signal(
                    to: member,
                    payload: .object([
                        "event": .string("layer"), "rid": .string(rids[layer]), "index": .number(Double(layer)),
                        "layers": .number(Double(rids.count)),
                    ])
                )
            }
        }
    }

    /// How long the cadence must stay still before the room is told: longer than a moving
    /// screen's blips, and early enough that the notice reaches a page before the first idle
    /// repeat a second after the last change (the page counts a gap without one as a freeze).
    static let stillDwell = Duration.milliseconds(300)

    /// One `stream-state`. A failure (a dropped connection) is not retried here: the client
    /// library keeps the state and says `still` again after the rejoin, and a rejoined stream
    /// starts moving anyway.
    private func tell(_ state: StreamState, client: SignalingClient) async {
        do {
            try await client.setStreamState(.screen, state)
        } catch {
            logger.debug("stream-state not sent", metadata: ["state": "\(state.rawValue)", "error": "\(error)"])
        }
    }

    private func answer(_ request: ServerMessage.SubscribeRequest, client: SignalingClient) async {
        let receive = request.receive
        if let offer = receive.offer {
            await answer(request, offer: offer, client: client)
            return
        }
        if let full = WebRTCViewerStateMachine.refusalAtCapacity(
            served: viewersServed(besides: "\(request.subscriber)"),
            maximum: options.maxViewers
        ) {
            await refuse(request, reason: full, client: client)
            return
        }
        guard let suite = receive.cryptoSuites.lazy.compactMap({ SRTPSuite(sdpName: $0) }).first
        else {
            await refuse(
                request,
                reason: "no common SRTP suite (we offer \(SRTPSuite.allCases.map(\.sdpName)))",
                client: client
            )
            return
        }
        guard let videoPort = receive.videoPort else {
            await refuse(request, reason: "no video port in the receive description", client: client)
            return
        }
        do {
            let address = try DestinationAddress(
                host: receive.address,
                videoPort: videoPort,
                audioPort: audio ? receive.audioPort : nil,
                rtcpMux: receive.rtcpMux
            )
            let sdp = try control.sender.withLock { sender in
                let destination = try sender.addDestination(
                    id: "sub:\(request.subscriber)",
                    address: address,
                    suite: suite,
                    options: DestinationOptions(
                        retransmission: options.retransmission == .rtx ? .sameSSRC : options.retransmission
                    )
                )
                guard let sets = sender.parameterSets else {
                    throw PublishError("no key frame encoded yet")
                }
                return try StreamSDP.playerFile(for: destination, sender: sender, sps: sets.sps, pps: sets.pps)
            }
            // The new viewer decodes from the next key frame, not in 2 s; through the limiter, so
            // re-subscribing in a loop cannot force IDRs any faster than PLIs can.
            control.requestKeyFrameThroughLimiter()
            control.statistics.withLock { $0.subscribers += 1 }
            try await client.answer(request, sdp: sdp)
            output.progress("subscriber \(request.subscriber) added: \(address) (\(suite.sdpName))")
        } catch {
            removeSubscriber("\(request.subscriber)", reason: "answer failed")
            await refuse(request, reason: "\(error)", client: client)
        }
    }

    /// The viewers served besides `subscriber`, for `--max-viewers`: the subscribers with a WebRTC
    /// transport (connecting or connected) or an SDES destination; a re-subscribe replaces its own
    /// viewer, so it is never refused for capacity.
    private func viewersServed(besides subscriber: String) -> Int {
        let connecting = webRTC.subscribers
        let sending = control.sender.withLock { sender in
            sender.destinations.compactMap { $0.id.hasPrefix("sub:") ? String($0.id.dropFirst(4)) : nil }
        }
        var served = Set(connecting).union(sending)
        served.remove(subscriber)
        return served.count
    }

    /// While our connection was down the server ended every subscription to us. A viewer still
    /// in the room subscribes again and replaces its viewer; one that is gone (a WHEP session
    /// ends when its subscription does, a page may have closed) never will, and nobody could end
    /// it any more: its media would go on as an orphan. Those are ended here.
    private func endViewersNoLongerInTheRoom(_ joined: ServerMessage.Joined, client: SignalingClient) async {
        let members = Set(joined.members.map(\.uid.rawValue))
        let webRTCViewers = Set(webRTC.subscribers)
        let sdesViewers = control.sender.withLock { sender in
            sender.destinations.compactMap { $0.id.hasPrefix("sub:") ? String($0.id.dropFirst(4)) : nil }
        }
        let reason = "no longer in the room when signaling came back"
        for subscriber in webRTCViewers.union(sdesViewers).subtracting(members).sorted() {
            if webRTCViewers.contains(subscriber) {
                guard let removed = webRTC.end(subscriber, .goneFromRoom(reason)) else { continue }
                await end(subscriber, removed, client: client)
            } else {
                removeSubscriber(subscriber, reason: reason)
            }
        }
    }

    /// Tells the subscriber why (`subscribe-reject`) and says so on stderr.
    private func refuse(_ request: ServerMessage.SubscribeRequest, reason: String, client: SignalingClient) async {
        output.problem("subscriber \(request.subscriber) refused: \(reason)")
        try? await client.reject(request, reason: reason)
    }

    private func removeSubscriber(_ uid: String, reason: String) {
        let removed = control.removeDestination(id: "sub:\(uid)", reason: reason)
        if removed {
            control.statistics.withLock { $0.subscribers -= 1 }
            output.progress("subscriber \(uid) left (\(reason)); no longer sent to")
        }
    }

    private func setSignaling(_ text: String) { control.statistics.withLock { $0.signaling = text } }

    // MARK: WebRTC subscribers

    /// A subscribe with a WebRTC offer: admitted under `--max-viewers`, answered with our JSEP
    /// answer once our candidates are gathered; the destination follows when ICE and DTLS are done
    /// (`handle`). The viewer's state machine is `WebRTCSubscribers`'s to drive.
    private func answer(_ request: ServerMessage.SubscribeRequest, offer: String, client: SignalingClient) async {
        let subscriber = "\(request.subscriber)"
        // A re-subscribe replaces the old viewer: its destination goes now, its transport in `answer`.
        removeSubscriber(subscriber, reason: "re-subscribed")
        do {
            let served = viewersServed(besides: subscriber)
            let sdp = try await webRTC.answer(offer: offer, subscriber: subscriber, served: served)
            try await client.answer(request, sdp: sdp)
            output.progress("WebRTC subscriber \(subscriber): answer sent, ICE checking")
        } catch let refusal as WebRTCSubscribers.Refusal {
            await refuse(request, reason: refusal.reason, client: client)
        } catch {
            webRTC.refuse(subscriber, reason: "\(error)")
            output.problem("WebRTC subscriber \(subscriber) refused: \(error)")
            try? await client.reject(request, reason: "\(error)")
        }
    }

    private func handle(_ notice: WebRTCSubscribers.Notice, client: SignalingClient) async {
        let subscriber = notice.subscriber
        switch webRTC.handle(notice) {
        case .none:
            break
        case .connected(let link, let group):
            // The new viewer decodes from the next key frame of its stream.
            (group?.requests ?? control.media.requests).requestKeyFrameThroughLimiter()
            control.statistics.withLock { $0.subscribers += 1 }
            let pair = link.pair.map { "\($0)" } ?? "?"
            control.statistics.withLock {
                $0.webRTCViewers[subscriber]?.path = pair
                $0.webRTCViewers[subscriber]?.srtpProfile = "\(link.keys.profile)"
            }
            output.progress("WebRTC subscriber \(subscriber) connected: \(pair) (\(link.keys.profile))")
        case .pathChanged(let link):
            control.statistics.withLock { $0.webRTCViewers[subscriber]?.path = link.pair.map { "\($0)" } }
            output.progress("WebRTC subscriber \(subscriber): ICE switched to \(link.pair.map { "\($0)" } ?? "?")")
        case .removed(let removed):
            await end(subscriber, removed, client: client)
        }
    }

    /// Removes a WebRTC viewer its machine ended (its destination, after a BYE, then its
    /// transport), logs why and tells the subscriber in a `signal` (`{"event": "webrtc-ended",
    /// "reason": …}`). A failure (ICE, DTLS, consent, a time limit) is a problem and goes to
    /// stderr; a viewer that closed DTLS itself left normally.
    private func end(_ subscriber: String, _ removed: WebRTCSubscribers.Removed, client: SignalingClient) async {
        let ending = removed.ending
        removeSubscriber(subscriber, reason: ending.reason)
        webRTC.release(removed)
        let line = "WebRTC subscriber \(subscriber) removed: \(ending.reason)"
        if ending.isProblem {
            logger.warning(
                "WebRTC subscriber removed",
                metadata: ["subscriber": "\(subscriber)", "reason": "\(ending.reason)"]
            )
            output.problem(line)
        } else {
            output.progress(line)
        }
        guard ending.tellsViewer, let member = try? MemberID(validating: subscriber) else { return }
        try? await client.signal(
            to: member,
            payload: .object(["event": .string("webrtc-ended"), "reason": .string(ending.reason)])
        )
    }
}
