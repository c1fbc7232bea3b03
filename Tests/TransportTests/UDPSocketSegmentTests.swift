import TestSupport
import Testing

@testable import Transport

#if canImport(Glibc)
    import Glibc
#endif

/// Bursts through `send(_:segmentSize:to:)`: the receiver must see exactly the datagrams, in the
/// order, that one `send` each would give, whether the kernel segments them or the socket falls
/// back to one call per datagram.
@Suite struct UDPSocketSegmentTests {
    /// Datagram sizes of one burst: `count` of `size` bytes, the last `last` bytes.
    static func burst(count: Int, size: Int, last: Int) -> (bytes: [UInt8], datagrams: [[UInt8]]) {
        var datagrams: [[UInt8]] = []
        for index in 0..<count {
            let length = index == count - 1 ? last : size
            // Each datagram's bytes name it and its position, so a reorder or a cut shows.
            datagrams.append((0..<length).map { UInt8(truncatingIfNeeded: index &* 31 &+ $0) })
        }
        return (datagrams.flatMap { $0 }, datagrams)
    }

    @Test(
        "a burst arrives as the same datagrams in order",
        arguments: [
            (87, 1_210, 1_209, true),  // a key frame: several segmented sends' worth, cut by the caller below
            (53, 1_210, 1_210, true),  // the most 1210-byte segments one send carries
            (5, 1_000, 999, true),
            (64, 100, 37, true),  // the segment-count limit
            (70, 100, 100, true),  // above it: one send per datagram
            (1, 500, 500, true),
            (5, 1_000, 999, false),  // offload switched off
        ]
    )
    func burstArrivesIntact(count: Int, size: Int, last: Int, offload: Bool) throws {
        let receiver = try UDPSocket(
            bindingTo: UDPAddress(host: "127.0.0.1", port: 0),
            receiveBufferBytes: 4 << 20
        )
        let sender = try UDPSocket(bindingTo: UDPAddress(host: "127.0.0.1", port: 0), segmentationOffload: offload)
        let (bytes, expected) = Self.burst(count: count, size: size, last: last)
        // The caller keeps one send within the byte limit; a key frame is cut into such pieces.
        var offset = 0
        var sent = (datagrams: 0, bytes: 0)
        let perSend = max(1, UDPSocket.maximumSegmentedBytes / size)
        while offset < bytes.count {
            let length = min(perSend * size, bytes.count - offset)
            let result = bytes.withUnsafeBytes {
                sender.send(
                    UnsafeRawBufferPointer(rebasing: $0[offset..<offset + length]),
                    segmentSize: size,
                    to: receiver.localAddress
                )
            }
            sent.datagrams += result.datagrams
            sent.bytes += result.bytes
            offset += length
        }
        #expect(sent.datagrams == count && sent.bytes == bytes.count)
        #expect(receiver.receiveAll(bufferSize: 70_000) == expected)
        #expect(sender.usesSegmentationOffload == offload)
        #expect(sender.droppedSends == 0)
    }

    /// IPv6 has no 65,535-byte IP header limit to mind, but the same segment rules: a key
    /// frame's worth over ::1 arrives as the same datagrams in order.
    @Test func aBurstOverIPv6ArrivesIntact() throws {
        let receiver = try UDPSocket(bindingTo: UDPAddress(host: "::1", port: 0), receiveBufferBytes: 4 << 20)
        let sender = try UDPSocket(bindingTo: UDPAddress(host: "::1", port: 0))
        let (bytes, expected) = Self.burst(count: 40, size: 1_210, last: 1_209)
        let result = bytes.withUnsafeBytes { sender.send($0, segmentSize: 1_210, to: receiver.localAddress) }
        #expect(result.datagrams == 40 && result.bytes == bytes.count)
        #expect(sender.usesSegmentationOffload)
        #expect(receiver.receiveAll(bufferSize: 70_000) == expected)
    }

    /// A socket that sends without UDP checksums (SO_NO_CHECK) cannot segment: the kernel answers
    /// EINVAL (udp_send_skb). The burst still arrives whole, and the socket stops asking.
    @Test func aKernelRefusalFallsBackToOneSendPerDatagram() throws {
        let receiver = try UDPSocket(bindingTo: UDPAddress(host: "127.0.0.1", port: 0))
        let sender = try UDPSocket(bindingTo: UDPAddress(host: "127.0.0.1", port: 0))
        var on: Int32 = 1
        let noCheck: Int32 = 11  // SO_NO_CHECK, <asm-generic/socket.h>
        #expect(setsockopt(sender.descriptor, SOL_SOCKET, noCheck, &on, socklen_t(MemoryLayout<Int32>.size)) == 0)
        let (bytes, expected) = Self.burst(count: 6, size: 1_210, last: 1_200)
        let result = bytes.withUnsafeBytes { sender.send($0, segmentSize: 1_210, to: receiver.localAddress) }
        #expect(result.datagrams == 6 && result.bytes == bytes.count)
        #expect(!sender.usesSegmentationOffload)
        #expect(receiver.receiveAll(bufferSize: 70_000) == expected)
    }

    @Test func nothingToSendSendsNothing() throws {
        let receiver = try UDPSocket(bindingTo: UDPAddress(host: "127.0.0.1", port: 0))
        let sender = try UDPSocket(bindingTo: UDPAddress(host: "127.0.0.1", port: 0))
        let empty: [UInt8] = []
        #expect(empty.withUnsafeBytes { sender.send($0, segmentSize: 100, to: receiver.localAddress) } == (0, 0))
        #expect(
            [UInt8](repeating: 1, count: 10).withUnsafeBytes {
                sender.send($0, segmentSize: 0, to: receiver.localAddress)
            } == (0, 0)
        )
        #expect(receiver.receiveAll(bufferSize: 70_000).isEmpty)
    }
}
