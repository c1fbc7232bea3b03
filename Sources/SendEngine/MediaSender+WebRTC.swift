import SRTP
import Transport

extension MediaSender {
    /// Adds a destination without sockets of its own: a WebRTC viewer's ICE pair (its socket
    /// borrowed from libnice, kept open by `owner`), its TURN relay (`RelayDatagramSink`), or
    /// memory in a test. `keys` protect what we send, `feedbackKeys` verify the receiver's
    /// SRTCP, packets go to `remote` through `sink` (one bundled, rtcp-muxed 5-tuple) and
    /// feedback arrives in `inbox`. The same copy → protect → burst path as every destination.
    @discardableResult
    public func addDestination(
        id: String,
        keys: SRTPKeyMaterial,
        feedbackKeys: SRTPKeyMaterial,
        sink: any DatagramSink,
        remote: UDPAddress,
        inbox: DatagramInbox,
        owner: AnyObject?,
        audio: Bool,
        options: DestinationOptions
    ) throws -> Destination {
        var options = options
        options.feedbackKeys = feedbackKeys
        return try addDestination(
            id: id,
            address: DestinationAddress(bundled: remote, audio: audio),
            keys: keys,
            sockets: DestinationSockets(sink: sink, inbox: inbox, owner: owner),
            options: options
        )
    }

    /// A WebRTC viewer on a direct (not relayed) path, sent on `socket`. Public so the packet
    /// benchmarks measure a WebRTC viewer's cost without an ICE and DTLS handshake.
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
        try addDestination(
            id: id,
            keys: keys,
            feedbackKeys: feedbackKeys,
            sink: socket,
            remote: remote,
            inbox: inbox,
            owner: owner,
            audio: audio,
            options: options
        )
    }

    /// The path changed (ICE switched pairs): `id`'s packets go through `sink` to `remote` from
    /// the next one on, in the same SRTP session, so indexes and rollover counters run on.
    /// False if `id` is unknown.
    @discardableResult
    public func replacePath(
        id: String,
        sink: any DatagramSink,
        remote: UDPAddress,
        inbox: DatagramInbox,
        owner: AnyObject?
    ) -> Bool {
        guard let destination = destination(id: id) else { return false }
        destination.address = DestinationAddress(bundled: remote, audio: destination.address.audioRTP != nil)
        destination.sockets = DestinationSockets(sink: sink, inbox: inbox, owner: owner)
        return true
    }
}
