import Foundation
import Glibc

/// A UDP socket on 127.0.0.1 for the interop tests; closed when released.
public final class LoopbackUDPSocket {
    public let descriptor: Int32

    public init() throws {
        descriptor = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard descriptor >= 0 else { throw SocketFailure(operation: "socket", code: errno) }
    }

    deinit { close(descriptor) }

    /// Binds 127.0.0.1:`port` (0 = any free port); false when the port is taken.
    public func bind(port: UInt16) -> Bool {
        var address = Self.loopback(port: port)
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    public var boundPort: UInt16 {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        return UInt16(bigEndian: address.sin_port)
    }

    public func send(_ bytes: UnsafeRawBufferPointer, to port: UInt16) throws {
        var address = Self.loopback(port: port)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                sendto(descriptor, bytes.baseAddress, bytes.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard sent == bytes.count else { throw SocketFailure(operation: "sendto", code: errno) }
    }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }

    /// Whether another process holds 127.0.0.1:`port` (ffmpeg binds without SO_REUSEADDR).
    public static func isTaken(port: UInt16) throws -> Bool {
        try !LoopbackUDPSocket().bind(port: port)
    }

    /// Bytes waiting in the receive queue of the IPv4 UDP socket bound to `port`, from the
    /// `rx_queue` column of /proc/net/udp; nil when no socket is bound there.
    public static func receiveQueueBytes(port: UInt16) throws -> Int? {
        let table = try String(contentsOfFile: "/proc/net/udp", encoding: .utf8)
        let wanted = String(port, radix: 16, uppercase: true)
        for line in table.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ")
            guard fields.count > 4, let local = fields[1].split(separator: ":").last,
                local.count == 4, Int(local, radix: 16) == Int(wanted, radix: 16),
                let queues = fields[4].split(separator: ":").last
            else { continue }
            return Int(queues, radix: 16)
        }
        return nil
    }

    /// `count` distinct even ports P whose P + 1 is free too (RTP and RTCP, as ffmpeg expects),
    /// held while searching so the pairs cannot overlap, then released for the receiver. They lie
    /// below the kernel's ephemeral range (32768–60999), so a socket another process binds to
    /// port 0 meanwhile (the publisher's own sockets) cannot take one before the receiver binds.
    public static func freePortPairs(_ count: Int) throws -> [UInt16] {
        var held: [LoopbackUDPSocket] = []
        var ports: [UInt16] = []
        var attempts = 0
        while ports.count < count {
            attempts += 1
            guard attempts < 1000 else { throw SocketFailure(operation: "find free port pair", code: 0) }
            let port = UInt16(20_000 + Int.random(in: 0..<6_000) * 2)
            guard !ports.contains(port) else { continue }
            let first = try LoopbackUDPSocket()
            guard first.bind(port: port) else { continue }
            let second = try LoopbackUDPSocket()
            guard second.bind(port: port + 1) else { continue }
            held += [first, second]
            ports.append(port)
        }
        return ports
    }
}

public struct SocketFailure: Error, CustomStringConvertible {
    let operation: String
    let code: Int32
    public var description: String { "\(operation) failed: errno \(code)" }
}
