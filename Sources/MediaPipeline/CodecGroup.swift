import Media
import ProcessSupport
import SDP
import SendEngine

/// The viewers that take another codec than H.264 (VP8 or VP9: a browser without H.264), with
/// the stream they share: a sender of their own (its SSRCs, sequence numbers, NACK history, RTX,
/// key-frame limiter and bitrate policy), fed by a second encoder on the media thread from the
/// same converted picture as H.264 (`VideoPath`). The media thread opens that encoder when the
/// group has a destination and closes it when the last one leaves, so a group nobody watches
/// costs nothing. Its feedback is answered by the sender thread, as the main sender's is.
public final class CodecGroup: Sendable {
    public let codec: VideoCodec
    public let sender: Locked<MediaSender>
    /// Its encoder's key-frame and bitrate requests (its viewers' PLI/FIR, joins, targets).
    public let requests: EncoderRequests

    init(codec: VideoCodec, sender: MediaSender) {
        self.codec = codec
        self.sender = Locked(sender)
        requests = EncoderRequests(sender: self.sender)
    }
}
