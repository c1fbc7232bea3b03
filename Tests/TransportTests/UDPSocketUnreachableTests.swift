import Testing

@testable import Transport

#if canImport(Glibc)
    import Glibc
#endif

/// ICMP port unreachable on loopback (Docs/cadence.md, "Receivers that cannot ask"): real
/// sockets, the kernel's own answers.
@Suite struct UDPSocketUnreachableTests {
    /// A free loopback port: bound, read, closed again.
    static func closedPort(ipv6: Bool = false) throws -> UDPAddress {
        let host = ipv6 ? "::1" : "127.0.0.1"
        let probe = try UDPSocket(bindingTo: UDPAddress(host: host, port: 0))
        return try UDPAddress(host: host, port: probe.localAddress.port)
    }

    /// Sends `count` datagrams to `target`, then waits for the kernel's answers.
    static func send(_ count: Int, from socket: UDPSocket, to target: UDPAddress) {
        let payload: [UInt8] = [0x80, 0x60, 0, 1]
        for _ in 0..<count { _ = payload.withUnsafeBytes { socket.send($0, to: target) } }
        usleep(50_000)
    }

    @Test("a port nobody listens on refuses every datagram; once bound, none", arguments: [false, true])
    func refusalsStopWhenAReceiverBinds(ipv6: Bool) throws {
        let host = ipv6 ? "::1" : "127.0.0.1"
        let sender = try UDPSocket(bindingTo: UDPAddress(host: host, port: 0))
        #expect(sender.reportUnreachable())
        let target = try Self.closedPort(ipv6: ipv6)
        Self.send(3, from: sender, to: target)
        #expect(sender.takeRefusals() == 3)
        // The queue is empty now.
        #expect(sender.takeRefusals() == 0)
        let receiver = try UDPSocket(bindingTo: target)
        Self.send(3, from: sender, to: target)
        #expect(sender.takeRefusals() == 0)
        #expect(receiver.waitReadable(milliseconds: 1000))
        // Without the option the kernel reports nothing on a socket that is not connected.
        let silent = try UDPSocket(bindingTo: UDPAddress(host: host, port: 0))
        let closed = try Self.closedPort(ipv6: ipv6)
        Self.send(2, from: silent, to: closed)
        #expect(silent.takeRefusals() == 0)
    }

    @Test("control messages: the first IP_RECVERR's errno; other or short messages give 0")
    func parsesControlMessages() {
        func message(level: Int32, type: Int32, errno: UInt32) -> [UInt8] {
            var bytes = [UInt8](repeating: 0, count: 32)
            bytes.withUnsafeMutableBytes {
                $0.storeBytes(of: 32, toByteOffset: 0, as: Int.self)
                $0.storeBytes(of: level, toByteOffset: 8, as: Int32.self)
                $0.storeBytes(of: type, toByteOffset: 12, as: Int32.self)
                $0.storeBytes(of: errno, toByteOffset: 16, as: UInt32.self)
            }
            return bytes
        }
        let refused = message(level: Int32(IPPROTO_IP), type: Int32(IP_RECVERR), errno: UInt32(ECONNREFUSED))
        let other = message(level: Int32(SOL_SOCKET), type: 1, errno: 7)
        let v6 = message(level: Int32(IPPROTO_IPV6), type: Int32(IPV6_RECVERR), errno: UInt32(EHOSTUNREACH))
        #expect(refused.withUnsafeBytes { UDPSocket.extendedErrno(in: $0, length: 32) } == ECONNREFUSED)
        #expect((other + v6).withUnsafeBytes { UDPSocket.extendedErrno(in: $0, length: 64) } == EHOSTUNREACH)
        #expect(other.withUnsafeBytes { UDPSocket.extendedErrno(in: $0, length: 32) } == 0)
        #expect(refused.withUnsafeBytes { UDPSocket.extendedErrno(in: $0, length: 19) } == 0)
        // A length under the header's ends the walk instead of looping.
        var broken = other
        broken.withUnsafeMutableBytes { $0.storeBytes(of: 0, toByteOffset: 0, as: Int.self) }
        #expect((broken + refused).withUnsafeBytes { UDPSocket.extendedErrno(in: $0, length: 64) } == 0)
    }
}
