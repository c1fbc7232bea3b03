import SRTP
import Transport
import WebRTC

extension MediaSender {
    /// Adds a WebRTC viewer once its transport connected: SRTP with the keys DTLS exported (ours
    /// protect, the viewer's verify its SRTCP), sent on the selected ICE pair's socket through the
    /// same copy → protect → burst path as every destination, feedback from the transport's inbox.
    @discardableResult
    public func addWebRTCDestination(
        id: String,
        link: WebRTCLink,
        transport: WebRTCTransport,
        audio: Bool,
        options: DestinationOptions
    ) throws -> Destination {
        var options = options
        options.feedbackKeys = link.keys.remote
        let (address, sockets) = try Self.path(of: link, transport: transport, audio: audio)
        return try addDestination(id: id, address: address, keys: link.keys.local, sockets: sockets, options: options)
    }

    /// ICE switched pairs: `id`'s packets go the new way from the next one on (same SRTP
    /// session, so indexes and rollover counters run on). False if `id` is unknown.
    @discardableResult
    public func replaceWebRTCPath(id: String, link: WebRTCLink, transport: WebRTCTransport) throws -> Bool {
        guard let destination = destination(id: id) else { return false }
        let (address, sockets) = try Self.path(
            of: link,
            transport: transport,
            audio: destination.address.audioRTP != nil
        )
        destination.address = address
        destination.sockets = sockets
        return true
    }

    private static func path(
        of link: WebRTCLink,
        transport: WebRTCTransport,
        audio: Bool
    ) throws -> (DestinationAddress, DestinationSockets) {
        if let selected = link.socket {
            let remote = UDPAddress(storage: selected.remoteAddress, length: selected.remoteAddressLength)
            let sockets = DestinationSockets(
                webRTC: UDPSocket(borrowing: selected.fd),
                inbox: transport.inbox,
                relay: nil,
                owner: selected
            )
            return (DestinationAddress(bundled: remote, audio: audio), sockets)
        }
        // A relayed pair: libnice must wrap every datagram for the TURN server.
        let remote = try link.pair.map { try UDPAddress(host: $0.remote.address, port: Int($0.remote.port)) }
        let placeholder = try UDPSocket(bindingTo: UDPAddress(host: "127.0.0.1", port: 0))
        let sockets = DestinationSockets(
            webRTC: placeholder,
            inbox: transport.inbox,
            relay: { transport.sendRelayed($0) },
            owner: transport
        )
        return (DestinationAddress(bundled: remote ?? placeholder.localAddress, audio: audio), sockets)
    }
}
