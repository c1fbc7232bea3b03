import DTLS
import JSEP
import Logging
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
/// Transport events arrive on libnice's and the DTLS timer's threads; they are only queued there
/// (`events`) and acted on by `RoomPresence`'s task, which can also tell the subscriber.
final class WebRTCSubscribers: @unchecked Sendable {
    struct Viewer {
        var transport: WebRTCTransport
        var answer: WebRTCAnswer
    }

    /// One transport event of one subscriber.
    struct Notice: Sendable {
        var subscriber: String
        var transport: WebRTCTransport
        var event: WebRTCTransport.Event
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

    /// Reads `text` as a JSEP offer and answers it: our ICE candidates, our certificate's
    /// fingerprint, the offer's payload types. Starts the transport and returns the answer SDP.
    /// Throws `PublishError` with the reason a `subscribe-reject` carries.
    func answer(offer text: String, subscriber: String) async throws -> String {
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
        do {
            answer = try control.sender.withLock { sender in
                guard let sets = sender.parameterSets else { throw PublishError("no key frame encoded yet") }
                return try WebRTCAnswer(
                    answering: offer,
                    configuration: WebRTCAnswer.Configuration(
                        sender: sender,
                        transport: transport,
                        options: options,
                        sps: sets.sps,
                        candidates: candidates
                    )
                )
            }
        } catch let error as JSEPError {
            transport.stop()
            throw PublishError("offer refused: \(error.reason)")
        } catch {
            transport.stop()
            throw error
        }
        let replaced = viewers.withLock { viewers in
            defer { viewers[subscriber] = Viewer(transport: transport, answer: answer) }
            return viewers[subscriber]?.transport
        }
        replaced?.stop()
        do {
            try transport.start(remote: answer.remote, dtlsRole: answer.isDTLSClient ? .client : .server)
        } catch {
            _ = remove(subscriber)
            throw PublishError("cannot start ICE and DTLS: \(error)")
        }
        return answer.sdp
    }

    /// The destination a connected viewer gets: its payload types, RTX when it offered RTX.
    func connect(_ subscriber: String, link: WebRTCLink, transport: WebRTCTransport) throws -> Bool {
        guard let viewer = viewers.withLock({ $0[subscriber] }), viewer.transport === transport else { return false }
        try control.sender.withLock { sender in
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
                transport: transport,
                audio: viewer.answer.audio != nil,
                options: DestinationOptions(
                    retransmission: rtx == nil ? .sameSSRC : .rtx,
                    payloadTypes: payloadTypes,
                    transportWideSequenceNumberID: viewer.answer.video?.transportWideSequenceNumberID,
                    transportWideAudio: viewer.answer.audio?.transportWideSequenceNumberID != nil
                )
            )
        }
        return true
    }

    /// ICE moved to another pair after connecting.
    func changePath(_ subscriber: String, link: WebRTCLink, transport: WebRTCTransport) throws {
        guard viewers.withLock({ $0[subscriber]?.transport === transport }) else { return }
        // False only when the destination is already gone (a removal raced the switch): nothing to move.
        _ = try control.sender.withLock {
            try $0.replaceWebRTCPath(id: "sub:\(subscriber)", link: link, transport: transport)
        }
    }

    /// The subscribers that hold a transport (connecting or connected).
    var subscribers: [String] { viewers.withLock { Array($0.keys) } }

    /// Whether `transport` is still `subscriber`'s current one (a re-subscribe replaces it).
    func isCurrent(_ subscriber: String, _ transport: WebRTCTransport) -> Bool {
        viewers.withLock { $0[subscriber]?.transport === transport }
    }

    /// Stops and forgets `subscriber`'s transport; false if it had none. When it was the last,
    /// the memory the viewers' threads freed goes back to the system (`FrameMemory.returnFreeMemory`).
    func remove(_ subscriber: String) -> Bool {
        guard
            let (viewer, last) = viewers.withLock({ viewers in
                viewers.removeValue(forKey: subscriber).map { ($0, viewers.isEmpty) }
            })
        else { return false }
        viewer.transport.stop()
        if last { FrameMemory.returnFreeMemory() }
        return true
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
            return Array(viewers.values)
        }
        for viewer in all { viewer.transport.stop() }
        continuation.finish()
    }
}

/// Lets a transport's event handler name the transport without keeping it alive.
private final class WeakTransport: @unchecked Sendable {
    weak var transport: WebRTCTransport?
}
