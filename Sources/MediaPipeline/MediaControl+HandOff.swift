import Media
import SendEngine

/// How encoded media leaves the media thread: sent at once by the media thread itself when the
/// fan-out is narrow and nothing is queued, otherwise queued for the sender thread.
///
/// Why not always the queue: waking the sender thread costs more than the work it is woken for.
/// On the 2-core machine of Docs/benchmarks.md, one cross-thread wake-up (a byte down a pipe,
/// `poll` returning on the other core, 10 ms apart) was ~40 µs of CPU as the kernel accounts
/// it, while a P frame's 2–3 packets to one destination take ~6 µs to protect and send. With
/// every picture and every Opus packet handed over, the sender thread woke ~5 times a frame at
/// 30 fps, about 5 % of the paced publisher's CPU.
///
/// Why the queue stays: a wide room's IDR fan-out (100 subscribers × 87 packets) takes longer
/// than a frame period, and the encoder must not wait for it (`SendQueue`). So past
/// `inlineDestinationLimit` destinations, or while anything is queued (order within each stream
/// is kept: a slot counts until it has been sent), media goes through the queue as before.
extension MediaControl {
    /// The widest fan-out the media thread sends itself: an IDR to 4 destinations is ~350
    /// packets, well under a millisecond, far inside a frame period.
    static let inlineDestinationLimit = 4

    /// Sends `unit` to every destination now (true), or queues it for the sender thread
    /// (false). Called by the media thread only.
    func deliver(video unit: H264AccessUnit, receivedAt: UInt64) throws -> Bool {
        var paced = false
        if try sendInline({
            try $0.send(video: unit)
            paced = $0.hasPacedBacklog
        }) {
            // The rest of the picture waits in the pacers: the sender thread sends it on time.
            if paced { outbox.wake() }
            return true
        }
        outbox.put(video: unit, receivedAt: receivedAt)
        return false
    }

    /// Sends `packet` to every destination now, or queues a copy for the sender thread. The
    /// codec groups' viewers get it here, from their own senders (their own audio SSRC).
    func deliver(audio packet: OpusPacket) throws {
        try sendToGroups { sender in
            guard !sender.destinations.isEmpty else { return }
            try sender.send(audio: packet)
        }
        if try sendInline({ try $0.send(audio: packet) }) { return }
        outbox.put(audio: packet)
    }

    /// Runs `send` under each codec group's sender lock, on the media thread: a group's fan-out
    /// is sent here (its viewers are browsers without H.264, few in a room); its pacer's backlog
    /// and feedback are the sender thread's.
    func sendToGroups(_ send: (MediaSender) throws -> Void) throws {
        try withGroups { groups in
            for group in groups { try group.sender.withLock { try send($0) } }
        }
    }

    /// Runs `send` under the sender's lock when the queue is empty and the fan-out narrow.
    /// Only the media thread puts, so the queue cannot fill between the check and the send.
    private func sendInline(_ send: (MediaSender) throws -> Void) throws -> Bool {
        guard outbox.isEmpty else { return false }
        return try sender.withLock { sender in
            guard sender.destinations.count <= Self.inlineDestinationLimit else { return false }
            try send(sender)
            return true
        }
    }
}
