import CongestionControl
import Media
import RTP
import SRTP
import SendEngine
import Testing
import Transport

/// Simulcast in the send engine (Docs/simulcast.md), with no network: one sender with three
/// layers, an SFU destination that takes them all and a viewer that takes layer 0, their
/// datagrams in memory and opened with their keys.
@Suite struct SimulcastSendTests {
    typealias MemorySink = InMemorySendPathTests.MemorySink

    struct Receiver {
        let sink = MemorySink()
        let inbox: DatagramInbox
        let keys = SRTPKeyMaterial.random()
        let feedbackKeys = SRTPKeyMaterial.random()

        init() throws { inbox = try DatagramInbox() }

        /// The RTP datagrams, unprotected, with their clear bytes (for the header extension).
        func received() throws -> [(packet: RTPPacket, bytes: [UInt8])] {
            let session = try SRTPSession(keys: keys, direction: .inbound)
            return try sink.datagrams.map(\.bytes).filter { $0.count > 1 && !(192...223).contains($0[1]) }.map {
                let clear = try session.unprotect($0)
                return (try RTPPacket.parse(clear), clear)
            }
        }

        /// Puts RTCP from this receiver into its inbox, as ICE would hand it over.
        func send(_ packets: [RTCPPacket]) throws {
            let session = try SRTPSession(keys: feedbackKeys, direction: .outbound)
            let datagram = try session.protectRTCP(try RTCPPacket.serialize(packets))
            #expect(datagram.withUnsafeBytes { inbox.put($0) })
        }
    }

    static let simulcast = MediaSender.Simulcast(rids: ["f", "l", "q"], mid: "0")

    static func sender() throws -> MediaSender {
        var configuration = MediaSender.Configuration(cname: "simulcast")
        configuration.simulcast = simulcast
        configuration.congestion.transportWide = true
        return try MediaSender(configuration: configuration, origin: 1_000_000_000)
    }

    /// A destination with RTX, transport-wide numbers and key-frame requests, of `layers`.
    static func add(_ receiver: Receiver, id: String, layers: DestinationLayers, to sender: MediaSender) throws {
        try add(
            receiver,
            id: id,
            options: DestinationOptions(
                retransmission: .rtx,
                transportWideSequenceNumberID: SendSideBandwidthEstimator.templateID,
                asksForKeyFrames: true,
                layers: layers
            ),
            to: sender
        )
    }

    static func add(_ receiver: Receiver, id: String, options: DestinationOptions, to sender: MediaSender) throws {
        try sender.addDestination(
            id: id,
            keys: receiver.keys,
            feedbackKeys: receiver.feedbackKeys,
            sink: receiver.sink,
            remote: try UDPAddress(host: "127.0.0.1", port: 50_000),
            inbox: receiver.inbox,
            owner: nil,
            audio: false,
            options: options
        )
    }

    static func text(_ id: UInt8, _ bytes: [UInt8]) throws -> String? {
        try bytes.withUnsafeBytes { try RTPStreamIdentifier.value(id: id, inPacket: $0) }
    }

    @Test(
        "each layer its own SSRC and sequence numbers, mid and rid on every packet to the SFU; the viewer sees layer 0 bare"
    )
    func layersOnTheWire() throws {
        let sender = try Self.sender()
        let sfu = try Receiver()
        let viewer = try Receiver()
        try Self.add(sfu, id: "sfu", layers: .all, to: sender)
        try Self.add(viewer, id: "viewer", layers: .first, to: sender)
        #expect(Set(sender.layers.map(\.stream.ssrc)).count == 3)
        #expect(Set(sender.layers.map(\.rtxSSRC)).count == 3)
        for layer in 0..<3 {
            try sender.send(video: InMemorySendPathTests.keyFrame(captureTime: 1_100_000_000), layer: layer)
        }
        #expect(throws: MediaError.self) {
            try sender.send(video: InMemorySendPathTests.keyFrame(captureTime: 1_100_000_000), layer: 3)
        }

        let atSFU = try sfu.received()
        #expect(atSFU.count == 12)  // STAP-A and three FU-A fragments per layer.
        for (index, layer) in sender.layers.enumerated() {
            let packets = atSFU.filter { $0.packet.header.ssrc == layer.stream.ssrc }
            #expect(packets.count == 4, "layer \(index)")
            #expect(
                try packets.allSatisfy { try Self.text(10, $0.bytes) == layer.rid && Self.text(4, $0.bytes) == "0" }
            )
            let numbers = packets.map(\.packet.header.sequenceNumber)
            #expect(zip(numbers, numbers.dropFirst()).allSatisfy { $1 == $0 &+ 1 })
            // One picture, one timestamp on every layer.
            #expect(packets.allSatisfy { $0.packet.header.timestamp == atSFU[0].packet.header.timestamp })
        }
        // One transport-wide counter for all layers: the SFU's copies run 1...12 without a gap.
        let wide = try atSFU.map {
            try $0.bytes.withUnsafeBytes { try RTPTransportSequenceNumber.read(id: 3, inPacket: $0) }
        }
        #expect(wide.compactMap { $0 } == (1...12).map { UInt16($0) }, "\(wide)")

        let atViewer = try viewer.received()
        #expect(atViewer.count == 4 && atViewer.allSatisfy { $0.packet.header.ssrc == sender.layers[0].stream.ssrc })
        // Elements it never agreed on are padding in its copy.
        #expect(try atViewer.allSatisfy { try Self.text(10, $0.bytes) == nil && Self.text(4, $0.bytes) == nil })
    }

    @Test("a NACK on one layer is repaired from that layer's history, RTX with its rrid; a PLI asks that layer alone")
    func feedbackPerLayer() throws {
        let sender = try Self.sender()
        let sfu = try Receiver()
        try Self.add(sfu, id: "sfu", layers: .all, to: sender)
        // Not key frames: a PLI just after a key frame is answered by it (the limiter).
        var unit = InMemorySendPathTests.keyFrame(captureTime: 1_100_000_000)
        unit.isKeyFrame = false
        for layer in 0..<3 { try sender.send(video: unit, layer: layer) }
        let low = sender.layers[1]
        let lost = try #require(try sfu.received().first { $0.packet.header.ssrc == low.stream.ssrc })
        let before = sfu.sink.datagrams.count
        try sfu.send([
            .genericNACK(
                RTCPGenericNACK(
                    senderSSRC: 9,
                    mediaSSRC: low.stream.ssrc,
                    lostSequenceNumbers: [lost.packet.header.sequenceNumber]
                )
            ),
            .pictureLossIndication(RTCPPictureLossIndication(senderSSRC: 9, mediaSSRC: sender.layers[2].stream.ssrc)),
        ])
        let actions = sender.pollFeedback(now: MonotonicClock.now())
        #expect(actions.keyFrameLayers == 1 << 2)
        #expect(!actions.keyFrameRequested)
        #expect(sfu.sink.datagrams.count == before + 1)
        let repair = try #require(try sfu.received().last)
        #expect(repair.packet.header.ssrc == low.rtxSSRC)
        // RFC 4588 §4: the original sequence number first, then the original payload.
        #expect(
            Array(repair.packet.payload.prefix(2)) == [
                UInt8(lost.packet.header.sequenceNumber >> 8), UInt8(lost.packet.header.sequenceNumber & 0xFF),
            ]
        )
        #expect(Array(repair.packet.payload.dropFirst(2)) == lost.packet.payload)
        // RFC 8852 §3.2: the RTX stream names the layer it repairs by rrid, not rid.
        #expect(try Self.text(11, repair.bytes) == "l" && Self.text(10, repair.bytes) == nil)
        #expect(try Self.text(4, repair.bytes) == "0")
    }
}
