import ArgumentParser

#if canImport(Glibc)
    import Glibc
#endif

/// The receiving end of the many-subscriber benchmark: binds blocks of four loopback UDP ports
/// (video RTP/RTCP, audio RTP/RTCP, as rtc-publish's `--to` destinations use them) and drains
/// them with `poll` and non-blocking `recv` until each is empty, so a hundred receivers cost the
/// machine little (a few percent of a core at 35,000 datagrams a second) and every send of the
/// publisher lands. Counts datagrams, bytes and, per
/// block, video RTP packets with the marker bit (frames: RTP headers stay clear under SRTP,
/// RFC 3711 §3.1). Ends after `--seconds` or on SIGTERM/SIGINT and prints one JSON line.
struct Sink: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Drain blocks of 4 loopback UDP ports (benchmarks); print what arrived as JSON."
    )

    @Option(help: "First port of the first block (even).")
    var basePort: Int
    @Option(help: "Blocks of 4 ports: one per destination.")
    var blocks: Int
    @Option(help: "Stop after this many seconds at most.")
    var seconds: Double = 60

    mutating func run() throws {
        guard basePort > 0, basePort % 2 == 0, blocks >= 1, blocks <= 1000, basePort + 4 * blocks <= 65_536 else {
            throw usageError(
                "--base-port \(basePort) --blocks \(blocks): need an even port and 1…1000 blocks below 65536"
            )
        }
        guard seconds > 0, seconds <= 3600 else { throw usageError("--seconds \(seconds) must be within 0…3600") }
        var sockets: [Int32] = []
        defer { for socket in sockets { close(socket) } }
        for index in 0..<(4 * blocks) { sockets.append(try Self.bindLoopback(port: basePort + index)) }
        var polled = sockets.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        Self.stopOnSignals()
        // The benchmark script starts the publisher once the ports are bound.
        var standardError = StandardError()
        print("rtc-encode sink: ready on 127.0.0.1:\(basePort)…\(basePort + 4 * blocks - 1)", to: &standardError)

        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 16)
        defer { buffer.deallocate() }
        var datagrams = 0
        var bytes = 0
        var frames = [Int](repeating: 0, count: blocks)
        let end = Self.now() + seconds
        while !Self.stopRequested, Self.now() < end {
            guard poll(&polled, nfds_t(polled.count), 100) > 0 else { continue }
            for index in polled.indices where polled[index].revents != 0 {
                while true {
                    let length = recv(sockets[index], buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT))
                    guard length > 0 else { break }
                    datagrams += 1
                    bytes += length
                    // Video RTP (the block's first port): byte 1's top bit is the marker.
                    if index % 4 == 0, length >= 12, (buffer[1] & 0x80) != 0 { frames[index / 4] += 1 }
                }
            }
        }
        let fewest = frames.min() ?? 0
        let most = frames.max() ?? 0
        print(
            "{\"blocks\":\(blocks),\"datagrams\":\(datagrams),\"bytes\":\(bytes),\"framesFewest\":\(fewest),\"framesMost\":\(most)}"
        )
    }

    private static func bindLoopback(port: Int) throws -> Int32 {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard socket >= 0 else { throw usageError("socket failed: errno \(errno)") }
        // A deep receive buffer: an IDR to a hundred receivers arrives in one burst.
        var size: Int32 = 4 << 20
        _ = setsockopt(socket, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else {
            let code = errno
            close(socket)
            throw usageError("cannot bind 127.0.0.1:\(port): errno \(code)")
        }
        return socket
    }

    private static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    nonisolated(unsafe) private static var stopRequested = false

    private static func stopOnSignals() {
        signal(SIGTERM) { _ in Sink.stopRequested = true }
        signal(SIGINT) { _ in Sink.stopRequested = true }
    }
}
