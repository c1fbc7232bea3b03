import Transport

/// Where a destination's protected datagrams leave: the seam between the send engine and the
/// network, as Pion's interceptors sit between its RTP writer and its transport. A plain
/// receiver's sink is its UDP socket; a WebRTC viewer's the ICE pair's socket or, relayed,
/// the ICE agent's TURN path (`RelayDatagramSink`); a test's sink keeps what it was given in
/// memory. Called on the sender thread, per packet: an implementation must not block or
/// allocate.
public protocol DatagramSink: AnyObject {
    /// Sends one datagram to `target`; false when it was dropped.
    func send(_ datagram: UnsafeRawBufferPointer, to target: UDPAddress) -> Bool
    /// Sends `bytes` as consecutive datagrams of `segmentSize` bytes (the last may be shorter)
    /// to `target`; returns how many datagrams, and bytes, left.
    func send(_ bytes: UnsafeRawBufferPointer, segmentSize: Int, to target: UDPAddress) -> (datagrams: Int, bytes: Int)
}

extension UDPSocket: DatagramSink {}

/// A TURN-relayed path: each datagram goes to `relay` (the ICE agent wraps it in a Send
/// indication or ChannelData itself), so segments are handed over one by one. The target is
/// the agent's to know.
public final class RelayDatagramSink: DatagramSink {
    private let relay: @Sendable (UnsafeRawBufferPointer) -> Bool

    public init(_ relay: @escaping @Sendable (UnsafeRawBufferPointer) -> Bool) { self.relay = relay }

    public func send(_ datagram: UnsafeRawBufferPointer, to target: UDPAddress) -> Bool { relay(datagram) }

    public func send(
        _ bytes: UnsafeRawBufferPointer,
        segmentSize: Int,
        to target: UDPAddress
    ) -> (datagrams: Int, bytes: Int) {
        guard segmentSize > 0, let base = bytes.baseAddress else { return (0, 0) }
        var sent = (datagrams: 0, bytes: 0)
        var offset = 0
        while offset < bytes.count {
            let length = min(segmentSize, bytes.count - offset)
            if relay(UnsafeRawBufferPointer(start: base + offset, count: length)) {
                sent.datagrams += 1
                sent.bytes += length
            }
            offset += length
        }
        return sent
    }
}
