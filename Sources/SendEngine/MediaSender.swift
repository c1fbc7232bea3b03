import CongestionControl
import Media
import RTP
import SDP
import SRTP
import Transport

/// The one place encoded media becomes protected datagrams: H.264 access units and Opus packets
/// are packetized once into a clear-text packet, then copied, SRTP-protected and sent per
/// destination; RTCP sender reports (with SDES CNAME) go out at the RFC 3550 interval and BYE
/// when the stream stops. Each destination sends from sockets of its own that also read what
/// its receiver sends back; `pollFeedback(now:)` acts on it (Docs/feedback.md), resending
/// lost video from a history of clear packets kept as they are sent.
///
/// Both streams take their RTP timestamps from capture time through two `RTPClock`s sharing one
/// origin, so audio and video sit on one timeline and a frame's timestamp never depends on when
/// (or how late) it was sent. Not thread-safe: one task drives it.
public final class MediaSender {
    public struct Configuration: Sendable {
        /// Whole UDP payload limit: RTP header + payload + SRTP tag fit inside.
        public var mtu = RTPPayloadBudget.standard.mtu
        /// The suite destinations get unless they ask for another.
        public var suite: SRTPSuite = .default
        /// RTCP SDES CNAME (RFC 3550 §6.5.1), the same for audio and video so receivers pair them.
        public var cname: String
        public var videoPayloadType: UInt8 = 96
        /// The video stream's payload format: H.264 access units (`send(video:)`), or VP8 or
        /// VP9 frames (`send(vpxFrame:…)`) for viewers that cannot take H.264.
        public var videoCodec: VideoCodec = .h264
        public var audioPayloadType: UInt8 = 97
        /// Session bandwidth in bit/s for the RTCP interval computation (RFC 3550 §6.2).
        public var sessionBandwidth = 2_000_000.0
        /// What receivers' RTCP does to the stream: NACK history, key-frame limit, bitrate.
        public var feedback = FeedbackConfiguration()
        /// Transport-wide sequence numbers, the delay-based estimate, probing, the pacer.
        public var congestion = CongestionConfiguration()
        /// H.264 simulcast (RFC 8853): one layer per rid, highest first; nil sends one stream.
        public var simulcast: Simulcast?
        public init(cname: String) { self.cname = cname }
    }

    /// The simulcast layers' names and the header extension ids their packets carry them under
    /// (RFC 8852 `rtp-stream-id` and `repaired-rtp-stream-id`, RFC 8843 §15 `mid`): libwebrtc's
    /// ids, the ones our WHIP offer gives them.
    public struct Simulcast: Sendable, Equatable {
        public var rids: [String]
        /// The video m-section's mid, on every video packet beside the rid.
        public var mid: String
        public var midID: UInt8 = 4
        public var ridID: UInt8 = 10
        public var repairedRIDID: UInt8 = 11
        /// What a receiver must allow to get each layer, bits per second, highest first: what
        /// a viewer's layer (`LayerSelection`) and an SFU's dropped layers follow. Empty: never
        /// move a viewer off layer 0, never drop a layer.
        public var needs: [Int]

        public init(rids: [String], mid: String, needs: [Int] = []) {
            self.rids = rids
            self.mid = mid
            self.needs = needs
        }
    }

    public let configuration: Configuration
    public private(set) var destinations: [Destination] = [] {
        didSet {
            hasReceiversThatCannotAsk = destinations.contains { !$0.options.asksForKeyFrames }
            hasUnwatchedReceiversThatCannotAsk = destinations.contains {
                !$0.options.asksForKeyFrames && $0.listener == nil
            }
            hasSelections = destinations.contains { $0.selection != nil }
            updateWatchedLayers()
        }
    }
    /// Some destination watches one layer at a time (`LayerSelection`).
    private(set) var hasSelections = false
    /// The layers some destination gets or waits for, bit i for layer i: the lower layers'
    /// encoders run for these alone (a layer nobody watches is not encoded).
    public internal(set) var watchedLayers: UInt32 = 0
    /// How many viewers of one layer watch each layer now (`LayerSelection`), index 0 the highest.
    public internal(set) var layerViewers: [Int] = []
    /// The bitrate each lower layer's encoder should make, bits per second (index 0 unused:
    /// layer 0 follows `targetBitrate`): its need (`Simulcast.needs`), or less when a viewer
    /// watching it allows less (never under `minimumLayerBitrate`).
    public internal(set) var layerTargets: [Int] = []
    /// Key frames of layers that viewers moved to, granted by the layers' limiters, for the
    /// next `pollFeedback` to hand the encoders.
    var grantedKeyFrameLayers: UInt32 = 0
    /// The final counters of the destinations that left, newest last: `--stats-json` keeps a
    /// viewer's whole story after it goes. Bounded (`departedLimit`) so churn cannot grow it.
    public private(set) var departed: [(id: String, statistics: FeedbackStatistics)] = []
    /// How many departed destinations' counters are kept.
    public static let departedLimit = 32
    /// RTP datagrams handed to the kernel, all destinations together.
    public internal(set) var packetsSent = 0
    /// The video streams: one, or one per simulcast layer, highest first.
    public let layers: [VideoLayer]
    /// Layer 0's stream (the only one without simulcast).
    public var video: RTPStreamState { layers[0].stream }
    public private(set) var audio: RTPStreamState
    public let videoClock: RTPClock
    public let audioClock: RTPClock
    let ntpClock = NTPClock.system()
    private var vp8: VP8Payloader
    private var vp9: VP9Payloader
    private var opus: OpusPayloader
    private var schedule: RTCPSenderSchedule<SystemRandomNumberGenerator>
    private var nextReport: UInt64?
    private let packet: RTPPacketBuffer
    /// A picture's clear packets, sent as one burst per destination (`sendBurst`).
    private let burst: PacketBurst
    /// Where each destination's copy of the burst is protected, one destination at a time.
    let burstScratch: UnsafeMutableRawBufferPointer
    /// Layer 0's clear video packets as sent, for NACKs (one copy per packet).
    var videoHistory: RTPPacketHistory { layers[0].history }
    /// The clear video bytes sent over the last half second, all layers: a receiver that never
    /// reported may have a share of it resent (`FeedbackConfiguration.unreportedRetransmissionShare`).
    var videoSent = SentBytesWindow(window: RetransmissionLimiter.rateWindow)
    /// The SSRC of layer 0's RTX stream (RFC 4588), for destinations that negotiated RTX.
    public var videoRTXSSRC: UInt32 { layers[0].rtxSSRC }
    let bitratePolicy: ReceiverBitratePolicy
    /// The last target `pollFeedback` returned (starts at the configured start rate).
    public internal(set) var targetBitrate: Int
    /// Where `pollFeedback` reads datagrams (and a copy for the clear-RTCP fallback).
    let feedbackBuffer: RTPPacketBuffer
    let feedbackCopy: RTPPacketBuffer
    private var destinationCount: UInt32 = 0
    /// Where paced destinations' video is gathered from the history for one burst.
    let pacedBurst: PacketBurst
    /// Each receiver's allowed rate, gathered for the policy (capacity kept).
    var bitrateVotes: [Int] = []
    /// The lowest receiver vote the policy follows (not an outlier), as of the last poll.
    var weakestFollowedVote: Int?

    /// `origin` (monotonic ns) is the capture instant both RTP clocks count from.
    public init(configuration: Configuration, origin: UInt64) throws {
        self.configuration = configuration
        // Each destination may pick its own suite, and a packet is cut once for all of them, so
        // the budget leaves room for the longest tag any suite appends (16 bytes for GCM).
        let trailer = SRTPSuite.allCases.map(\.rtpTrailerLength).max() ?? configuration.suite.rtpTrailerLength
        let budget = try RTPPayloadBudget(mtu: configuration.mtu, srtpTrailerRoom: trailer)
        let first = try RTPStreamState(payloadType: configuration.videoPayloadType, clockRate: 90_000)
        audio = try RTPStreamState(payloadType: configuration.audioPayloadType, clockRate: OpusPayloader.clockRate)
        if configuration.congestion.transportWide {
            // Every packet carries a slot for the transport-wide number; each destination's copy
            // gets its own number, or the slot blanked to padding (`SendSideBandwidthEstimator.stamp`).
            audio.headerExtension = SendSideBandwidthEstimator.template
        }
        videoClock = first.clock(origin: origin)
        audioClock = audio.clock(origin: origin)
        let feedback = configuration.feedback
        let rids: [String?] = configuration.simulcast.map { $0.rids.map { Optional($0) } } ?? [nil]
        var generator = SystemRandomNumberGenerator()
        layers = try rids.enumerated().map { index, rid in
            // Every layer on layer 0's timestamp base: one picture, one timestamp on all.
            var stream =
                index == 0
                ? first
                : try RTPStreamState(
                    ssrc: UInt32.random(in: .min ... .max, using: &generator),
                    payloadType: configuration.videoPayloadType,
                    clockRate: 90_000,
                    initialSequenceNumber: UInt16.random(in: .min ... .max, using: &generator),
                    timestampBase: first.timestampBase
                )
            stream.headerExtension = try Self.videoHeaderExtension(
                rid: rid,
                simulcast: configuration.simulcast,
                transportWide: configuration.congestion.transportWide
            )
            return try VideoLayer(
                index: index,
                rid: rid,
                stream: stream,
                origin: origin,
                budget: budget,
                historyCapacity: RTPPacketHistory.recommendedCapacity(
                    bitsPerSecond: feedback.bitrate.maximum,
                    packetSize: budget.mtu,
                    seconds: feedback.historySeconds
                ),
                keyFrameInterval: feedback.keyFrameInterval
            )
        }
        vp8 = VP8Payloader(budget: budget)
        vp9 = VP9Payloader(budget: budget)
        opus = OpusPayloader(budget: budget)
        schedule = try RTCPSenderSchedule(
            configuration: RTCPIntervalConfiguration(sessionBandwidth: configuration.sessionBandwidth)
        )
        packet = RTPPacketBuffer(budget: budget)
        burst = PacketBurst(slotSize: budget.mtu)
        pacedBurst = PacketBurst(slotSize: budget.mtu)
        bitrateVotes.reserveCapacity(64)
        burstScratch = .allocate(byteCount: RTPPacketBuffer.maximumCapacity, alignment: 16)
        bitratePolicy = try ReceiverBitratePolicy(
            floor: feedback.bitrateFloor ?? feedback.bitrate.minimum,
            ceiling: feedback.bitrate.maximum,
            idle: feedback.bitrate.start
        )
        targetBitrate = feedback.bitrate.start
        feedbackBuffer = try RTPPacketBuffer(capacity: RTPPacketBuffer.maximumCapacity)
        feedbackCopy = try RTPPacketBuffer(capacity: RTPPacketBuffer.maximumCapacity)
    }

    deinit { burstScratch.deallocate() }

    /// A video packet's RFC 8285 one-byte header extension: the transport-wide slot (when on)
    /// and, with simulcast, the mid and the layer's rid (RFC 8852 §3.1: on every packet, so an
    /// SFU can tell the layers apart without signaled SSRCs). Receivers that did not agree on an
    /// element get it blanked to padding in their copy.
    static func videoHeaderExtension(
        rid: String?,
        simulcast: Simulcast?,
        transportWide: Bool
    ) throws(RTPError) -> RTPHeaderExtension? {
        guard let simulcast, let rid else { return transportWide ? SendSideBandwidthEstimator.template : nil }
        return try RTPStreamIdentifier.headerExtension(
            transportWideID: transportWide ? SendSideBandwidthEstimator.templateID : nil,
            midID: simulcast.midID,
            mid: simulcast.mid,
            ridID: simulcast.ridID,
            rid: rid
        )
    }

    /// The layer whose stream or RTX stream has `ssrc`, if any (three at most: a scan).
    func layer(ssrc: UInt32) -> VideoLayer? {
        layers.first { $0.stream.ssrc == ssrc }
    }

    /// Some destination cannot ask for key frames: the encoder refreshes the picture
    /// periodically for it (Docs/cadence.md).
    /// Kept as destinations come and go: the video path reads it for every picture.
    public private(set) var hasReceiversThatCannotAsk = false
    /// Some destination cannot ask and is not on this machine (`ListenerWatch`): a still screen
    /// is refreshed for it periodically too.
    public private(set) var hasUnwatchedReceiversThatCannotAsk = false
    /// Receivers that cannot ask which started listening after their packets were refused
    /// (`ListenerWatch`): each wants a refresh at once.
    public internal(set) var receiverStarts = 0

    /// Adds a receiver with fresh keys for `suite` (the configured one by default); it gets every
    /// packet from the next one on, sent from its own local sockets (which also read its
    /// feedback, see `pollFeedback`). An existing destination with the same id is replaced.
    @discardableResult
    public func addDestination(
        id: String,
        address: DestinationAddress,
        suite: SRTPSuite? = nil,
        options: DestinationOptions = DestinationOptions()
    ) throws -> Destination {
        try addDestination(
            id: id,
            address: address,
            keys: SRTPKeyMaterial.random(for: suite ?? configuration.suite),
            sockets: nil,
            options: options
        )
    }

    /// Adds a receiver whose keys were agreed elsewhere (DTLS-SRTP) and whose sockets someone
    /// else opened (ICE); nil sockets: its own, as for SDES receivers.
    func addDestination(
        id: String,
        address: DestinationAddress,
        keys: SRTPKeyMaterial,
        sockets: DestinationSockets?,
        options: DestinationOptions
    ) throws -> Destination {
        destinations.removeAll { $0.id == id }
        destinationCount &+= 1
        let congestion = configuration.congestion
        // A same-SSRC resend must be byte-identical to the original: no per-send number then.
        let transportWideID =
            congestion.transportWide && options.retransmission != .sameSSRC
            ? options.transportWideSequenceNumberID : nil
        let destination = try Destination(
            id: id,
            address: address,
            keys: keys,
            options: options,
            historyCapacity: videoHistory.capacity,
            feedback: DestinationFeedback(
                keys: options.feedbackKeys ?? keys,
                historyCapacity: videoHistory.capacity,
                number: destinationCount
            ),
            congestion: SendSideBandwidthEstimator(
                configuration: congestion,
                bitrate: configuration.feedback.bitrate,
                transportWideID: transportWideID,
                stampsAudio: options.transportWideAudio,
                pathUnknown: options.agreedOnTransportFeedback
            ),
            videoReports: try layers.map { layer in
                try SenderReportBuilder(
                    ssrc: layer.stream.ssrc,
                    cname: configuration.cname,
                    rtpClock: layer.clock,
                    ntpClock: ntpClock
                )
            },
            audioReport: SenderReportBuilder(
                ssrc: audio.ssrc,
                cname: configuration.cname,
                rtpClock: audioClock,
                ntpClock: ntpClock
            ),
            simulcast: configuration.simulcast,
            sockets: sockets
        )
        destinations.append(destination)
        startSelection(of: destination, now: MonotonicClock.now())
        updateWatchedLayers()
        // Its first key frame leaves at the pacing rate of today's target, not the pacer's floor.
        if destination.congestion.isPaced { applyPacingRate(to: destination) }
        return destination
    }

    /// The destination called `id`, if any.
    public func destination(id: String) -> Destination? { destinations.first { $0.id == id } }

    /// Stops sending to `id` at once, after a BYE so its player ends cleanly; false if unknown.
    @discardableResult
    public func removeDestination(id: String, reason: String? = nil) -> Bool {
        guard let index = destinations.firstIndex(where: { $0.id == id }) else { return false }
        sendGoodbye(to: destinations[index], reason: reason, now: MonotonicClock.now())
        let removed = destinations.remove(at: index)
        departed.removeAll { $0.id == id }
        if departed.count >= Self.departedLimit { departed.removeFirst(departed.count - Self.departedLimit + 1) }
        departed.append((id, removed.feedbackStatistics))
        return true
    }

    /// The SPS and PPS layer 0's payloader last saw (after the first key frame), for the SDP.
    public var parameterSets: (sps: [UInt8], pps: [UInt8])? {
        let h264 = layers[0].h264
        guard let sps = h264.sequenceParameterSet, let pps = h264.pictureParameterSet else { return nil }
        return (sps, pps)
    }

    /// Packetizes one access unit (RFC 6184) of `layer` (0 without simulcast) and sends it to
    /// every destination that takes that layer.
    public func send(video unit: Media.H264AccessUnit, layer index: Int = 0) throws {
        guard configuration.videoCodec == .h264 else {
            throw MediaError(.invalidSetting, "an H.264 access unit for a \(configuration.videoCodec) stream")
        }
        guard layers.indices.contains(index) else {
            throw MediaError(.invalidSetting, "video layer \(index) of \(layers.count)")
        }
        let layer = layers[index]
        try sendVideo(layer, captureTime: unit.captureTime, isKeyFrame: unit.isKeyFrame) { timestamp, emit in
            try layer.h264.packetize(
                accessUnit: unit.nalUnits,
                timestamp: timestamp,
                stream: &layer.stream,
                into: packet,
                emit: emit
            )
        }
    }

    /// Packetizes one VP8 (RFC 7741) or VP9 (RFC 9628) frame as this stream's codec says and
    /// sends it to every destination. `width` and `height` go into a VP9 key frame's
    /// scalability structure.
    public func send(
        vpxFrame frame: ArraySlice<UInt8>,
        captureTime: UInt64,
        isKeyFrame: Bool,
        width: Int,
        height: Int
    ) throws {
        let layer = layers[0]
        switch configuration.videoCodec {
        case .vp8:
            try sendVideo(layer, captureTime: captureTime, isKeyFrame: isKeyFrame) { timestamp, emit in
                try vp8.packetize(frame: frame, timestamp: timestamp, stream: &layer.stream, into: packet, emit: emit)
            }
        case .vp9:
            let info = VP9Payloader.FrameInfo(isKeyFrame: isKeyFrame, width: width, height: height)
            try sendVideo(layer, captureTime: captureTime, isKeyFrame: isKeyFrame) { timestamp, emit in
                try vp9.packetize(
                    frame: frame,
                    info: info,
                    timestamp: timestamp,
                    stream: &layer.stream,
                    into: packet,
                    emit: emit
                )
            }
        case .h264:
            throw MediaError(.invalidSetting, "a VP8/VP9 frame for an H.264 stream")
        }
    }

    /// One picture of any codec: its timestamp from capture time, its packets (from
    /// `packetize`, which gets the timestamp and the per-packet step) kept for NACKs, paced or
    /// gathered into one burst per destination.
    private func sendVideo(
        _ layer: VideoLayer,
        captureTime: UInt64,
        isKeyFrame: Bool,
        packetize: (UInt32, (RTPPacketBuffer) throws -> Void) throws -> Int
    ) throws {
        var timestamp = layer.clock.timestamp(at: captureTime)
        // Last line of defence behind the capture-time sanitizer: distinct frames never share or
        // go back in timestamp (modular comparison, RFC 3550 timestamps wrap).
        if let last = layer.lastTimestamp, Int32(bitPattern: timestamp &- last) <= 0 { timestamp = last &+ 1 }
        layer.lastTimestamp = timestamp
        let now = MonotonicClock.now()
        // A key frame answers every picture-loss request before it (periodic or requested).
        if isKeyFrame { layer.keyFrames.recordKeyFrame(at: now) }
        sendReportsIfDue(now: now)
        // Read before packetize borrows the stream for the whole call (exclusive access).
        let headerLength = layer.stream.headerLength
        let history = layer.history
        // Which viewers of one layer get this picture: a key frame of the layer one waits for
        // moves it there.
        if hasSelections {
            let first = layer.stream.nextSequenceNumber
            var moved = false
            for destination in destinations where destination.selection != nil {
                if destination.admit(layer: layer.index, isKeyFrame: isKeyFrame, first: first) { moved = true }
            }
            if moved { updateWatchedLayers() }
        }
        _ = try packetize(timestamp) { buffer in
            // The clear packet is kept for NACKs (and the pacers) before it is encrypted per
            // destination.
            history.store(buffer)
            videoSent.add(buffer.count, at: now)
            enqueuePaced(buffer, layer: layer, at: now)
            burst.append(buffer)
            if burst.isFull { sendBurst(layer, headerLength: headerLength) }
        }
        sendBurst(layer, headerLength: headerLength)
        sendPaced(now: now)
    }

    /// The picture's packets gathered so far, to every destination that takes `layer` as one
    /// burst each (`Destination.send(burst:…)`): destination by destination, through one
    /// scratch buffer.
    private func sendBurst(_ layer: VideoLayer, headerLength: Int) {
        defer { burst.removeAll() }
        guard burst.count > 0 else { return }
        for destination in destinations where !destination.congestion.isPaced && destination.forwards(layer.index) {
            destination.send(
                burst: burst,
                layer: layer.index,
                renumbering: destination.selection != nil,
                headerLength: headerLength,
                to: destination.address.videoRTP,
                through: destination.sockets.rtpSink,
                scratch: burstScratch
            )
            packetsSent += burst.count
        }
    }

    /// Packetizes one Opus packet (RFC 7587) and sends it to every destination. Timestamps run
    /// on by sample count; after a gap (DTX or a source pause) they restart from capture time.
    public func send(audio opusPacket: OpusPacket) throws {
        if opus.nextTimestamp == nil || opusPacket.isFirstAfterDTX {
            opus.restart(at: audioClock.timestamp(at: opusPacket.captureTime))
        }
        sendReportsIfDue(now: MonotonicClock.now())
        let headerLength = audio.headerLength
        try opus.packetize(
            opusPacket.data[...],
            sampleCount: opusPacket.sampleCount,
            stream: &audio,
            into: packet
        ) { buffer in
            sendAudio(buffer, headerLength: headerLength)
        }
    }

    /// One Opus packet to every destination: copy, protect and `sendto` each.
    private func sendAudio(_ buffer: RTPPacketBuffer, headerLength: Int) {
        let payloadLength = buffer.count - headerLength
        buffer.withUnsafeBytes { bytes in
            let now = MonotonicClock.now()
            for destination in destinations {
                guard let target = destination.address.audioRTP else { continue }
                // Audio is never held back by the pacer (libwebrtc's choice too), but charged.
                destination.congestion.charge(size: bytes.count, at: now)
                destination.send(bytes, rtcp: false, audio: true, to: target, through: destination.sockets.rtpSink)
                packetsSent += 1
                destination.audioReport.recordPacketSent(payloadLength: payloadLength)
            }
        }
    }

    /// Sends SR + SDES for both streams to every destination when the RFC 3550 interval has
    /// passed (the first report goes with the first media packets).
    public func sendReportsIfDue(now: UInt64) {
        if let next = nextReport, now < next { return }
        for destination in destinations {
            // A probe's report must stay the last one the viewer got until it reported on it.
            let holdsVideo = destination.layerProbe?.holdsReports == true
            for layer in layers where destination.options.layers.takes(layer.index) && !holdsVideo {
                sendReport(
                    destination.videoReports[layer.index],
                    to: destination,
                    rtcp: destination.address.videoRTCP,
                    now: now
                )
            }
            // Audio reports from the start too, before its first packet: the NTP↔RTP mapping holds
            // already, and a receiver (ffmpeg) that first syncs on video alone re-bases when a
            // stream's first report arrives later.
            if let rtcp = destination.address.audioRTCP {
                sendReport(destination.audioReport, to: destination, rtcp: rtcp, now: now)
            }
        }
        nextReport = schedule.nextSendTime(after: now)
    }

    func sendReport(_ builder: SenderReportBuilder, to destination: Destination, rtcp: UDPAddress, now: UInt64) {
        guard (try? builder.writeCompound(at: now, into: packet)) != nil else { return }
        schedule.recordSent(packetSize: packet.count)
        packet.withUnsafeBytes { destination.send($0, rtcp: true, to: rtcp, through: destination.sockets.rtcpSink) }
    }

    /// RTCP BYE on every stream to every destination (RFC 3550 §6.6): players end cleanly
    /// instead of waiting out a timeout.
    public func sendGoodbye(reason: String? = nil) {
        let now = MonotonicClock.now()
        for destination in destinations { sendGoodbye(to: destination, reason: reason, now: now) }
    }

    private func sendGoodbye(to destination: Destination, reason: String?, now: UInt64) {
        let video = layers.filter { destination.options.layers.takes($0.index) }.map {
            (destination.videoReports[$0.index], destination.address.videoRTCP)
        }
        for (builder, rtcp) in video + [(destination.audioReport, destination.address.audioRTCP)] {
            guard let rtcp, (try? builder.writeGoodbye(at: now, reason: reason, into: packet)) != nil else { continue }
            packet.withUnsafeBytes { destination.send($0, rtcp: true, to: rtcp, through: destination.sockets.rtcpSink) }
        }
    }
}
