import Logging
import SRTP
import SignalingClient
import SignalingProtocol

/// The publisher's side of the room: join, publish, and turn each subscribe request into a
/// destination with its own keys and an answer SDP its player can open.
///
/// Media never waits for the room. If the server cannot be reached at start, the preview and
/// static destinations stream anyway while this retries with backoff (a screen share that
/// cannot start because a room server is down would be worse than one that joins late); once
/// connected, the client library re-joins and re-publishes by itself after a server restart.
struct RoomPresence {
    let options: PublishOptions
    let control: MediaControl
    let offer: String
    let audio: Bool
    let logger: Logger
    let status: @Sendable (String) -> Void
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
                status("signaling server \(where_) unreachable (\(error)); media continues, retrying in \(delay)")
                try? await Task.sleep(for: delay)
                delay = min(delay * 2, .seconds(10))
            }
        }
        for await event in client.events {
            switch event {
            case .subscribeRequest(let request):
                await answer(request, client: client)
            case .subscriberLeft(let left):
                removeSubscriber("\(left.subscriber)", reason: "\(left.reason)")
                if webRTC.remove("\(left.subscriber)") { setViewerState("\(left.subscriber)", nil) }
            case .signal(let signal):
                // A viewer whose player has just bound its ports asks for a key frame this way
                // (RTCP PLI does the same for receivers that send RTCP).
                if case .object(let fields) = signal.payload, fields["request"] == .string("keyframe") {
                    control.requestKeyFrame()
                }
            case .disconnected(let error):
                setSignaling("reconnecting")
                status("signaling connection lost (\(error.message)); media continues, reconnecting")
            case .rejoined:
                setSignaling("in room \(room)")
                status("signaling: back in room \(room), stream re-published")
            case .closed:
                return
            default:
                continue
            }
        }
    }

    private func answer(_ request: ServerMessage.SubscribeRequest, client: SignalingClient) async {
        let receive = request.receive
        if let offer = receive.offer {
            await answer(request, offer: offer, client: client)
            return
        }
        guard let suite = receive.cryptoSuites.lazy.compactMap({ SRTPSuite(sdpName: $0) }).first
        else {
            try? await client.reject(
                request,
                reason: "no common SRTP suite (we offer \(SRTPSuite.allCases.map(\.sdpName)))"
            )
            return
        }
        guard let videoPort = receive.videoPort else {
            try? await client.reject(request, reason: "no video port in the receive description")
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
            control.requestKeyFrame()  // The new viewer decodes from the next frame, not in 2 s.
            control.statistics.withLock { $0.subscribers += 1 }
            try await client.answer(request, sdp: sdp)
            status("subscriber \(request.subscriber) added: \(address) (\(suite.sdpName))")
        } catch {
            removeSubscriber("\(request.subscriber)", reason: "answer failed")
            try? await client.reject(request, reason: "\(error)")
        }
    }

    private func removeSubscriber(_ uid: String, reason: String) {
        let removed = control.sender.withLock { $0.removeDestination(id: "sub:\(uid)", reason: reason) }
        if removed {
            control.statistics.withLock { $0.subscribers -= 1 }
            status("subscriber \(uid) left (\(reason)); no longer sent to")
        }
    }

    private func setSignaling(_ text: String) { control.statistics.withLock { $0.signaling = text } }

    // MARK: WebRTC subscribers

    /// A subscribe with a WebRTC offer: answered with our JSEP answer once our candidates are
    /// gathered; the destination follows when ICE and DTLS are done (`handle`).
    private func answer(_ request: ServerMessage.SubscribeRequest, offer: String, client: SignalingClient) async {
        let subscriber = "\(request.subscriber)"
        // A re-subscribe replaces the old viewer: its destination goes now, its transport in `answer`.
        removeSubscriber(subscriber, reason: "re-subscribed")
        do {
            let sdp = try await webRTC.answer(offer: offer, subscriber: subscriber)
            setViewerState(subscriber, "ice checking")
            try await client.answer(request, sdp: sdp)
            status("WebRTC subscriber \(subscriber): answer sent, ICE checking")
        } catch {
            _ = webRTC.remove(subscriber)
            setViewerState(subscriber, nil)
            status("WebRTC subscriber \(subscriber) refused: \(error)")
            try? await client.reject(request, reason: "\(error)")
        }
    }

    private func handle(_ notice: WebRTCSubscribers.Notice, client: SignalingClient) async {
        let subscriber = notice.subscriber
        guard webRTC.isCurrent(subscriber, notice.transport) else { return }
        switch notice.event {
        case .ice(let state):
            if notice.transport.phase == .checking { setViewerState(subscriber, "ice \(state)") }
        case .phase(.handshaking):
            setViewerState(subscriber, "dtls-handshake")
        case .connected(let link):
            do {
                guard try webRTC.connect(subscriber, link: link, transport: notice.transport) else { return }
                control.requestKeyFrame()  // The new viewer decodes from the next frame.
                control.statistics.withLock { $0.subscribers += 1 }
                setViewerState(subscriber, "connected")
                let pair = link.pair.map { "\($0)" } ?? "?"
                control.statistics.withLock {
                    $0.webRTCViewers[subscriber]?.path = pair
                    $0.webRTCViewers[subscriber]?.srtpProfile = "\(link.keys.profile)"
                }
                status("WebRTC subscriber \(subscriber) connected: \(pair) (\(link.keys.profile))")
            } catch {
                await end(subscriber, reason: "cannot send to it: \(error)", client: client)
            }
        case .pathChanged(let link):
            do {
                try webRTC.changePath(subscriber, link: link, transport: notice.transport)
                control.statistics.withLock { $0.webRTCViewers[subscriber]?.path = link.pair.map { "\($0)" } }
                status("WebRTC subscriber \(subscriber): ICE switched to \(link.pair.map { "\($0)" } ?? "?")")
            } catch {
                await end(subscriber, reason: "cannot send on the new ICE pair: \(error)", client: client)
            }
        case .phase(.failed(let reason)), .iceLost(let reason):
            await end(subscriber, reason: reason, client: client)
        case .phase(.closed):
            await end(subscriber, reason: "the viewer closed DTLS (close_notify)", client: client)
        case .phase:
            break
        }
    }

    /// Removes a WebRTC viewer (its destination, after a BYE, then its transport), logs why and
    /// tells the subscriber in a `signal` (`{"event": "webrtc-ended", "reason": …}`).
    private func end(_ subscriber: String, reason: String, client: SignalingClient) async {
        removeSubscriber(subscriber, reason: reason)
        _ = webRTC.remove(subscriber)
        setViewerState(subscriber, nil)
        logger.warning("WebRTC subscriber removed", metadata: ["subscriber": "\(subscriber)", "reason": "\(reason)"])
        status("WebRTC subscriber \(subscriber) removed: \(reason)")
        guard let member = try? MemberID(validating: subscriber) else { return }
        try? await client.signal(
            to: member,
            payload: .object(["event": .string("webrtc-ended"), "reason": .string(reason)])
        )
    }

    /// A new state for `subscriber`'s transport (its path and counters kept); nil: gone.
    private func setViewerState(_ subscriber: String, _ state: String?) {
        control.statistics.withLock { statistics in
            guard let state else {
                statistics.webRTCViewers[subscriber] = nil
                return
            }
            statistics.webRTCViewers[subscriber, default: WebRTCViewerStatistics(state: state)].state = state
        }
    }
}

/// A publish-time failure with a message fit to show as it is.
public struct PublishError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
