/// One layer of the rid-based H.264 simulcast we offer a WHIP endpoint (RFC 8853): its name and
/// the streams it is sent on. `WebRTCAnswer.Configuration.Video.simulcast` lists them highest
/// first, the order Janus reads them in (its default `rid_order` is highest, medium, lowest).
public struct SimulcastLayer: Sendable, Hashable {
    /// RFC 8851 §10 `rid-id` (letters, digits, `-`, `_`), at most 15 characters because Janus
    /// reads an `a=rid` with `%15s` and would match a longer one against nothing.
    public var rid: String
    /// The layer's own stream: its own SSRC, sequence numbers and history.
    public var ssrc: UInt32
    /// The layer's RFC 4588 RTX stream; every layer has one or none does.
    public var retransmissionSSRC: UInt32?

    /// The longest rid Janus 1.1.2 reads whole.
    public static let maximumRIDLength = 15

    public init(rid: String, ssrc: UInt32, retransmissionSSRC: UInt32? = nil) {
        self.rid = rid
        self.ssrc = ssrc
        self.retransmissionSSRC = retransmissionSSRC
    }
}
