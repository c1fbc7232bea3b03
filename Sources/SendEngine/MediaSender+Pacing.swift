import CongestionControl
import Media
import RTP

/// The paced send path (Docs/congestion.md): a picture's packets wait in each destination's
/// pacer as handles (their RTP sequence numbers; the bytes stay in the video history) and leave
/// at a multiple of that destination's rate in bursts of a few milliseconds, each burst one
/// segmented send as before; retransmissions jump the queue; probes are RTX copies of recent
/// packets queued as padding while the pacer runs at the probe's rate.
extension MediaSender {
    /// Queues a freshly cut video packet on every paced destination.
    func enqueuePaced(_ buffer: RTPPacketBuffer, at nowUs: Int64) {
        let sequenceNumber = buffer.withUnsafeBytes { UInt16($0[2]) << 8 | UInt16($0[3]) }
        for destination in destinations where destination.congestion.pacer != nil {
            if destination.congestion.pacer?.enqueue(
                handle: Int(sequenceNumber),
                size: buffer.count,
                kind: .video,
                at: nowUs
            ) == false {
                destination.congestion.statistics.pacerDropped += 1
            }
        }
    }

    /// Sends what every paced destination's budget allows at `now` (monotonic ns).
    public func sendPaced(now: UInt64) {
        let nowUs = Int64(now / 1000)
        for destination in destinations where destination.congestion.pacer != nil {
            sendPaced(destination, at: nowUs)
        }
    }

    private func sendPaced(_ destination: Destination, at nowUs: Int64) {
        let congestion = destination.congestion
        let headerLength = video.headerLength
        pacedBurst.removeAll()
        func flush() {
            guard pacedBurst.count > 0 else { return }
            destination.send(
                burst: pacedBurst,
                headerLength: headerLength,
                to: destination.address.videoRTP,
                through: destination.sockets.rtpSink,
                scratch: burstScratch
            )
            packetsSent += pacedBurst.count
            pacedBurst.removeAll()
        }
        while let (handle, kind) = congestion.pacer?.next(at: nowUs) {
            let sequenceNumber = UInt16(truncatingIfNeeded: handle)
            switch kind {
            case .video:
                let stored = videoHistory.withPacket(sequenceNumber) { pacedBurst.append(bytes: $0) } ?? false
                if !stored { congestion.statistics.pacerDropped += 1 }
                if pacedBurst.isFull { flush() }
            case .retransmission, .padding:
                // Order on the wire follows the pacer's: what was gathered goes first.
                flush()
                if destination.retransmit(
                    sequenceNumber,
                    from: videoHistory,
                    rtx: (videoRTXSSRC, configuration.feedback.rtxPayloadType)
                ) {
                    packetsSent += 1
                }
            case .audio:
                break
            }
        }
        flush()
        if congestion.activeProbe != nil, congestion.pacer?.queued(.padding) == 0 {
            congestion.endProbe(at: nowUs)
            applyPacingRate(to: destination)
        }
    }

    /// The earliest instant (monotonic ns) a paced destination may send again, nil when no
    /// pacer holds anything.
    public var nextPacedDeadline: UInt64? {
        let nowUs = Int64(MonotonicClock.now() / 1000)
        var earliest: Int64?
        for destination in destinations {
            guard let next = destination.congestion.pacer?.nextSendTime(at: nowUs) else { continue }
            earliest = min(earliest ?? next, next)
        }
        return earliest.map { UInt64(max(0, $0)) * 1000 }
    }

    /// Whether any pacer holds packets (the media thread then wakes the sender thread).
    public var hasPacedBacklog: Bool {
        destinations.contains { ($0.congestion.pacer?.queuedPackets ?? 0) > 0 }
    }

    /// A NACKed packet of `size` bytes as resent: into the pacer ahead of video when paced,
    /// else out at once.
    func queueRetransmission(_ sequenceNumber: UInt16, size: Int, to destination: Destination, at now: UInt64) {
        if destination.congestion.pacer != nil {
            let queued =
                destination.congestion.pacer?.enqueue(
                    handle: Int(sequenceNumber),
                    size: size,
                    kind: .retransmission,
                    at: Int64(now / 1000)
                ) ?? false
            if !queued { destination.congestion.statistics.pacerDropped += 1 }
            return
        }
        _ = destination.retransmit(
            sequenceNumber,
            from: videoHistory,
            rtx: (videoRTXSSRC, configuration.feedback.rtxPayloadType)
        )
    }

    /// The pacer runs at the pacing factor × the larger of this destination's allowed rate and
    /// the encoder's target (a receiver below the encoder's rate, an outlier the policy left
    /// behind, must still drain what the encoder makes), or at the probe's rate while a probe is
    /// sent (`probeIfDue`). While the path's queue stands or is being drained (a standing queue
    /// found, `DelayBasedEstimator.drainCap`), and until the pacer's own backlog from then has
    /// left (`DestinationCongestion.pacesAtAllowedRate`), it runs at the allowed rate itself: the
    /// link is full, so what the pacer holds back would only wait in the bottleneck's queue
    /// instead, where audio and retransmissions can no longer overtake it. Once no queue stands,
    /// the backlog leaves on top of that within a second (`DestinationCongestion.pacingRate`).
    /// The burst allowance
    /// applies only while the path has room (`DestinationCongestion.allowsBursts`).
    func applyPacingRate(to destination: Destination) {
        let congestion = destination.congestion
        guard congestion.activeProbe == nil else { return }
        congestion.pacer?.burstAllowed = congestion.allowsBursts
        // An outlier's link cannot carry the encoder's rate at all: pacing it at its own rate
        // would only grow its backlog to the queue-age limit.
        if congestion.pacesAtAllowedRate, isFollowed(destination), let allowed = destination.allowedBitrate {
            let rate = congestion.pacingRate(allowed: allowed)
            congestion.pacer?.setPacingRate(rate)
        } else {
            congestion.pacer?.setTargetRate(max(destination.allowedBitrate ?? 0, targetBitrate))
        }
    }

    /// Starts a probe for `destination` when its controller wants one: RTX copies of the newest
    /// video packets, queued as padding, sent at the probe's rate (Docs/congestion.md).
    func probeIfDue(_ destination: Destination, at now: UInt64) {
        let congestion = destination.congestion
        guard configuration.congestion.probing, congestion.mayProbe, congestion.activeProbe == nil,
            destination.options.retransmission == .rtx, congestion.pacer != nil,
            let probe = congestion.probes.probe(
                at: Int64(now / 1000),
                estimate: destination.bitrateTarget,
                base: congestion.probeBase(destination.bitrateTarget)
            )
        else { return }
        let bytes = Int(Int64(probe.rate) * configuration.congestion.probeDurationUs / 8_000_000)
        var queued = (packets: 0, bytes: 0)
        var sequenceNumber = video.nextSequenceNumber &- 1
        let nowUs = Int64(now / 1000)
        while queued.packets < configuration.congestion.probeMinimumPackets || queued.bytes < bytes {
            guard let size = videoHistory.withPacket(sequenceNumber, { $0.count }) else { break }
            // In place: a copy of the pacer would copy its rings.
            guard congestion.pacer?.enqueue(handle: Int(sequenceNumber), size: size, kind: .padding, at: nowUs) == true
            else { break }
            queued.packets += 1
            queued.bytes += size
            sequenceNumber &-= 1
        }
        guard queued.packets > 0 else { return }
        congestion.pacer?.setPacingRate(probe.rate)
        congestion.beginProbe(id: probe.id, packets: queued.packets, bytes: queued.bytes)
    }

    /// What `destination` lets the encoder make, bits per second: the video share of its
    /// allowed rate, less its pacer's backlog spread over `CongestionConfiguration.backlogPushbackUs`
    /// while that pacer sends at the allowed rate (after a capacity drop; libwebrtc's congestion
    /// window pushback lowers the encoder's target for the same reason): a link that is full
    /// carries the backlog only in place of new pictures. At least a quarter of the share.
    func vote(of destination: Destination, allowed: Int) -> Int {
        let share = configuration.congestion.videoTarget(forWireRate: allowed)
        let window = configuration.congestion.backlogPushbackUs
        guard destination.congestion.pacesAtAllowedRate, window > 0 else { return share }
        let pushback = Int(Int64(destination.congestion.pacedBacklogBytes) * 8_000_000 / window)
        return max(share - pushback, share / 4)
    }

    /// Whether the encoder follows this receiver: it has not reported yet, or its vote is not
    /// below the weakest vote the policy kept (it is no outlier).
    func isFollowed(_ destination: Destination) -> Bool {
        guard let allowed = destination.allowedBitrate, let weakest = weakestFollowedVote else { return true }
        return vote(of: destination, allowed: allowed) >= weakest
    }

    /// Whether the next picture should not be encoded: the pacer of a receiver the encoder
    /// follows holds more video and retransmissions than leave in
    /// `CongestionConfiguration.maximumPacedBacklogUs` at its rate. libwebrtc drops frames while
    /// its congestion window is full for the same reason: after the capacity fell, what the
    /// encoder made at the old rate waits in the pacer, and a new picture would only wait
    /// behind it, adding its delay to every later one.
    public func pacedBacklogHoldsVideo() -> Bool {
        let limit = configuration.congestion.maximumPacedBacklogUs
        guard limit > 0 else { return false }
        for destination in destinations {
            guard let pacer = destination.congestion.pacer, destination.congestion.activeProbe == nil else { continue }
            let bytes = destination.congestion.pacedBacklogBytes
            guard bytes > 0 else { continue }
            let drainUs = Int64(bytes) * 8_000_000 / Int64(pacer.pacingRate)
            if drainUs > limit, isFollowed(destination) { return true }
        }
        return false
    }
}
