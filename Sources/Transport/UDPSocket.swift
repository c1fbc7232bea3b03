#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A UDP socket for media: RTP and RTCP datagrams sent from caller-owned buffers.
///
/// Media does not go through SwiftNIO (which signaling uses): NIO wraps every datagram in a
/// freshly allocated envelope and `ByteBuffer`, and the media path must not allocate per packet.
/// Here a packet goes from the buffer SRTP protected it in straight to `sendto` (or a burst of them
/// to one segmented `sendmsg`, see `send(_:segmentSize:to:)`):
/// zero copies in user space, zero allocations. Sends never block: a full socket buffer drops
/// the datagram (counted) rather than stalling the encoder, as a real-time sender must.
public final class UDPSocket: @unchecked Sendable {
    /// The file descriptor; closed in `deinit`. `@unchecked Sendable`: the kernel serialises
    /// concurrent sends, and the counters are only advisory.
    public let descriptor: Int32
    public let localAddress: UDPAddress
    /// Datagrams dropped because the socket buffer was full (EAGAIN) or the path refused them.
    public internal(set) var droppedSends = 0
    /// Sends that failed with `ECONNREFUSED` since `takeRefusals` (a queued ICMP error fails the
    /// next send once, with `reportUnreachable`).
    var refusedSends = 0
    /// Whether bursts go out as one segmented send (`send(_:segmentSize:to:)`); false when asked
    /// for, or once the kernel refused it for this socket.
    public internal(set) var usesSegmentationOffload: Bool
    /// False for a socket another library owns (`init(borrowing:)`): `deinit` leaves it open.
    private let ownsDescriptor: Bool

    /// Opens a non-blocking socket bound to `local` (port 0 picks a free one). A receiver that
    /// takes bursts (an IDR to many destinations) asks for a deeper `receiveBufferBytes` than the
    /// system's default. `segmentationOffload: false` sends bursts datagram by datagram.
    public init(
        bindingTo local: UDPAddress,
        sendBufferBytes: Int = 1 << 20,
        receiveBufferBytes: Int? = nil,
        segmentationOffload: Bool = true
    ) throws(TransportError) {
        let fd = socket(
            local.family,
            Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue),
            0
        )
        guard fd >= 0 else { throw TransportError.system(.socket, "socket") }
        var size = Int32(sendBufferBytes)
        _ = setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        if let receiveBufferBytes {
            var receiveSize = Int32(clamping: receiveBufferBytes)
            _ = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &receiveSize, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = local
        let status = withUnsafePointer(to: &address.storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, address.length) }
        }
        guard status == 0 else {
            let error = TransportError.system(.bind, "cannot bind UDP \(local)")
            close(fd)
            throw error
        }
        self.descriptor = fd
        self.usesSegmentationOffload = segmentationOffload
        self.localAddress = Self.boundAddress(of: fd)
        self.ownsDescriptor = true
    }

    /// Sends on a bound UDP socket another library owns and reads (libnice's selected ICE socket):
    /// never closed, read or reconfigured here. The owner must keep it open while this lives.
    public init(borrowing descriptor: Int32, segmentationOffload: Bool = true) {
        self.descriptor = descriptor
        self.usesSegmentationOffload = segmentationOffload
        self.localAddress = Self.boundAddress(of: descriptor)
        self.ownsDescriptor = false
    }

    /// The address `fd` is bound to (`getsockname`).
    private static func boundAddress(of fd: Int32) -> UDPAddress {
        var bound = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &bound) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return UDPAddress(storage: bound, length: length)
    }

    deinit { if ownsDescriptor { close(descriptor) } }

    /// Sends one datagram; returns false (and counts it) if the kernel would block or refused it.
    @discardableResult
    public func send(_ bytes: UnsafeRawBufferPointer, to destination: UDPAddress) -> Bool {
        var address = destination
        let sent = withUnsafePointer(to: &address.storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                sendto(descriptor, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL), $0, address.length)
            }
        }
        if sent != bytes.count {
            if sent < 0, errno == ECONNREFUSED { refusedSends += 1 }
            droppedSends += 1
            return false
        }
        return true
    }

    /// Receives one datagram if one is waiting (non-blocking); returns its length and sender.
    public func receive(into buffer: UnsafeMutableRawBufferPointer) -> (length: Int, from: UDPAddress)? {
        var from = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let got = withUnsafeMutablePointer(to: &from) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                recvfrom(descriptor, buffer.baseAddress, buffer.count, 0, $0, &length)
            }
        }
        guard got >= 0 else { return nil }
        return (got, UDPAddress(storage: from, length: length))
    }

    /// Waits up to `milliseconds` for a datagram to arrive; true if one is ready.
    public func waitReadable(milliseconds: Int32) -> Bool {
        var p = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&p, 1, milliseconds) > 0 && p.revents & Int16(POLLIN) != 0
    }
}
