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
        if let selected = link.socket {
            return try addWebRTCDestination(
                id: id,
                keys: link.keys.local,
                feedbackKeys: link.keys.remote,
                socket: UDPSocket(borrowing: selected.fd),
                remote: UDPAddress(storage: selected.remoteAddress, length: selected.remoteAddressLength),
                inbox: transport.inbox,
                owner: selected,
                audio: audio,
                options: options
            )
        }
        return try addWebRTCDestination(
            id: id,
            keys: link.keys.local,
            feedbackKeys: link.keys.remote,
            path: Self.relayedPath(of: link, transport: transport, audio: audio),
            options: options
        )
    }

    /// Adds a WebRTC viewer on a direct (not relayed) path: `keys` protect what we send,
    /// `feedbackKeys` verify the viewer's SRTCP, packets go from `socket` to `remote` (one
    /// bundled, rtcp-muxed 5-tuple) and feedback arrives in `inbox`. This is the path the
    /// ICE-selected pair takes (`addWebRTCDestination(id:link:transport:audio:options:)` ends
    /// here): the same sockets, payload-type rewrite, protect and send per packet. Public so the
    /// packet benchmarks measure a WebRTC viewer's cost without an ICE and DTLS handshake.
    /// `owner` keeps a borrowed `socket` open (libnice's, through `ICESelectedSocket`); nil
    /// when `socket` owns its descriptor.
    @discardableResult
    public func addWebRTCDestination(
        id: String,
        keys: SRTPKeyMaterial,
        feedbackKeys: SRTPKeyMaterial,
        socket: UDPSocket,
        remote: UDPAddress,
        inbox: DatagramInbox,
        owner: AnyObject?,
        audio: Bool,
        options: DestinationOptions
    ) throws -> Destination {
        try addWebRTCDestination(
            id: id,
            keys: keys,
            feedbackKeys: feedbackKeys,
            path: Self.directPath(socket: socket, remote: remote, inbox: inbox, owner: owner, audio: audio),
            options: options
        )
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

    /// Both WebRTC entries end here, so a direct and a relayed viewer differ in their sockets
    /// only: the viewer's own key verifies its SRTCP.
    private func addWebRTCDestination(
        id: String,
        keys: SRTPKeyMaterial,
        feedbackKeys: SRTPKeyMaterial,
        path: (address: DestinationAddress, sockets: DestinationSockets),
        options: DestinationOptions
    ) throws -> Destination {
        var options = options
        options.feedbackKeys = feedbackKeys
        return try addDestination(id: id, address: path.address, keys: keys, sockets: path.sockets, options: options)
    }

    private static func path(
        of link: WebRTCLink,
        transport: WebRTCTransport,
        audio: Bool
    ) throws -> (address: DestinationAddress, sockets: DestinationSockets) {
        guard let selected = link.socket else { return try relayedPath(of: link, transport: transport, audio: audio) }
        return directPath(
            socket: UDPSocket(borrowing: selected.fd),
            remote: UDPAddress(storage: selected.remoteAddress, length: selected.remoteAddressLength),
            inbox: transport.inbox,
            owner: selected,
            audio: audio
        )
    }

    /// A pair with a socket of its own: plain `sendto` and segmented sends to `remote`.
    private static func directPath(
        socket: UDPSocket,
        remote: UDPAddress,
        inbox: DatagramInbox,
        owner: AnyObject?,
        audio: Bool
    ) -> (address: DestinationAddress, sockets: DestinationSockets) {
        let sockets = DestinationSockets(webRTC: socket, inbox: inbox, relay: nil, owner: owner)
        return (DestinationAddress(bundled: remote, audio: audio), sockets)
    }

    /// A relayed pair: libnice must wrap every datagram for the TURN server.
    private static func relayedPath(
        of link: WebRTCLink,
        transport: WebRTCTransport,
        audio: Bool
    ) throws -> (address: DestinationAddress, sockets: DestinationSockets) {
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
