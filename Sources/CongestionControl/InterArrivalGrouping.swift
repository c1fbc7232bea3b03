/// Splits the received packets into send-time groups and yields, for each pair of consecutive
/// complete groups, how far apart they were sent and how far apart they arrived
/// (draft-ietf-rmcat-gcc-02 §5.2, with libwebrtc's burst rule from
/// `goog_cc/inter_arrival_delta.cc`).
///
/// §5.2: a video frame is usually sent as a burst of packets, and what the path does to the
/// frame is visible only once all of it arrived, so delays are measured between groups, not
/// packets. A group is the packets sent within `groupLength` (5 ms, the draft's burst_time) of
/// its first packet. The group's send time is its last packet's send time, its arrival time its
/// last packet's arrival (libwebrtc's "complete time"), its size the sum of its packets.
///
/// The burst rule (§5.2's second paragraph, as libwebrtc writes it): a packet also joins the
/// current group, however late it was sent, when it was sent at the same instant as the group's
/// last packet, or when it arrived no more than `burstDeltaThreshold` (5 ms) after the group's
/// last packet *and* the inter-group delay variation is negative (it arrived sooner after the
/// previous packet than it was sent after it: a queue in front of it just released a burst),
/// as long as the group has not spanned `maximumBurstDuration` (100 ms) of arrivals.
///
/// Defences, all libwebrtc's: a packet sent before the current group's first packet (reordered
/// on the way or in the feedback) is ignored; a group that completes before the previous one
/// (negative arrival delta) yields nothing, and `reorderedResetThreshold` of those in a row
/// reset the grouping; so does an arrival-time delta that exceeds the delta of the sender's
/// clock at feedback time by `arrivalOffsetThreshold` (3 s: the receiver's clock jumped).
struct InterArrivalGrouping: Sendable, Hashable {
    struct Configuration: Sendable, Hashable {
        /// Packets sent within this of a group's first packet belong to it, µs (draft §5.2
        /// burst_time = 5 ms; libwebrtc kTimestampGroupLengthMs = 5).
        var groupLengthUs: Int64
        /// A burst's packets arrive at most this far apart, µs (libwebrtc kBurstDeltaThreshold).
        var burstDeltaThresholdUs: Int64
        /// A burst spans at most this much arrival time, µs (libwebrtc kMaxBurstDuration).
        var maximumBurstDurationUs: Int64
        /// An arrival delta this much larger than the sender's feedback-time delta means the
        /// receiver's clock jumped, µs (libwebrtc kArrivalTimeOffsetThreshold = 3 s).
        var arrivalOffsetThresholdUs: Int64
        /// This many reordered groups in a row reset the grouping (libwebrtc
        /// kReorderedResetThreshold).
        var reorderedResetThreshold: Int

        init(
            groupLengthUs: Int64 = 5_000,
            burstDeltaThresholdUs: Int64 = 5_000,
            maximumBurstDurationUs: Int64 = 100_000,
            arrivalOffsetThresholdUs: Int64 = 3_000_000,
            reorderedResetThreshold: Int = 3
        ) {
            self.groupLengthUs = groupLengthUs
            self.burstDeltaThresholdUs = burstDeltaThresholdUs
            self.maximumBurstDurationUs = maximumBurstDurationUs
            self.arrivalOffsetThresholdUs = arrivalOffsetThresholdUs
            self.reorderedResetThreshold = reorderedResetThreshold
        }

        func validate() throws(CongestionControlError) {
            guard groupLengthUs >= 0, burstDeltaThresholdUs >= 0, maximumBurstDurationUs > 0,
                arrivalOffsetThresholdUs > 0, reorderedResetThreshold > 0
            else {
                throw CongestionControlError.invalid(
                    "grouping needs group length ≥ 0, burst delta ≥ 0, burst duration, offset threshold and "
                        + "reorder count > 0; got \(groupLengthUs), \(burstDeltaThresholdUs), "
                        + "\(maximumBurstDurationUs), \(arrivalOffsetThresholdUs) µs, \(reorderedResetThreshold)"
                )
            }
        }
    }

    /// What one complete group says against the one before it.
    struct Delta: Sendable, Hashable {
        /// Send time of the group minus that of the previous group, µs (draft §5.1 T(i) − T(i−1)).
        var sendDeltaUs: Int64
        /// Arrival time of the group minus that of the previous group, µs (t(i) − t(i−1)).
        var arrivalDeltaUs: Int64
        /// Bytes in the group minus bytes in the previous group.
        var sizeDelta: Int
        /// Arrival time of the packet that closed the group (the first of the next one), µs:
        /// the time axis of the trendline, as libwebrtc's delay-based estimator uses it.
        var arrivalTimeUs: Int64

        init(sendDeltaUs: Int64, arrivalDeltaUs: Int64, sizeDelta: Int, arrivalTimeUs: Int64) {
            self.sendDeltaUs = sendDeltaUs
            self.arrivalDeltaUs = arrivalDeltaUs
            self.sizeDelta = sizeDelta
            self.arrivalTimeUs = arrivalTimeUs
        }

        /// The inter-group delay variation d(i) = t(i) − t(i−1) − (T(i) − T(i−1)), µs (§5.1).
        var delayVariationUs: Int64 { arrivalDeltaUs - sendDeltaUs }
    }

    private struct Group: Sendable, Hashable {
        var firstSendUs: Int64 = 0
        var lastSendUs: Int64 = 0
        var firstArrivalUs: Int64 = 0
        var completeArrivalUs: Int64 = 0
        var size = 0
        var lastSystemUs: Int64 = 0
        var isEmpty = true
    }

    let configuration: Configuration
    private var current = Group()
    private var previous = Group()
    private var consecutiveReordered = 0

    init(configuration: Configuration = Configuration()) throws(CongestionControlError) {
        try configuration.validate()
        self.configuration = configuration
    }

    /// Adds a packet the feedback reports received (a lost one has no arrival and is skipped).
    /// `nowUs` is the sender's clock when the feedback arrived. Returns the deltas when this
    /// packet opened a new group and so completed one that has a predecessor.
    mutating func add(_ packet: PacketResult, at nowUs: Int64) -> Delta? {
        guard let arrival = packet.arrivalTimeUs else { return nil }
        return add(sendTimeUs: packet.sendTimeUs, arrivalTimeUs: arrival, size: packet.size, at: nowUs)
    }

    /// Adds one received packet by its times (sender's clock, receiver's clock, µs) and size.
    mutating func add(sendTimeUs: Int64, arrivalTimeUs: Int64, size: Int, at nowUs: Int64) -> Delta? {
        var delta: Delta?
        if current.isEmpty {
            current.firstSendUs = sendTimeUs
            current.lastSendUs = sendTimeUs
            current.firstArrivalUs = arrivalTimeUs
            current.isEmpty = false
        } else if sendTimeUs < current.firstSendUs {
            return nil  // Sent before the group began: reordered, and its group is gone.
        } else if startsNewGroup(sendTimeUs: sendTimeUs, arrivalTimeUs: arrivalTimeUs) {
            if !previous.isEmpty {
                let arrivalDelta = current.completeArrivalUs - previous.completeArrivalUs
                let systemDelta = current.lastSystemUs - previous.lastSystemUs
                if arrivalDelta - systemDelta >= configuration.arrivalOffsetThresholdUs {
                    reset()
                    return nil
                }
                if arrivalDelta < 0 {
                    consecutiveReordered += 1
                    if consecutiveReordered >= configuration.reorderedResetThreshold { reset() }
                    return nil
                }
                consecutiveReordered = 0
                delta = Delta(
                    sendDeltaUs: current.lastSendUs - previous.lastSendUs,
                    arrivalDeltaUs: arrivalDelta,
                    sizeDelta: current.size - previous.size,
                    arrivalTimeUs: arrivalTimeUs
                )
            }
            previous = current
            current = Group(
                firstSendUs: sendTimeUs,
                lastSendUs: sendTimeUs,
                firstArrivalUs: arrivalTimeUs,
                isEmpty: false
            )
        } else {
            current.lastSendUs = max(current.lastSendUs, sendTimeUs)
        }
        current.size += size
        current.completeArrivalUs = arrivalTimeUs
        current.lastSystemUs = nowUs
        return delta
    }

    /// Forgets every group, as after a stream timeout.
    mutating func reset() {
        current = Group()
        previous = Group()
        consecutiveReordered = 0
    }

    private func startsNewGroup(sendTimeUs: Int64, arrivalTimeUs: Int64) -> Bool {
        if belongsToBurst(sendTimeUs: sendTimeUs, arrivalTimeUs: arrivalTimeUs) { return false }
        return sendTimeUs - current.firstSendUs > configuration.groupLengthUs
    }

    private func belongsToBurst(sendTimeUs: Int64, arrivalTimeUs: Int64) -> Bool {
        let arrivalDelta = arrivalTimeUs - current.completeArrivalUs
        let sendDelta = sendTimeUs - current.lastSendUs
        if sendDelta == 0 { return true }
        let propagationDelta = arrivalDelta - sendDelta
        return propagationDelta < 0 && arrivalDelta <= configuration.burstDeltaThresholdUs
            && arrivalTimeUs - current.firstArrivalUs < configuration.maximumBurstDurationUs
    }
}
