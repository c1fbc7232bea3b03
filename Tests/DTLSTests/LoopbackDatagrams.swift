import DTLS
import Foundation
import Glibc

/// A UDP socket on 127.0.0.1 for the interop tests: blocking, with `poll` for a bounded wait.
/// Unchecked Sendable: a test makes it, then hands it to the one thread that drives it.
final class LoopbackDatagrams: @unchecked Sendable {
    let descriptor: Int32
    /// Where `send` goes: set by the caller, or learnt from the first datagram received.
    var peer: sockaddr_in?

    init() throws {
        descriptor = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard descriptor >= 0 else { throw OpenSSLTool.Failure("socket: errno \(errno)") }
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else {
            close(descriptor)
            throw OpenSSLTool.Failure("bind: errno \(errno)")
        }
    }

    deinit { close(descriptor) }

    var port: UInt16 {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        return UInt16(bigEndian: address.sin_port)
    }

    static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }

    /// A UDP port free on 127.0.0.1 right now, for a peer that binds its own.
    static func freePort() throws -> UInt16 { try LoopbackDatagrams().port }

    func send(_ datagrams: [[UInt8]]) throws {
        guard var address = peer else { throw OpenSSLTool.Failure("no peer to send to yet") }
        for datagram in datagrams {
            let sent = datagram.withUnsafeBytes { bytes in
                withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        sendto(
                            descriptor,
                            bytes.baseAddress,
                            bytes.count,
                            0,
                            $0,
                            socklen_t(MemoryLayout<sockaddr_in>.size)
                        )
                    }
                }
            }
            guard sent == datagram.count else { throw OpenSSLTool.Failure("sendto: errno \(errno)") }
        }
    }

    /// One datagram, waiting at most `timeout`; nil if none came. The first sender becomes `peer`.
    func receive(timeout: Duration) throws -> [UInt8]? {
        let milliseconds = Int32(
            clamping: max(
                1,
                timeout.components.seconds * 1_000 + timeout.components.attoseconds / 1_000_000_000_000_000
            )
        )
        var descriptor = pollfd(fd: self.descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, milliseconds) > 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var from = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let count = buffer.withUnsafeMutableBytes { bytes in
            withUnsafeMutablePointer(to: &from) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    recvfrom(self.descriptor, bytes.baseAddress, bytes.count, 0, $0, &length)
                }
            }
        }
        guard count >= 0 else { throw OpenSSLTool.Failure("recvfrom: errno \(errno)") }
        if peer == nil { peer = from }
        return Array(buffer.prefix(count))
    }
}

/// What a session driven over a socket ended with; Sendable, to come back from its thread.
struct DrivenSession: Sendable {
    let state: DTLSState
    let keys: DTLSSRTPKeys?
    let peerFingerprint: DTLSFingerprint?
}

/// Drives a session over `socket` until it is connected or failed or `seconds` pass: sends what
/// it returns, feeds it what arrives, handles its timers. Blocking: run it on a thread of its own.
func drive(
    _ session: DTLSSession,
    over socket: LoopbackDatagrams,
    first: DTLSOutput,
    seconds: Double
) throws
    -> DrivenSession
{
    if !first.datagrams.isEmpty { try socket.send(first.datagrams) }
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if case .connected = session.state { break }
        if case .failed = session.state { break }
        let wait = min(session.nextTimeout ?? .milliseconds(100), .milliseconds(100))
        if let datagram = try socket.receive(timeout: wait) {
            // A datagram the session refuses is dropped, as a real transport would.
            if let output = try? session.receive(datagram) { try socket.send(output.datagrams) }
        }
        let timers = session.handleTimeout()
        if !timers.datagrams.isEmpty { try socket.send(timers.datagrams) }
    }
    return DrivenSession(state: session.state, keys: session.srtpKeys, peerFingerprint: session.peerFingerprint)
}

/// Runs blocking `body` on a new thread, so the socket loop does not hold one of Swift's few
/// cooperative threads (two on this machine) and starve the other tests.
func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result(catching: body)) }.start()
    }
}

/// The bytes the exporter produced, put back together from the split: client key | server key |
/// client salt | server salt (RFC 5764 §4.2).
func exportedBytes(_ keys: DTLSSRTPKeys, role: DTLSRole) -> [UInt8] {
    let (client, server) = role == .client ? (keys.local, keys.remote) : (keys.remote, keys.local)
    return client.masterKey + server.masterKey + client.masterSalt + server.masterSalt
}
