import Media
import ProcessSupport
import SDP
import SendEngine

/// What the async side (room presence, status line, signal handlers), the media thread and the
/// sender thread share: the sender (destinations come and go while media flows), the queue of
/// encoded media between the two threads, the counters, the encoder requests that feedback
/// makes (key frame, bitrate) and the stop flag. Everything else on the media path belongs to
/// one thread alone.
public final class MediaControl: Sendable {
    public let sender: Locked<MediaSender>
    /// Encoded media from the media thread to the sender thread.
    public let outbox = SendQueue()
    public let statistics = Locked(MediaStatistics())
    /// The H.264 encoder's key-frame and bitrate requests.
    public let requests: EncoderRequests
    private let stopRequested = Locked(false)
    /// Whether the cadence holds a still picture (Docs/cadence.md), as the media thread last said,
    /// and how many times that changed.
    private let still = Locked(Stillness(isStill: false, changes: 0))
    /// Each change of `isStill`, for whoever tells the room (`stream-state`). Only the newest is
    /// kept: a reader that fell behind wants the state now, not the flicker before it.
    public let stillChanges: AsyncStream<Bool>
    private let stillSink: AsyncStream<Bool>.Continuation
    /// Viewers on another codec, one group per codec, made on the first such viewer and kept
    /// (an idle group holds a sender and nothing else).
    private let codecGroups = Locked<[CodecGroup]>([])
    /// Key frames asked for on the lower simulcast layers, bit i for layer i
    /// (`FeedbackActions.keyFrameLayers`; layer 0's go through `requests`).
    private let layerKeyFrames = Locked<UInt32>(0)

    public init(sender: MediaSender) {
        self.sender = Locked(sender)
        requests = EncoderRequests(sender: self.sender)
        (stillChanges, stillSink) = AsyncStream.makeStream(of: Bool.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// The media thread's word on the cadence: true while still, false while changing or
    /// converging. A change wakes `stillChanges`' reader; the media thread never waits for it
    /// (a short lock, and a yield into a one-slot buffer).
    func cadenceIsStill(_ value: Bool) {
        let changed = still.withLock { current -> Bool in
            guard current.isStill != value else { return false }
            current = Stillness(isStill: value, changes: current.changes &+ 1)
            return true
        }
        if changed { stillSink.yield(value) }
    }

    /// Receivers lost the pictures of these layers (bit i for layer i): the media thread takes
    /// them before its next picture. Layer 0's bit goes to `requests`.
    func requestKeyFrames(layers: UInt32) {
        if layers & 1 != 0 { requests.requestKeyFrame() }
        let lower = layers & ~1
        if lower != 0 { layerKeyFrames.withLock { $0 |= lower } }
    }

    /// Reads and clears the lower layers' key-frame requests.
    func takeLayerKeyFrameRequests() -> UInt32 {
        layerKeyFrames.withLock { requested in
            defer { requested = 0 }
            return requested
        }
    }

    /// The group for `codec`, made with `makeSender` if there is none yet.
    public func group(for codec: VideoCodec, makeSender: () throws -> MediaSender) rethrows -> CodecGroup {
        try codecGroups.withLock { groups in
            if let group = groups.first(where: { $0.codec == codec }) { return group }
            let group = CodecGroup(codec: codec, sender: try makeSender())
            groups.append(group)
            return group
        }
    }

    /// The groups made so far, copied into `list` (its capacity kept: no allocation once grown).
    func groups(into list: inout [CodecGroup]) {
        list.removeAll(keepingCapacity: true)
        codecGroups.withLock { list.append(contentsOf: $0) }
    }

    /// Runs `body` on the groups under their list's lock (no copy).
    func withGroups<Result>(_ body: ([CodecGroup]) throws -> Result) rethrows -> Result {
        try codecGroups.withLock { try body($0) }
    }

    /// The groups made so far.
    public var groups: [CodecGroup] { codecGroups.withLock { $0 } }

    /// Whether the picture is still now.
    public var isStill: Bool { still.withLock { $0.isStill } }

    /// Whether the picture is still now, and how many changes led there: a reader that waited
    /// can tell a picture that stayed still from one that moved and stopped again meanwhile.
    public var stillness: Stillness { still.withLock { $0 } }

    /// The next frame is encoded as an IDR (`EncoderRequests.requestKeyFrame`).
    public func requestKeyFrame() { requests.requestKeyFrame() }

    /// A key-frame request from the room, through the sender's limiter; true when the next frame
    /// will be an IDR (`EncoderRequests.requestKeyFrameThroughLimiter`).
    @discardableResult
    public func requestKeyFrameThroughLimiter() -> Bool { requests.requestKeyFrameThroughLimiter() }

    func takeKeyFrameRequest() -> Bool { requests.takeKeyFrameRequest() }
    func requestBitrate(kbps: Int) { requests.requestBitrate(kbps: kbps) }
    func takeBitrateRequest() -> Int? { requests.takeBitrateRequest() }

    public func stop() { stopRequested.withLock { $0 = true } }
    public var isStopped: Bool { stopRequested.withLock { $0 } }

    /// The counters with what the sender knows filled in (packets, destinations).
    public func snapshot() -> MediaStatistics {
        let (packets, destinations, feedback, departed, keyFrameRequests) = sender.withLock { sender in
            (
                sender.packetsSent, sender.destinations.count,
                Dictionary(sender.destinations.map { ($0.id, $0.feedbackStatistics) }, uniquingKeysWith: { a, _ in a }),
                Dictionary(sender.departed.map { ($0.id, $0.statistics) }, uniquingKeysWith: { _, b in b }),
                sender.keyFrameRequestStatistics
            )
        }
        var (allPackets, allDestinations, allFeedback, allDeparted) = (packets, destinations, feedback, departed)
        for group in groups {
            group.sender.withLock { sender in
                allPackets += sender.packetsSent
                allDestinations += sender.destinations.count
                for destination in sender.destinations { allFeedback[destination.id] = destination.feedbackStatistics }
                for entry in sender.departed { allDeparted[entry.id] = entry.statistics }
            }
        }
        let depth = outbox.depth
        return statistics.withLock {
            $0.sendQueueDepth = depth.now
            $0.sendQueueDeepest = depth.deepest
            $0.packetsSent = allPackets
            $0.destinations = allDestinations
            $0.feedback = allFeedback
            $0.departedFeedback = allDeparted
            $0.keyFrameRequests = keyFrameRequests
            return $0
        }
    }
}

/// The cadence's stillness as the media thread last said it (`MediaControl.stillness`).
public struct Stillness: Sendable, Equatable {
    public var isStill: Bool
    /// Changes between still and not so far.
    public var changes: Int
}
