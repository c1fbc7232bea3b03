import NIOCore
import Synchronization

/// The bounded queue between the server's sessions and the host's single consumer.
///
/// Media never waits for the consumer: a video frame arriving while `videoLimit` frames are
/// queued pushes the oldest queued frame out (the consumer always gets the newest picture), and
/// audio beyond `audioLimit` chunks pushes out the oldest chunk; both are counted. Other events
/// (connected, paused, ended, …) are never dropped: their producer waits for room instead, which
/// stops that session reading until the consumer catches up. Memory is therefore bounded by the
/// limits times the largest message the parser accepts.
final class IngestEventQueue: Sendable {
    struct Limits: Sendable {
        var video: Int
        var audio: Int
        var other: Int
    }

    private struct State {
        var events = CircularBuffer<IngestEvent>()
        var queuedVideo = 0
        var queuedAudio = 0
        var queuedOther = 0
        var consumer: CheckedContinuation<IngestEvent?, Never>?
        var producers: [CheckedContinuation<Void, Never>] = []
        /// Producers no longer wait for room (the server is shutting down).
        var closing = false
        /// No more events; the consumer gets nil once the queue is empty.
        var finished = false
        var statistics = IngestStatistics()
    }

    let limits: Limits
    private let state = Mutex(State())

    init(limits: Limits) {
        self.limits = limits
    }

    /// The queue's counters (drops and depths) merged into `statistics`.
    func addCounters(to statistics: inout IngestStatistics) {
        let own = state.withLock { $0.statistics }
        statistics.videoFramesDropped = own.videoFramesDropped
        statistics.audioChunksDropped = own.audioChunksDropped
        statistics.queuedVideoFrames = own.queuedVideoFrames
        statistics.queuedAudioChunks = own.queuedAudioChunks
        statistics.peakQueuedVideoFrames = own.peakQueuedVideoFrames
        statistics.peakQueuedAudioChunks = own.peakQueuedAudioChunks
    }

    func pushVideo(_ event: IngestVideoEvent) {
        pushMedia(.video(event))
    }

    func pushAudio(_ event: IngestAudioEvent) {
        pushMedia(.audio(event))
    }

    private func pushMedia(_ event: IngestEvent) {
        let waiting: CheckedContinuation<IngestEvent?, Never>? = state.withLock { state in
            guard !state.finished else { return nil }
            if let consumer = state.consumer {
                state.consumer = nil
                return consumer
            }
            let isVideo: Bool
            if case .video = event { isVideo = true } else { isVideo = false }
            if isVideo, state.queuedVideo >= limits.video {
                Self.removeOldest(video: true, from: &state)
                state.statistics.videoFramesDropped += 1
            } else if !isVideo, state.queuedAudio >= limits.audio {
                Self.removeOldest(video: false, from: &state)
                state.statistics.audioChunksDropped += 1
            }
            state.events.append(event)
            if isVideo { state.queuedVideo += 1 } else { state.queuedAudio += 1 }
            Self.updateDepths(&state)
            return nil
        }
        waiting?.resume(returning: event)
    }

    private static func removeOldest(video: Bool, from state: inout State) {
        guard
            let index = state.events.firstIndex(where: { event in
                switch event {
                case .video: video
                case .audio: !video
                default: false
                }
            })
        else { return }
        state.events.remove(at: index)
        if video { state.queuedVideo -= 1 } else { state.queuedAudio -= 1 }
    }

    private static func updateDepths(_ state: inout State) {
        state.statistics.queuedVideoFrames = state.queuedVideo
        state.statistics.queuedAudioChunks = state.queuedAudio
        state.statistics.peakQueuedVideoFrames = max(state.statistics.peakQueuedVideoFrames, state.queuedVideo)
        state.statistics.peakQueuedAudioChunks = max(state.statistics.peakQueuedAudioChunks, state.queuedAudio)
    }

    /// Queues a non-media event, waiting while `limits.other` of them are already queued.
    func push(_ event: IngestEvent) async {
        while true {
            enum Outcome {
                case delivered(CheckedContinuation<IngestEvent?, Never>?)
                case full
            }
            let outcome: Outcome = state.withLock { state in
                if state.finished { return .delivered(nil) }
                if let consumer = state.consumer {
                    state.consumer = nil
                    return .delivered(consumer)
                }
                guard state.queuedOther < limits.other || state.closing else { return .full }
                state.events.append(event)
                state.queuedOther += 1
                return .delivered(nil)
            }
            switch outcome {
            case .delivered(let consumer):
                consumer?.resume(returning: event)
                return
            case .full:
                await withCheckedContinuation { (producer: CheckedContinuation<Void, Never>) in
                    let mustWait = state.withLock { state in
                        guard state.queuedOther >= limits.other, !state.closing, !state.finished else { return false }
                        state.producers.append(producer)
                        return true
                    }
                    if !mustWait { producer.resume() }
                }
            }
        }
    }

    /// The next event, waiting for one; nil once the queue is finished and empty, or when the
    /// calling task is cancelled. One consumer at a time: a second concurrent caller gets nil.
    func next() async -> IngestEvent? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (consumer: CheckedContinuation<IngestEvent?, Never>) in
                enum Outcome {
                    case event(IngestEvent?, CheckedContinuation<Void, Never>?)
                    case wait
                }
                let outcome: Outcome = state.withLock { state in
                    if let event = state.events.popFirst() {
                        var producer: CheckedContinuation<Void, Never>?
                        switch event {
                        case .video: state.queuedVideo -= 1
                        case .audio: state.queuedAudio -= 1
                        default:
                            state.queuedOther -= 1
                            if !state.producers.isEmpty { producer = state.producers.removeFirst() }
                        }
                        Self.updateDepths(&state)
                        return .event(event, producer)
                    }
                    if state.finished || state.consumer != nil || Task.isCancelled { return .event(nil, nil) }
                    state.consumer = consumer
                    return .wait
                }
                if case .event(let event, let producer) = outcome {
                    producer?.resume()
                    consumer.resume(returning: event)
                }
            }
        } onCancel: {
            let consumer = state.withLock { state in
                defer { state.consumer = nil }
                return state.consumer
            }
            consumer?.resume(returning: nil)
        }
    }

    /// Producers stop waiting for room from now on (the sessions are being ended).
    func close() {
        let producers = state.withLock { state in
            state.closing = true
            defer { state.producers = [] }
            return state.producers
        }
        for producer in producers { producer.resume() }
    }

    /// No more events: the consumer drains what is queued, then gets nil.
    func finish() {
        let (consumer, producers) = state.withLock { state in
            state.finished = true
            state.closing = true
            defer {
                state.consumer = nil
                state.producers = []
            }
            return (state.consumer, state.producers)
        }
        consumer?.resume(returning: nil)
        for producer in producers { producer.resume() }
    }
}
