import Foundation
import TestSupport
import Testing
import Transport

/// `rtc-encode sink`, the receivers of `make bench`'s room row: it must count every datagram and,
/// per block, the video packets that end a frame, and say which port it could not bind.
@Suite struct BenchmarkSinkTests {
    /// An even port P with P…P+3 free on loopback (below the ephemeral range), released again.
    func freeBlockOfFour() throws -> Int {
        for _ in 0..<200 {
            let base = 20_000 + Int.random(in: 0..<5_000) * 2
            let held = (0..<4).compactMap { try? UDPSocket(bindingTo: UDPAddress(host: "127.0.0.1", port: base + $0)) }
            if held.count == 4 { return base }
        }
        throw InteropFailure("no free block of four loopback UDP ports")
    }

    /// An RTP header (RFC 3550 §5.1) with the marker bit as given, then `payload` bytes.
    func rtp(marker: Bool, sequence: UInt8, payload: Int) -> [UInt8] {
        [0x80, (marker ? 0x80 : 0) | 96, 0, sequence, 0, 0, 0, 1, 0, 0, 0, 2] + [UInt8](repeating: 7, count: payload)
    }

    @Test func countsDatagramsBytesAndVideoMarkersPerBlock() throws {
        let directory = try TemporaryDirectory()
        let base = try freeBlockOfFour()
        let sink = try BackgroundProcess(
            try builtProgram("rtc-encode"),
            ["sink", "--base-port", "\(base)", "--blocks", "1", "--seconds", "60"],
            directory: directory
        )
        try sink.waitUntil(deadlineSeconds: 20, "ready") { sink.output.contains("ready on 127.0.0.1:\(base)") }
        let sender = try UDPSocket(bindingTo: UDPAddress(host: "127.0.0.1", port: 0))
        let sent: [(port: Int, bytes: [UInt8])] = [
            (base, rtp(marker: false, sequence: 1, payload: 100)),
            (base, rtp(marker: true, sequence: 2, payload: 50)),
            (base, rtp(marker: true, sequence: 3, payload: 10)),
            (base + 1, [0x81, 200, 0, 1, 0, 0, 0, 1]),  // RTCP: counted, never a frame
            (base + 2, rtp(marker: true, sequence: 1, payload: 20)),  // audio: its marker is no frame
        ]
        for (port, bytes) in sent {
            let destination = try UDPAddress(host: "127.0.0.1", port: port)
            #expect(bytes.withUnsafeBytes { sender.send($0, to: destination) })
        }
        usleep(300_000)
        sink.interrupt()
        #expect(sink.waitForExit(deadlineSeconds: 20), "\(sink.output)")
        #expect(sink.exitStatus == 0, "\(sink.output)")
        let total = sent.reduce(0) { $0 + $1.bytes.count }
        #expect(
            sink.output.contains(
                "{\"blocks\":1,\"datagrams\":5,\"bytes\":\(total),\"framesFewest\":2,\"framesMost\":2}"
            ),
            "\(sink.output)"
        )
    }

    @Test func aTakenPortIsNamedAndExitsTwo() throws {
        let directory = try TemporaryDirectory()
        let base = try freeBlockOfFour()
        let taken = try UDPSocket(bindingTo: UDPAddress(host: "127.0.0.1", port: base + 2))
        let sink = try BackgroundProcess(
            try builtProgram("rtc-encode"),
            ["sink", "--base-port", "\(base)", "--blocks", "1", "--seconds", "5"],
            directory: directory
        )
        #expect(sink.waitForExit(deadlineSeconds: 20))
        #expect(sink.exitStatus == 2, "\(sink.output)")
        #expect(sink.output.contains("cannot bind UDP 127.0.0.1:\(base + 2)"), "\(sink.output)")
        withExtendedLifetime(taken) {}
    }
}
