extension Destination {
    /// The local port this destination's RTCP leaves from and its receiver's RTCP is read on
    /// (symmetric RTCP, RFC 4961). A receiver that latches onto the source of our reports
    /// (Janus) finds it by itself; one that sends to a configured address (GStreamer's
    /// `udpsink`, a firewall rule) must be told. The RTP port under rtcp-mux.
    public var localRTCPPort: Int { sockets.rtcp.localAddress.port }

    /// The local port this destination's RTP leaves from (and, under rtcp-mux, its RTCP).
    public var localRTPPort: Int { sockets.rtp.localAddress.port }
}
