import Foundation
import TestSupport
import Testing
import Transport

/// The relay itself: it forwards both ways, and its seeded decisions replay.
@Suite("Lossy UDP relay")
struct LossyUDPRelayTests {
    struct Outcome {
        var arrived: [UInt16]
        var counts: LossyUDPRelay.Counts
        var answered: Bool
    }

    /// Sends `count` numbered datagrams through a fresh relay, then one answer back the other
    /// way; returns what arrived (in arrival order), the forward counts, and whether the answer
    /// reached the sender.
    static func run(seed: UInt64, impairment: LossyUDPRelay.Impairment, count: Int = 300) throws -> Outcome {
        let receiver = try UDPSocket(bindingTo: UDPAddress(host: "127.0.0.1", port: 0))
        let sender = try UDPSocket(bindingTo: UDPAddress(host: "127.0.0.1", port: 0))
        let relay = try LossyUDPRelay(target: receiver.localAddress, forward: impairment, seed: seed, lifetime: 10)
        defer { relay.stop() }
        var arrived: [UInt16] = []
        var relayBack: UDPAddress?
        var buffer = [UInt8](repeating: 0, count: 16)
        func drain(waitMilliseconds: Int32) {
            while receiver.waitReadable(milliseconds: waitMilliseconds),
                let (length, from) = buffer.withUnsafeMutableBytes({ receiver.receive(into: $0) }), length == 2
            {
                relayBack = from
                arrived.append(UInt16(buffer[0]) << 8 | UInt16(buffer[1]))
            }
        }
        for number in 0..<count {
            let bytes = [UInt8(number >> 8), UInt8(number & 0xFF)]
            _ = bytes.withUnsafeBytes { sender.send($0, to: relay.frontAddress) }
            // Paced, so the relay reads one datagram at a time and its decisions follow send order.
            usleep(500)
            drain(waitMilliseconds: 0)
        }
        drain(waitMilliseconds: 200)
        var answered = false
        if let relayBack {
            _ = [UInt8(0xAB)].withUnsafeBytes { receiver.send($0, to: relayBack) }
            answered =
                sender.waitReadable(milliseconds: 1000)
                && buffer.withUnsafeMutableBytes { sender.receive(into: $0) }?.length == 1 && buffer[0] == 0xAB
        }
        return Outcome(arrived: arrived, counts: relay.forwardCounts, answered: answered)
    }

    @Test("drops, delays and reorders at its rates, counts it, answers back, and replays with the same seed")
    func impairments() throws {
        let impairment = LossyUDPRelay.Impairment(dropRate: 0.1, delayRate: 0.05, delay: 5...10, reorderRate: 0.05)
        let first = try Self.run(seed: 11, impairment: impairment)
        let second = try Self.run(seed: 11, impairment: impairment)
        #expect(first.counts.received == 300)
        #expect(first.counts.dropped + first.counts.forwarded == 300, "\(first.counts)")
        #expect(first.arrived.count == first.counts.forwarded)
        #expect(first.counts.dropped > 10 && first.counts.delayed > 3 && first.counts.reordered > 3, "\(first.counts)")
        #expect(first.arrived != first.arrived.sorted(), "delayed and swapped datagrams arrive out of order")
        #expect(first.answered, "the target's answer came back through the relay to the sender")
        #expect(Set(first.arrived) == Set(second.arrived), "the same seed drops the same datagrams")
        #expect(first.counts.dropped == second.counts.dropped && first.counts.delayed == second.counts.delayed)
    }
}
