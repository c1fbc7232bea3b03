import Foundation
import Glibc
import Transport

/// A UDP relay on loopback that plays a bad network between a sender and a receiver, in both
/// directions, so RTCP feedback comes back through the same impaired path.
///
/// The sender sends to `frontAddress`; the relay forwards from its back socket to `target`.
/// Whatever `target` sends back to the back socket is forwarded from the front socket to the
/// address the sender last sent from (latched, as Janus does). Each direction drops, delays
/// and reorders at its own rates, decided by its own SplitMix64 stream from `seed`, so a
/// direction's decisions are a function of its packet order alone. It runs on its own thread
/// for at most `lifetime` seconds and counts what it did.
public final class LossyUDPRelay: @unchecked Sendable {
    public struct Impairment: Sendable, Equatable {
        /// Probability a datagram is dropped.
        public var dropRate: Double
        /// Probability a datagram is held back for `delay` milliseconds.
        public var delayRate: Double
        public var delay: ClosedRange<Int>
        /// Probability a datagram is held until the next one of its direction has gone (swap).
        public var reorderRate: Double
        /// A datagram identical to one this direction dropped (a same-SSRC retransmission under
        /// SRTP is byte-identical to the packet it repairs) always goes through: the loss hits
        /// first transmissions only, so whether a repair arrives does not hang on the peer's
        /// retry timers.
        public var sparesRepeats: Bool

        public init(
            dropRate: Double = 0,
            delayRate: Double = 0,
            delay: ClosedRange<Int> = 5...20,
            reorderRate: Double = 0,
            sparesRepeats: Bool = false
        ) {
            self.dropRate = dropRate
            self.delayRate = delayRate
            self.delay = delay
            self.reorderRate = reorderRate
            self.sparesRepeats = sparesRepeats
        }

        public static let none = Impairment()
    }

    public struct Counts: Sendable, Equatable, CustomStringConvertible {
        public var received = 0
        public var forwarded = 0
        public var dropped = 0
        public var delayed = 0
        public var reordered = 0
        /// Back-direction datagrams that came before the sender had sent anything.
        public var unroutable = 0

        public var description: String {
            "received \(received) forwarded \(forwarded) dropped \(dropped) delayed \(delayed) reordered \(reordered)"
        }
    }

    public let frontAddress: UDPAddress
    public let target: UDPAddress
    private let front: UDPSocket
    private let back: UDPSocket
    private let state: NSLock = NSLock()
    private var counts: [Counts] = [Counts(), Counts()]
    private var impairments: [Impairment]
    private var stopRequested = false
    private let finished = DispatchSemaphore(value: 0)

    /// Starts relaying at once. `frontPort` 0 picks a free port.
    public init(
        target: UDPAddress,
        forward: Impairment,
        backward: Impairment = .none,
        seed: UInt64,
        lifetime: Double = 30,
        frontPort: Int = 0
    ) throws {
        self.target = target
        front = try UDPSocket(bindingTo: UDPAddress(host: "127.0.0.1", port: frontPort))
        back = try UDPSocket(bindingTo: UDPAddress(host: "127.0.0.1", port: 0))
        frontAddress = front.localAddress
        impairments = [forward, backward]
        let deadline = Date().addingTimeInterval(lifetime)
        let thread = Thread { [self] in
            run(seed: seed, deadline: deadline)
            finished.signal()
        }
        thread.name = "lossy relay"
        thread.start()
    }

    deinit { stop() }

    /// What the relay did sender → target, and target → sender.
    public var forwardCounts: Counts { locked { counts[0] } }
    public var backwardCounts: Counts { locked { counts[1] } }

    /// Changes the impairments from now on (e.g. lift the loss for a clean tail).
    public func setImpairments(forward: Impairment, backward: Impairment) {
        locked { impairments = [forward, backward] }
    }

    private func locked<R>(_ body: () -> R) -> R {
        state.lock()
        defer { state.unlock() }
        return body()
    }

    /// Stops the thread and waits for it (idempotent).
    public func stop() {
        let first = locked {
            defer { stopRequested = true }
            return !stopRequested
        }
        if first { finished.wait() }
    }

    private struct Held {
        var release: Date
        var direction: Int
        var bytes: [UInt8]
    }

    private func run(seed: UInt64, deadline: Date) {
        var generators = [SplitMix64(seed: seed), SplitMix64(seed: seed ^ 0xA5A5_5A5A_C3C3_3C3C)]
        var sender: UDPAddress?
        var timed: [Held] = []
        var swapped: [(bytes: [UInt8], since: Date)?] = [nil, nil]
        var droppedCopies: [Set<[UInt8]>] = [[], []]
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var descriptors = [
            pollfd(fd: front.descriptor, events: Int16(POLLIN), revents: 0),
            pollfd(fd: back.descriptor, events: Int16(POLLIN), revents: 0),
        ]
        func send(_ bytes: [UInt8], direction: Int) {
            let ok = bytes.withUnsafeBytes { raw -> Bool in
                if direction == 0 { return back.send(raw, to: target) }
                guard let sender else { return false }
                return front.send(raw, to: sender)
            }
            locked {
                if ok { counts[direction].forwarded += 1 } else { counts[direction].unroutable += 1 }
            }
        }
        while locked({ !stopRequested }), Date() < deadline {
            let now = Date()
            let due = timed.filter { $0.release <= now }
            timed.removeAll { $0.release <= now }
            for held in due { send(held.bytes, direction: held.direction) }
            // A packet held for a swap goes anyway when no successor came within 20 ms.
            for direction in 0..<2 {
                if let held = swapped[direction], now.timeIntervalSince(held.since) > 0.02 {
                    swapped[direction] = nil
                    send(held.bytes, direction: direction)
                }
            }
            _ = poll(&descriptors, 2, 2)
            for direction in 0..<2 {
                let socket = direction == 0 ? front : back
                while let (length, from) = buffer.withUnsafeMutableBytes({ socket.receive(into: $0) }) {
                    if direction == 0 { sender = from }
                    let bytes = Array(buffer[0..<length])
                    let impairment = locked {
                        counts[direction].received += 1
                        return impairments[direction]
                    }
                    let roll = generators[direction].unit()
                    if impairment.sparesRepeats, droppedCopies[direction].remove(bytes) != nil {
                        send(bytes, direction: direction)
                        continue
                    }
                    if roll < impairment.dropRate {
                        locked { counts[direction].dropped += 1 }
                        if impairment.sparesRepeats { droppedCopies[direction].insert(bytes) }
                        continue
                    }
                    if roll < impairment.dropRate + impairment.delayRate {
                        let span = impairment.delay.upperBound - impairment.delay.lowerBound
                        let milliseconds =
                            impairment.delay.lowerBound + Int(generators[direction].next() % UInt64(span + 1))
                        timed.append(
                            Held(
                                release: Date().addingTimeInterval(Double(milliseconds) / 1000),
                                direction: direction,
                                bytes: bytes
                            )
                        )
                        locked { counts[direction].delayed += 1 }
                        continue
                    }
                    if roll < impairment.dropRate + impairment.delayRate + impairment.reorderRate,
                        swapped[direction] == nil
                    {
                        swapped[direction] = (bytes, Date())
                        locked { counts[direction].reordered += 1 }
                        continue
                    }
                    send(bytes, direction: direction)
                    if let held = swapped[direction] {
                        swapped[direction] = nil
                        send(held.bytes, direction: direction)
                    }
                }
            }
        }
    }
}

/// SplitMix64: a tiny seeded generator, so an impaired run (or a random walk) replays.
public struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in [0, 1).
    public mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}
