import Foundation
import Media
import Testing

@testable import MediaPipeline

/// The queue between the media thread and the sender thread: order, copies, back-pressure and
/// the end of the stream.
@Suite("Send queue between the media and sender threads")
struct SendQueueTests {
    private func unit(_ marker: UInt8, time: UInt64) -> H264AccessUnit {
        H264AccessUnit(data: [0x65, marker], nalRanges: [0..<2], captureTime: time, isKeyFrame: true)
    }

    /// Takes everything queued now, as the sender thread would.
    private func drain(_ queue: SendQueue) -> [String] {
        var seen: [String] = []
        while queue.next(waitingUntil: 0) == .ready {
            queue.withFront { slot in
                if let video = slot.video {
                    seen.append("v\(video.data[1])@\(slot.receivedAt)")
                } else {
                    seen.append("a\(slot.audio.data)")
                }
            }
            queue.removeFront()
        }
        return seen
    }

    @Test func videoAndAudioComeOutInTheOrderTheyWentIn() {
        let queue = SendQueue(capacity: 4)
        #expect(queue.put(video: unit(1, time: 10), receivedAt: 11))
        #expect(queue.put(audio: OpusPacket(data: [7, 7], sampleCount: 960, captureTime: 12)))
        #expect(queue.put(video: unit(2, time: 20), receivedAt: 21))
        #expect(drain(queue) == ["v1@11", "a[7, 7]", "v2@21"])
        #expect(queue.depth.now == 0 && queue.depth.deepest == 3)
        // The ring wraps: more than its capacity in all, in order.
        for round in 0..<3 {
            for i in 0..<4 { queue.put(audio: OpusPacket(data: [UInt8(round * 4 + i)])) }
            #expect(drain(queue) == (0..<4).map { "a[\(round * 4 + $0)]" })
        }
    }

    @Test func anAudioSlotIsACopyThatKeepsItsCapacity() throws {
        let queue = SendQueue(capacity: 1)
        var packet = OpusPacket(data: [1, 2, 3], sampleCount: 960, captureTime: 5, isFirstAfterDTX: true)
        queue.put(audio: packet)
        // The media thread encodes the next packet into the same buffer at once.
        packet.data[0] = 99
        var capacityBefore = 0
        queue.withFront { slot in
            #expect(slot.audio.data == [1, 2, 3])
            #expect(slot.audio.sampleCount == 960 && slot.audio.captureTime == 5 && slot.audio.isFirstAfterDTX)
            capacityBefore = slot.audio.data.capacity
        }
        queue.removeFront()
        queue.put(audio: OpusPacket(data: [4]))
        queue.withFront { slot in
            #expect(slot.audio.data == [4] && !slot.audio.isFirstAfterDTX)
            #expect(slot.audio.data.capacity == capacityBefore, "the slot's bytes are reused, not reallocated")
            #expect(capacityBefore >= SendQueue.opusPacketBytes)
        }
    }

    /// Runs a put that may block on a thread of its own (the media thread's part), never on
    /// the test's cooperative pool; the result comes back through a semaphore.
    private final class Producer: @unchecked Sendable {
        private let done = DispatchSemaphore(value: 0)
        private var result: Bool?
        init(_ put: @escaping @Sendable () -> Bool) {
            Thread {
                self.result = put()
                self.done.signal()
            }.start()
        }
        /// What the put returned, or nil if it has not returned within `seconds`.
        func wait(seconds: Double) -> Bool? {
            done.wait(timeout: .now() + seconds) == .success ? result : nil
        }
    }

    @Test func aFullQueueHoldsTheProducerUntilTheConsumerTakesOne() {
        let queue = SendQueue(capacity: 2)
        queue.put(audio: OpusPacket(data: [1]))
        queue.put(audio: OpusPacket(data: [2]))
        let third = Producer { queue.put(audio: OpusPacket(data: [3])) }
        #expect(third.wait(seconds: 0.1) == nil, "the third put waits while the ring is full")
        #expect(queue.depth.now == 2)
        queue.withFront { #expect($0.audio.data == [1]) }
        queue.removeFront()
        #expect(third.wait(seconds: 10) == true)
        #expect(drain(queue) == ["a[2]", "a[3]"])
    }

    @Test func closingDrainsWhatIsQueuedThenFinishesAndRefusesMore() {
        let queue = SendQueue(capacity: 2)
        queue.put(video: unit(1, time: 1), receivedAt: 1)
        queue.put(video: unit(2, time: 2), receivedAt: 2)
        // A producer waiting on a full ring when the sender stops returns false, at once.
        let blocked = Producer { queue.put(audio: OpusPacket(data: [3])) }
        #expect(blocked.wait(seconds: 0.05) == nil)
        queue.close()
        #expect(blocked.wait(seconds: 10) == false)
        #expect(queue.put(audio: OpusPacket(data: [4])) == false)
        #expect(drain(queue) == ["v1@1", "v2@2"])
        #expect(queue.next(waitingUntil: .max) == .finished)
    }

    @Test func anEmptyQueueTimesOutAtTheDeadline() {
        let queue = SendQueue(capacity: 2)
        let start = MonotonicClock.now()
        #expect(queue.next(waitingUntil: start + 20_000_000) == .timedOut)
        #expect(MonotonicClock.now() >= start + 20_000_000)
    }
}
