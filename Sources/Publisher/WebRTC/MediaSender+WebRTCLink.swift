import SendEngine
import Transport
import WebRTC

extension MediaSender {
    /// Adds a WebRTC viewer once its transport connected: SRTP with the keys DTLS exported (ours
    /// protect, the viewer's verify its SRTCP), sent on the selected ICE pair's socket, or
    /// through the ICE agent for a TURN-relayed pair, feedback from the transport's inbox.
    @discardableResult
    func addWebRTCDestination(
        id: String,
        link: WebRTCLink,
        transport: WebRTCTransport,
        audio: Bool,
        options: DestinationOptions
    ) throws -> Destination {
        let path = try Self.path(of: link, transport: transport)
        return try addDestination(
            id: id,
            keys: link.keys.local,
            feedbackKeys: link.keys.remote,
            sink: path.sink,
            remote: path.remote,
            inbox: transport.inbox,
            owner: path.owner,
            audio: audio,
            options: options
        )
    }

    /// ICE switched pairs: `id`'s packets go the new way from the next one on. False if `id`
    /// is unknown.
    @discardableResult
    func replaceWebRTCPath(id: String, link: WebRTCLink, transport: WebRTCTransport) throws -> Bool {
        let path = try Self.path(of: link, transport: transport)
        return replacePath(id: id, sink: path.sink, remote: path.remote, inbox: transport.inbox, owner: path.owner)
    }

    /// A pair with a socket of its own is sent on directly (`sendto` and segmented sends); a
    /// relayed pair goes through libnice, which wraps every datagram for the TURN server.
    private static func path(
        of link: WebRTCLink,
        transport: WebRTCTransport
    ) throws -> (sink: any DatagramSink, remote: UDPAddress, owner: AnyObject) {
        if let selected = link.socket {
            return (
                UDPSocket(borrowing: selected.fd),
                UDPAddress(storage: selected.remoteAddress, length: selected.remoteAddressLength),
                selected
            )
        }
        let remote = try link.pair.map { try UDPAddress(host: $0.remote.address, port: Int($0.remote.port)) }
        let sink = RelayDatagramSink { transport.sendRelayed($0) }
        return (sink, try remote ?? UDPAddress(host: "127.0.0.1", port: 9), transport)
    }
}
