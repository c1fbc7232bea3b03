import Transport

extension Destination {
    /// The local port this destination's RTCP leaves from and its receiver's RTCP is read on
    /// (symmetric RTCP, RFC 4961). A receiver that latches onto the source of our reports
    /// (Janus) finds it by itself; one that sends to a configured address (GStreamer's
    /// `udpsink`, a firewall rule) must be told. The RTP port under rtcp-mux; 0 for a destination without sockets of its own.
    public var localRTCPPort: Int { (sockets.rtcpSink as? UDPSocket)?.localAddress.port ?? 0 }

    /// The local port this destination's RTP leaves from (and, under rtcp-mux, its RTCP).
    public var localRTPPort: Int { (sockets.rtpSink as? UDPSocket)?.localAddress.port ?? 0 }
}
