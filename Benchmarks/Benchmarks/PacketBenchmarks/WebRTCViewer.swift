import SRTP
import SendEngine
import Transport

/// A WebRTC viewer as `MediaSender` holds it once ICE and DTLS are done, without running them:
/// the handshake happens once per viewer, the packet path is what the benchmark measures. It
/// enters through `addWebRTCDestination(id:keys:feedbackKeys:socket:…)`, the entry the
/// ICE-selected pair takes too, so each packet goes the product's way: payload-type rewrite,
/// copy, SRTP protect, `sendto` on the pair's socket.
enum WebRTCViewer {
    /// A browser's numbers, which differ from ours (96 and 97), so every copy is rewritten: what
    /// our answer picks from the Chromium offer of Tests/JSEPTests (H.264 packetization-mode 1
    /// 102, its RTX 103, Opus 111).
    static let videoPayloadType: UInt8 = 102
    static let retransmissionPayloadType: UInt8 = 103
    static let audioPayloadType: UInt8 = 111

    /// Adds viewer `id` to `sender`, sending to `sink`. Its "selected pair" socket is a loopback
    /// one of its own (libnice's would be borrowed); its keys stand in for the DTLS exporter's:
    /// random, of `suite`, ours and the viewer's apart. Video only, like the SDES rows' receivers,
    /// so both kinds get the same sender reports. RTX as `WebRTCSubscribers.connect` sets it up
    /// when the offer has it (browsers' do).
    static func add(id: String, to sender: MediaSender, sink: UDPAddress, suite: SRTPSuite) throws {
        let socket = try UDPSocket(bindingTo: UDPAddress(host: "127.0.0.1", port: 0))
        let payloadTypes = PayloadTypeRewrite(
            sentVideo: sender.configuration.videoPayloadType,
            sentAudio: sender.configuration.audioPayloadType,
            video: videoPayloadType,
            audio: audioPayloadType,
            retransmission: retransmissionPayloadType
        )
        try sender.addWebRTCDestination(
            id: id,
            keys: SRTPKeyMaterial.random(for: suite),
            feedbackKeys: SRTPKeyMaterial.random(for: suite),
            socket: socket,
            remote: sink,
            // The transport's inbox: nothing arrives in it here (the sink never answers).
            inbox: DatagramInbox(),
            owner: nil,
            audio: false,
            options: DestinationOptions(retransmission: .rtx, payloadTypes: payloadTypes)
        )
    }
}
