import DTLS
import ICE

/// What a connected WebRTC transport gives the publisher's destination: the SRTP keys the DTLS
/// handshake exported (RFC 5764 §4.2) and where packets go.
public struct WebRTCLink: @unchecked Sendable {
    /// `local` protects what we send; `remote` verifies the viewer's SRTCP.
    public let keys: DTLSSRTPKeys
    public let pair: ICECandidatePair?
    /// The selected pair's socket and the viewer's address, for plain `sendto`/segmented sends
    /// (the fast path); nil for a TURN-relayed pair, which goes through
    /// `WebRTCTransport.sendRelayed`. Keeps libnice's socket open while it lives.
    public let socket: ICESelectedSocket?

    public init(keys: DTLSSRTPKeys, pair: ICECandidatePair?, socket: ICESelectedSocket?) {
        self.keys = keys
        self.pair = pair
        self.socket = socket
    }
}
