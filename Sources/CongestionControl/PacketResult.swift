/// What transport-wide feedback says about one sent packet: when we sent it, when (and whether)
/// the receiver got it, and how big it was.
///
/// Transport-wide congestion control (draft-holmer-rmcat-transport-wide-cc-extensions-01) numbers
/// every packet of the session with one 16-bit sequence number and has the receiver report each
/// number's arrival time. The sender keeps the send time and size of each number it sent and
/// joins them with the report; that join is a `PacketResult`. Times are the sender's and the
/// receiver's monotonic clocks in microseconds: the two clocks are never compared with each
/// other, only differences within each (draft-ietf-rmcat-gcc-02 §5.1), so their offsets do not
/// matter.
struct PacketResult: Sendable, Hashable {
    /// The transport-wide sequence number, unwrapped to 64 bits by the caller so that order
    /// survives the 16-bit wrap.
    var sequenceNumber: UInt64
    /// When the packet left the sender (its pacer), sender's clock, µs.
    var sendTimeUs: Int64
    /// When the receiver got it, receiver's clock, µs; nil when the feedback reports it lost.
    var arrivalTimeUs: Int64?
    /// Bytes on the wire as the estimator counts them (the RTP packet with its headers).
    var size: Int

    init(sequenceNumber: UInt64, sendTimeUs: Int64, arrivalTimeUs: Int64?, size: Int) {
        self.sequenceNumber = sequenceNumber
        self.sendTimeUs = sendTimeUs
        self.arrivalTimeUs = arrivalTimeUs
        self.size = size
    }

    /// Whether the receiver reported it received.
    var isReceived: Bool { arrivalTimeUs != nil }
}
