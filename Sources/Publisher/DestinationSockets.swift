import Transport

/// The local sockets one destination's packets leave from, and its feedback arrives on.
///
/// Symmetric RTCP (RFC 4961): RTCP goes out from the socket that reads the receiver's RTCP, so
/// a receiver that answers to the source address of our reports (Janus latches onto it) reaches
/// us. Without rtcp-mux the pair is an even RTP port P and RTCP on P + 1 (RFC 3550 §11), so a
/// receiver that sends its RTCP to "our RTP source port + 1" reaches the same socket; with
/// rtcp-mux (RFC 5761) one socket carries both, and feedback arrives on the RTP socket.
final class DestinationSockets {
    let rtp: UDPSocket
    /// The same object as `rtp` under rtcp-mux.
    let rtcp: UDPSocket
    /// A WebRTC viewer's feedback: libnice reads the socket (STUN and DTLS are its and ours on
    /// the same 5-tuple) and hands the SRTCP over here; `rtp` is then only sent on, never read.
    let inbox: DatagramInbox?
    /// A TURN-relayed WebRTC viewer: every datagram goes through the ICE agent instead.
    let relay: (@Sendable (UnsafeRawBufferPointer) -> Bool)?
    /// What keeps a borrowed socket open (libnice's `GSocket`, through `ICESelectedSocket`).
    private let owner: AnyObject?

    /// Attempts at finding an even port with its odd neighbour free.
    private static let pairAttempts = 64

    init(for address: DestinationAddress) throws {
        // A receiver on this machine is answered from loopback only: nothing is opened to the
        // network for it. Any other receiver needs the wildcard of its family.
        let target = address.videoRTP
        let any =
            target.isLoopback ? (target.isIPv6 ? "::1" : "127.0.0.1") : (target.isIPv6 ? "::" : "0.0.0.0")
        inbox = nil
        relay = nil
        owner = nil
        if address.rtcpMux {
            rtp = try UDPSocket(bindingTo: UDPAddress(host: any, port: 0))
            rtcp = rtp
            return
        }
        for _ in 0..<Self.pairAttempts {
            let first = try UDPSocket(bindingTo: UDPAddress(host: any, port: 0))
            let port = first.localAddress.port
            guard port % 2 == 0, port < 65_535 else { continue }
            guard let second = try? UDPSocket(bindingTo: UDPAddress(host: any, port: port + 1)) else { continue }
            rtp = first
            rtcp = second
            return
        }
        throw TransportError(
            .bind,
            "no even UDP port with a free odd neighbour found in \(Self.pairAttempts) attempts for \(address)"
        )
    }

    /// A WebRTC viewer's path: sends on `socket` (borrowed from libnice, kept open by `owner`),
    /// or, for a relayed pair, through `relay` (then `socket` is a loopback one never used).
    init(
        webRTC socket: UDPSocket,
        inbox: DatagramInbox,
        relay: (@Sendable (UnsafeRawBufferPointer) -> Bool)?,
        owner: AnyObject?
    ) {
        self.rtp = socket
        self.rtcp = socket
        self.inbox = inbox
        self.relay = relay
        self.owner = owner
    }

    var isMultiplexed: Bool { rtp === rtcp }
}
