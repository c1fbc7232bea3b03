import ICE
import WebRTC

/// One WebRTC viewer's transport in `--stats-json` (`webRTCViewers`, by uid): its state, the
/// ICE pair and SRTP profile once connected, and what its transport received and dropped.
public struct WebRTCViewerStatistics: Sendable, Codable, Equatable {
    /// `WebRTCViewerStateMachine.State`'s text: "ice checking", "dtls-handshake", "connected", ….
    public var state: String
    /// The selected pair, "LOCAL type -> REMOTE type", once connected.
    public var path: String?
    public var srtpProfile: String?
    /// Datagrams libnice handed over; those dropped as neither DTLS nor SRTP/SRTCP (RFC 7983)
    /// and as longer than an MTU.
    public var datagramsReceived = 0
    public var datagramsNotRFC7983 = 0
    public var datagramsTooLarge = 0
    public var peerReflexiveCandidates = 0
    public var mdnsCandidatesIgnored = 0
    /// The viewer's first ICE connectivity check arrived (its side of ICE started).
    public var peerChecksReceived = false
    /// DTLS before ICE passed (dropped), refused by the session, and our flights resent.
    public var dtlsBeforeICE = 0
    public var dtlsRefused = 0
    public var dtlsRetransmissions = 0
    /// SRTP from a recvonly viewer (dropped), and SRTCP handed to the sender thread.
    public var srtpIgnored = 0
    public var srtcpReceived = 0

    public init(state: String) { self.state = state }

    mutating func update(transport: WebRTCTransport.Statistics, ice: ICEStatistics) {
        datagramsReceived = ice.datagramsReceived
        datagramsNotRFC7983 = ice.droppedNotRFC7983
        datagramsTooLarge = ice.droppedTooLarge
        peerReflexiveCandidates = ice.peerReflexiveCandidates
        mdnsCandidatesIgnored = ice.ignoredMDNSCandidates
        peerChecksReceived = ice.peerChecksReceived
        dtlsBeforeICE = transport.dtlsBeforeICE
        dtlsRefused = transport.dtlsRefused
        dtlsRetransmissions = transport.dtlsRetransmissions
        srtpIgnored = transport.srtpIgnored
        srtcpReceived = transport.srtcpReceived
    }
}
