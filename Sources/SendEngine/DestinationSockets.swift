import Transport

/// The local sockets one destination's packets leave from, and its feedback arrives on.
///
/// Symmetric RTCP (RFC 4961): RTCP goes out from the socket that reads the receiver's RTCP, so
/// a receiver that answers to the source address of our reports (Janus latches onto it) reaches
/// us. Without rtcp-mux the pair is an even RTP port P and RTCP on P + 1 (RFC 3550 §11), so a
/// receiver that sends its RTCP to "our RTP source port + 1" reaches the same socket; with
/// rtcp-mux (RFC 5761) one socket carries both, and feedback arrives on the RTP socket.
///
/// Sending goes through `DatagramSink`, the seam between the send engine and the network: a
/// plain receiver's sinks are its UDP sockets, a WebRTC viewer's the ICE pair's socket or the
/// TURN relay, a test's memory.
final class DestinationSockets {
    /// Where RTP goes (and RTCP too, under rtcp-mux or with an inbox).
    let rtpSink: any DatagramSink
    /// The same object as `rtpSink` under rtcp-mux and with an inbox.
    let rtcpSink: any DatagramSink
    /// A plain receiver's sockets, read for its feedback; nil when `inbox` carries it.
    let readable: (rtp: UDPSocket, rtcp: UDPSocket)?
    /// A WebRTC viewer's feedback: libnice reads the socket (STUN and DTLS are its and ours on
    /// the same 5-tuple) and hands the SRTCP over here; the socket is then only sent on.
    let inbox: DatagramInbox?
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
        owner = nil
        if address.rtcpMux {
            let socket = try UDPSocket(bindingTo: UDPAddress(host: any, port: 0))
            (rtpSink, rtcpSink, readable) = (socket, socket, (socket, socket))
            return
        }
        for _ in 0..<Self.pairAttempts {
            let first = try UDPSocket(bindingTo: UDPAddress(host: any, port: 0))
            let port = first.localAddress.port
            guard port % 2 == 0, port < 65_535 else { continue }
            guard let second = try? UDPSocket(bindingTo: UDPAddress(host: any, port: port + 1)) else { continue }
            (rtpSink, rtcpSink, readable) = (first, second, (first, second))
            return
        }
        throw TransportError(
            .bind,
            "no even UDP port with a free odd neighbour found in \(Self.pairAttempts) attempts for \(address)"
        )
    }

    /// A destination without sockets of its own: datagrams go to `sink` (a WebRTC viewer's ICE
    /// pair socket, borrowed from libnice and kept open by `owner`, its TURN relay, or memory)
    /// and its feedback arrives in `inbox`.
    init(sink: any DatagramSink, inbox: DatagramInbox, owner: AnyObject?) {
        rtpSink = sink
        rtcpSink = sink
        readable = nil
        self.inbox = inbox
        self.owner = owner
    }

    var isMultiplexed: Bool { rtpSink === rtcpSink }
}
