/// A receiver's own payload type numbers for our streams. A packet is cut once for every
/// destination with our numbers; a WebRTC viewer's offer picks its own (dynamic numbers differ
/// per browser, RFC 8829 §5.3.1), so its copy gets them in the second header byte before SRTP
/// protects it: one load and one store per packet, the marker bit kept.
public struct PayloadTypeRewrite: Sendable, Equatable {
    public var sentVideo: UInt8
    public var sentAudio: UInt8
    public var video: UInt8
    public var audio: UInt8
    /// The RTX payload type (RFC 4588) whose `apt` is `video`; nil: no RTX.
    public var retransmission: UInt8?

    public init(sentVideo: UInt8, sentAudio: UInt8, video: UInt8, audio: UInt8, retransmission: UInt8?) {
        self.sentVideo = sentVideo
        self.sentAudio = sentAudio
        self.video = video
        self.audio = audio
        self.retransmission = retransmission
    }

    /// Rewrites the payload type of the RTP packet at `packet` (at least 2 bytes) in place.
    @inline(__always)
    func rewrite(_ packet: UnsafeMutableRawPointer) {
        let second = packet.load(fromByteOffset: 1, as: UInt8.self)
        let type = second & 0x7F
        if type == sentVideo {
            packet.storeBytes(of: second & 0x80 | video, toByteOffset: 1, as: UInt8.self)
        } else if type == sentAudio {
            packet.storeBytes(of: second & 0x80 | audio, toByteOffset: 1, as: UInt8.self)
        }
    }
}
