import Foundation
import Media
import Testing
import Transport

@testable import MediaPipeline

/// The sender thread sleeps in one `poll` on the send queue's wake-up pipe and the receivers'
/// sockets: a put, a datagram and a close must each end that sleep long before its deadline.
@Suite("Send queue wake-ups")
struct SendQueueWakeupTests {
    /// Runs the consumer's wait on a thread of its own (it blocks), never on the test's pool.
    private final class Consumer: @unchecked Sendable {
        private let done = DispatchSemaphore(value: 0)
        private var result: (SendQueue.Next, [pollfd])?
        init(_ queue: SendQueue, watching: [pollfd]) {
            Thread {
                var watched = watching
                // Far off: only a wake-up can end the wait within the test's patience.
                let next = queue.next(waitingUntil: MonotonicClock.now() + 60_000_000_000, watching: &watched)
                self.result = (next, watched)
                self.done.signal()
            }.start()
        }
        /// What the wait returned, or nil if it has not returned within `seconds`.
        func wait(seconds: Double) -> (SendQueue.Next, [pollfd])? {
            done.wait(timeout: .now() + seconds) == .success ? result : nil
        }
    }

    @Test func aPutWakesAConsumerAsleepInPoll() {
        let queue = SendQueue(capacity: 2)
        let consumer = Consumer(queue, watching: [])
        #expect(consumer.wait(seconds: 0.05) == nil, "nothing queued: the consumer sleeps")
        queue.put(audio: OpusPacket(data: [1]))
        #expect(consumer.wait(seconds: 10)?.0 == .ready)
    }

    @Test func aDatagramOnAWatchedSocketWakesTheConsumer() throws {
        let queue = SendQueue(capacity: 2)
        let feedback = try UDPSocket(bindingTo: UDPAddress(host: "127.0.0.1", port: 0))
        let receiver = try UDPSocket(bindingTo: UDPAddress(host: "127.0.0.1", port: 0))
        let watched = [pollfd(fd: feedback.descriptor, events: Int16(POLLIN), revents: 0)]
        let consumer = Consumer(queue, watching: watched)
        #expect(consumer.wait(seconds: 0.05) == nil)
        let sent = [UInt8](repeating: 0x80, count: 8).withUnsafeBytes { receiver.send($0, to: feedback.localAddress) }
        #expect(sent)
        let result = consumer.wait(seconds: 10)
        #expect(result?.0 == .feedback)
        #expect((result?.1.first?.revents ?? 0) & Int16(POLLIN) != 0, "the readable socket is marked")
        #expect(queue.depth.now == 0)
    }

    @Test func aQueuedSlotIsReadyWithoutLookingAtTheSockets() throws {
        let queue = SendQueue(capacity: 2)
        queue.put(audio: OpusPacket(data: [1]))
        let feedback = try UDPSocket(bindingTo: UDPAddress(host: "127.0.0.1", port: 0))
        var watched = [pollfd(fd: feedback.descriptor, events: Int16(POLLIN), revents: 7)]
        #expect(queue.next(waitingUntil: .max, watching: &watched) == .ready)
        #expect(watched[0].revents == 0, "stale readiness is cleared")
    }

    @Test func closingWakesAConsumerAsleepInPoll() {
        let queue = SendQueue(capacity: 2)
        let consumer = Consumer(queue, watching: [])
        #expect(consumer.wait(seconds: 0.05) == nil)
        queue.close()
        #expect(consumer.wait(seconds: 10)?.0 == .finished)
    }
}
