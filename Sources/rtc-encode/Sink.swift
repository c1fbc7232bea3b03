import ArgumentParser
import Transport

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
        var sockets: [UDPSocket] = []
        for index in 0..<(4 * blocks) { sockets.append(try Self.bindLoopback(port: basePort + index)) }
        var polled = sockets.map { pollfd(fd: $0.descriptor, events: Int16(POLLIN), revents: 0) }
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
                while let received = sockets[index].receive(into: buffer), received.length > 0 {
                    let length = received.length
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

    /// A deep receive buffer: an IDR to a hundred receivers arrives in one burst.
    private static func bindLoopback(port: Int) throws -> UDPSocket {
        do {
            return try UDPSocket(
                bindingTo: UDPAddress(host: "127.0.0.1", port: port),
                receiveBufferBytes: 4 << 20
            )
        } catch {
            throw usageError("\(error.message)")
        }
    }

    private static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    nonisolated(unsafe) private static var stopRequested = false

    /// The handlers only set a flag the receive loop checks every 100 ms. The two signals are
    /// unblocked too: a process inherits its parent's signal mask, and a parent that spawns from
    /// a thread blocking them (a Swift test runner's pool thread does) would leave the sink deaf.
    private static func stopOnSignals() {
        signal(SIGTERM) { _ in Sink.stopRequested = true }
        signal(SIGINT) { _ in Sink.stopRequested = true }
        var stopSignals = sigset_t()
        sigemptyset(&stopSignals)
        sigaddset(&stopSignals, SIGTERM)
        sigaddset(&stopSignals, SIGINT)
        pthread_sigmask(SIG_UNBLOCK, &stopSignals, nil)
    }
}
