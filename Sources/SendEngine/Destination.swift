import CongestionControl
import Media
import RTP
import SRTP
import Transport

/// One receiver of the published stream with its own SRTP session: keys no other destination
/// shares, fresh from the system CSPRNG, never logged. Audio and video share the master key
/// (their SSRCs differ, which RFC 3711 §9.1 allows, and Janus's SRTP input requires).
///
/// Every packet is copied from the shared clear-text packet into a buffer allocated once and
/// encrypted in place there (`protectCopy`), so a destination costs one copy and one
/// `srtp_protect` per packet and no allocation. Audio, RTCP and resends go out one `sendto`
/// each from the destination's own buffer; a picture's packets go out in bursts
/// (`send(burst:…)`).
public final class Destination {
    public let id: String
    /// Where packets go; a WebRTC viewer's changes when ICE switches pairs (`replacePath`).
    public internal(set) var address: DestinationAddress
    public let keys: SRTPKeyMaterial
    public let options: DestinationOptions
    let session: SRTPSession
    let buffer: UnsafeMutableRawBufferPointer
    /// One per video layer of the sender (used for the layers it takes).
    var videoReports: [SenderReportBuilder]
    var audioReport: SenderReportBuilder
    /// Where this destination's packets leave from and its feedback arrives.
    var sockets: DestinationSockets
    let feedback: DestinationFeedback
    /// Transport-wide numbers, the delay-based estimate, probing and the pacer.
    let congestion: SendSideBandwidthEstimator
    /// The sender's simulcast, whose mid and rid elements every video packet carries: kept for a
    /// destination that takes every layer (an RTX copy's rid becomes its rrid), blanked to
    /// padding for one that takes layer 0 alone and never agreed on them.
    let simulcast: MediaSender.Simulcast?
    /// The video layers whose packets it gets now, bit i for layer i (`forwards`).
    var layerMask: UInt32
    /// A viewer that watches one layer at a time (`DestinationLayers.adaptive`).
    var selection: LayerSelection?
    /// A receiver on this machine that cannot ask for key frames: whether it listens.
    var listener: ListenerWatch?
    /// Such a viewer that reports only loss, paced and with RTX: it starts on the lowest layer
    /// and moves up only after its path carried the higher layer's rate (`LayerProbe`).
    var layerProbe: LayerProbe?
    /// An SFU that takes every layer (`.all`): the highest layer it still gets, and the policy
    /// that drops layers from the top when its estimate cannot carry them all.
    public internal(set) var keptFrom = 0
    var dropPolicy: LayerPolicy?
    /// The video sent to it over the last second, and the highest such rate of the last
    /// `probedWindow`: how far a receiver that reports only loss has shown its path carries.
    var videoSent = SentBytesWindow(window: 1_000_000_000)
    var probed: (bitsPerSecond: Int, at: UInt64) = (0, 0)
    public internal(set) var statistics = Statistics()

    public struct Statistics: Sendable, Equatable {
        public var rtpPackets = 0
        public var rtpBytes = 0
        public var rtcpPackets = 0
        /// Datagrams the kernel would not take (full socket buffer) or refused.
        public var sendDrops = 0
        /// Packets libsrtp refused to protect (should stay 0).
        public var protectFailures = 0
    }

    /// Same-SSRC retransmission re-protects a packet under the index it was first sent with.
    /// libsrtp's `srtp_protect` refuses an index its window has seen (`replay_fail`) unless the
    /// session allows repeated transmission, and refuses an index older than its window
    /// (`replay_old`) always; so the session allows repeats and its window spans the history.
    /// Repeating is safe here because the bytes are the identical clear packet from the
    /// history: same index, same plaintext, so the same ciphertext and tag, no keystream reuse
    /// on different data. (A second SRTP context would not do: it would not know the stream's
    /// rollover counter and would encrypt a resend after a wrap under the wrong index.)
    init(
        id: String,
        address: DestinationAddress,
        keys: SRTPKeyMaterial,
        options: DestinationOptions,
        historyCapacity: Int,
        feedback: DestinationFeedback,
        congestion: SendSideBandwidthEstimator,
        videoReports: [SenderReportBuilder],
        audioReport: SenderReportBuilder,
        simulcast: MediaSender.Simulcast? = nil,
        sockets: DestinationSockets? = nil
    ) throws {
        let layerCount = videoReports.count
        switch options.layers {
        case .adaptive where layerCount > 1:
            var generator = SystemRandomNumberGenerator()
            selection = LayerSelection(
                ssrc: videoReports[0].ssrc,
                layerCount: layerCount,
                needs: simulcast?.needs ?? [],
                firstSequenceNumber: UInt16.random(in: .min ... .max, using: &generator)
            )
            layerMask = 0
            if options.retransmission == .rtx, congestion.isPaced, congestion.transportWideID == nil {
                layerProbe = LayerProbe()
            }
        case .all where layerCount > 1:
            // Keeping the layers from i on needs what they take together.
            let needs = simulcast?.needs ?? []
            dropPolicy = LayerPolicy(needs: needs.indices.map { needs[$0...].reduce(0, +) })
            layerMask = (1 << UInt32(layerCount)) - 1
        default:
            layerMask = 1
        }
        self.id = id
        self.address = address
        self.keys = keys
        self.options = options
        self.session = try SRTPSession(
            keys: keys,
            direction: .outbound,
            configuration: SRTPSession.Configuration(
                replayWindowSize: max(historyCapacity, 1024),
                allowsRepeatedTransmission: options.retransmission == .sameSSRC
            )
        )
        self.sockets = try sockets ?? DestinationSockets(for: address)
        self.feedback = feedback
        self.congestion = congestion
        self.buffer = .allocate(byteCount: RTPPacketBuffer.maximumCapacity, alignment: 8)
        self.videoReports = videoReports
        self.simulcast = simulcast
        self.audioReport = audioReport
        if !options.asksForKeyFrames, address.videoRTP.isLoopback, let rtp = self.sockets.readable?.rtp,
            rtp.reportUnreachable()
        {
            listener = ListenerWatch()
        }
    }

    deinit { buffer.deallocate() }

    /// Copies `packet` to the front of `slot` and protects it there (SRTCP when `rtcp`); an RTP
    /// packet gets this destination's payload types and transport-wide number first
    /// (`audio` says which stream it is). Returns the protected length; nil when the slot lacks
    /// room for the packet and its trailer, or when libsrtp refused it (counted).
    func protectCopy(
        of packet: UnsafeRawBufferPointer,
        into slot: UnsafeMutableRawBufferPointer,
        rtcp: Bool,
        audio: Bool = false,
        renumbering layer: Int? = nil
    ) -> Int? {
        guard packet.count <= slot.count - RTPPacketBuffer.trailerSpare, let source = packet.baseAddress,
            let target = slot.baseAddress
        else { return nil }
        target.copyMemory(from: source, byteCount: packet.count)
        if rtcp {
            do {
                return try session.protectRTCP(buffer: slot, length: packet.count)
            } catch {
                statistics.protectFailures += 1
                return nil
            }
        }
        if let payloadTypes = options.payloadTypes { payloadTypes.rewrite(target) }
        if !audio { adaptStreamIDs(UnsafeMutableRawBufferPointer(rebasing: slot[0..<packet.count]), repair: false) }
        if let layer { selection?.renumber(target, layer: layer) }
        return protectRTP(slot, length: packet.count, audio: audio)
    }

    /// The simulcast elements of a clear video packet as this destination takes them
    /// (`simulcast`): kept, with the rid renamed to the rrid in a repair (`repair`, RFC 8852
    /// §3.2), or blanked.
    func adaptStreamIDs(_ packet: UnsafeMutableRawBufferPointer, repair: Bool) {
        guard let simulcast else { return }
        if options.layers == .all {
            if repair {
                _ = try? RTPStreamIdentifier.renameElement(
                    id: simulcast.ridID,
                    to: simulcast.repairedRIDID,
                    inPacket: packet
                )
            }
        } else {
            // Every layer a viewer watches arrives as the one stream it agreed on.
            _ = try? RTPStreamIdentifier.blankElement(id: simulcast.midID, inPacket: packet)
            _ = try? RTPStreamIdentifier.blankElement(id: simulcast.ridID, inPacket: packet)
        }
    }

    /// Stamps the clear RTP packet at the front of `slot` with the next transport-wide number
    /// (or blanks the element), protects it in place and records the send for transport
    /// feedback. The protected length, or nil (counted).
    func protectRTP(_ slot: UnsafeMutableRawBufferPointer, length: Int, audio: Bool) -> Int? {
        guard let base = slot.baseAddress else { return nil }
        let number = congestion.stamp(base, length: length, audio: audio)
        let protected: Int
        do {
            protected = try session.protect(buffer: slot, length: length)
        } catch {
            statistics.protectFailures += 1
            return nil
        }
        if let number { congestion.recordSent(number, size: protected, at: MonotonicClock.now()) }
        return protected
    }

    /// Copies `packet`, protects it (SRTCP when `rtcp`) and sends it to `to` through `sink`.
    func send(
        _ packet: UnsafeRawBufferPointer,
        rtcp: Bool,
        audio: Bool = false,
        to: UDPAddress,
        through sink: any DatagramSink
    ) {
        guard let length = protectCopy(of: packet, into: buffer, rtcp: rtcp, audio: audio) else { return }
        if sink.send(UnsafeRawBufferPointer(rebasing: buffer[0..<length]), to: to) {
            if rtcp {
                statistics.rtcpPackets += 1
            } else {
                statistics.rtpPackets += 1
                statistics.rtpBytes += length
            }
        } else {
            statistics.sendDrops += 1
        }
    }
}
