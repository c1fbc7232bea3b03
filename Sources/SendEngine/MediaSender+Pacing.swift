import CongestionControl
import Media
import RTP

/// The paced send path (Docs/congestion.md): a picture's packets wait in each destination's
/// pacer as handles (their RTP sequence numbers; the bytes stay in the video history) and leave
/// at a multiple of that destination's rate in bursts of a few milliseconds, each burst one
/// segmented send as before; retransmissions jump the queue; probes are RTX copies of recent
/// packets queued as padding while the pacer runs at the probe's rate.
extension MediaSender {
    /// Queues a freshly cut video packet of `layer` on every paced destination that takes it.
    func enqueuePaced(_ buffer: RTPPacketBuffer, layer: VideoLayer, at now: UInt64) {
        let sequenceNumber = buffer.withUnsafeBytes { UInt16($0[2]) << 8 | UInt16($0[3]) }
        let handle = layer.handle(sequenceNumber)
        for destination in destinations where destination.congestion.isPaced && destination.forwards(layer.index) {
            // A viewer of one layer: its number is fixed now, in the order packets are cut.
            let number = destination.selection?.forward(layer: layer.index, sequenceNumber: sequenceNumber)
            let queued = destination.congestion.enqueue(
                handle: number.map { layer.handle(sequenceNumber, renumberedAs: $0) } ?? handle,
                size: buffer.count,
                kind: .video,
                at: now
            )
            if !queued { destination.congestion.countPacerDrop() }
        }
    }

    /// Sends what every paced destination's budget allows at `now` (monotonic ns).
    public func sendPaced(now: UInt64) {
        for destination in destinations where destination.congestion.isPaced {
            sendPaced(destination, at: now)
        }
    }

    private func sendPaced(_ destination: Destination, at now: UInt64) {
        let congestion = destination.congestion
        // A burst holds one layer's packets (its sender report counts them).
        var burstLayer = 0
        pacedBurst.removeAll()
        func flush() {
            guard pacedBurst.count > 0 else { return }
            destination.send(
                burst: pacedBurst,
                layer: burstLayer,
                renumbering: false,
                headerLength: layers[burstLayer].stream.headerLength,
                to: destination.address.videoRTP,
                through: destination.sockets.rtpSink,
                scratch: burstScratch
            )
            packetsSent += pacedBurst.count
            pacedBurst.removeAll()
        }
        while let (handle, kind) = congestion.nextPacket(at: now) {
            let (index, sequenceNumber, renumbered) = VideoLayer.split(handle: handle)
            guard layers.indices.contains(index) else { continue }
            let layer = layers[index]
            switch kind {
            case .video:
                if index != burstLayer {
                    flush()
                    burstLayer = index
                }
                let stored = layer.history.withPacket(sequenceNumber) { pacedBurst.append(bytes: $0) } ?? false
                if !stored { congestion.countPacerDrop() }
                if stored, let renumbered, let selection = destination.selection {
                    pacedBurst.withLast { selection.stamp($0, number: renumbered) }
                    destination.selection?.delivered(renumbered)
                }
                if pacedBurst.isFull { flush() }
            case .retransmission, .padding:
                // Order on the wire follows the pacer's: what was gathered goes first.
                flush()
                // A viewer of one layer knows layer 0's RTX stream alone.
                let rtxSSRC = renumbered == nil ? layer.rtxSSRC : layers[0].rtxSSRC
                if destination.retransmit(
                    sequenceNumber,
                    from: layer.history,
                    rtx: (rtxSSRC, configuration.feedback.rtxPayloadType),
                    renumbered: renumbered
                ) {
                    packetsSent += 1
                    if kind == .retransmission { destination.countRepair(layer: index) }
                }
            case .audio:
                break
            }
        }
        flush()
        if congestion.endProbeIfSent(at: now) {
            applyPacingRate(to: destination)
            sendProbeReport(to: destination, at: now)
        }
    }

    /// The padding of a layer probe has left: a sender report right behind it, whose round trip
    /// the receiver's next report gives (`LayerProbe`).
    private func sendProbeReport(to destination: Destination, at now: UInt64) {
        guard case .sending = destination.layerProbe?.state else { return }
        // A viewer of one layer knows layer 0's SSRC alone.
        let builder = destination.videoReports[0]
        sendReport(builder, to: destination, rtcp: destination.address.videoRTCP, now: now)
        destination.layerProbe?.sentReport(builder.ntpClock.timestamp(atMonotonic: now).middle32, at: now)
    }

    /// The earliest instant (monotonic ns) a paced destination may send again, nil when no
    /// pacer holds anything.
    public var nextPacedDeadline: UInt64? {
        let now = MonotonicClock.now()
        var earliest: UInt64?
        for destination in destinations {
            guard let next = destination.congestion.nextSendTime(at: now) else { continue }
            earliest = min(earliest ?? next, next)
        }
        return earliest
    }

    /// Whether any pacer holds packets (the media thread then wakes the sender thread).
    public var hasPacedBacklog: Bool {
        destinations.contains { $0.congestion.hasQueuedPackets }
    }

    /// A NACKed packet of `size` bytes as resent: into the pacer ahead of video when paced,
    /// else out at once.
    func queueRetransmission(
        _ sequenceNumber: UInt16,
        of layer: VideoLayer,
        size: Int,
        to destination: Destination,
        at now: UInt64,
        renumbered: UInt16? = nil
    ) {
        if destination.congestion.isPaced {
            let queued = destination.congestion.enqueue(
                handle: renumbered.map { layer.handle(sequenceNumber, renumberedAs: $0) }
                    ?? layer.handle(sequenceNumber),
                size: size,
                kind: .retransmission,
                at: now
            )
            if !queued { destination.congestion.countPacerDrop() }
            return
        }
        if destination.retransmit(
            sequenceNumber,
            from: layer.history,
            rtx: (renumbered == nil ? layer.rtxSSRC : layers[0].rtxSSRC, configuration.feedback.rtxPayloadType),
            renumbered: renumbered
        ) {
            destination.countRepair(layer: layer.index)
        }
    }

    /// The pacer's rate for this destination and the encoder's target, at its allowed rate
    /// itself while its path's queue stands if the encoder follows it
    /// (`SendSideBandwidthEstimator.updatePacingRate`).
    func applyPacingRate(to destination: Destination) {
        let layered = destination.selection.map { ($0.pending ?? $0.current ?? 0) > 0 } ?? false
        destination.congestion.updatePacingRate(
            encoderTarget: encoderRate(for: destination),
            followed: isFollowed(destination),
            shownRate: layered ? destination.shownRate : nil
        )
    }

    /// What the encoders make for `destination`, bits per second: layer 0's target, or with
    /// simulcast the layers it gets (a viewer of a lower layer, that layer's rate; an SFU, the
    /// layers it keeps). A viewer of a lower layer that reports only loss is paced at no more
    /// than its path has shown it carries (`Destination.layerBudget`): its loss-based estimate
    /// grows unchecked, and a key frame paced at a multiple of it overflows a slow link's queue.
    func encoderRate(for destination: Destination) -> Int {
        guard let needs = configuration.simulcast?.needs, needs.count == layers.count, needs.count > 1 else {
            return targetBitrate
        }
        if let selection = destination.selection, let layer = selection.pending ?? selection.current, layer > 0 {
            return needs[layer]
        }
        if destination.dropPolicy != nil {
            let lower = needs[max(1, destination.keptFrom)...].reduce(0, +)
            return (destination.keptFrom == 0 ? targetBitrate : 0) + lower
        }
        return targetBitrate
    }

    /// Starts a probe for `destination` when its controller wants one: RTX copies of the newest
    /// video packets, queued as padding, sent at the probe's rate (Docs/congestion.md).
    func probeIfDue(_ destination: Destination, at now: UInt64) {
        let congestion = destination.congestion
        guard destination.options.retransmission == .rtx, let probe = congestion.dueProbe(at: now) else { return }
        let bytes = Int(Int64(probe.rate) * configuration.congestion.probeDurationUs / 8_000_000)
        let queued = queuePadding(bytes: bytes, to: destination, repeating: false, at: now)
        guard queued.packets > 0 else { return }
        congestion.beginProbe(id: probe.id, rate: probe.rate, packets: queued.packets, bytes: queued.bytes)
    }

    /// Starts a probe of a loss-only viewer's path before a move up (`LayerProbe`): padding on
    /// top of its video to the probe's rate for `LayerProbe.duration`, sent at that rate; its
    /// sender report follows the padding (`sendPaced`). Ends one overdue.
    func probeLayerIfDue(_ destination: Destination, at now: UInt64) {
        guard destination.layerProbe != nil else { return }
        apply(destination.layerProbe?.expire(at: now), to: destination, at: now)
        guard !destination.congestion.isProbing, let rate = layerProbeRate(of: destination, at: now) else { return }
        let video = destination.videoSent.bitsPerSecond(at: now)
        let bytes = Int(Int64(max(rate - video, rate / 2)) * Int64(LayerProbe.duration / 1000) / 8_000_000)
        let queued = queuePadding(bytes: bytes, to: destination, repeating: true, at: now)
        guard queued.packets > 0 else { return }
        // Outside the probe clusters transport feedback measures: this one is judged by a report.
        destination.congestion.beginProbe(
            id: SendSideBandwidthEstimator.unmeasuredProbe,
            rate: rate,
            packets: queued.packets,
            bytes: queued.bytes
        )
        destination.layerProbe?.begin(rate: rate, at: now)
    }

    /// Queues at least `bytes` of padding for `destination` (and at least the configured least
    /// number of packets): RTX copies of the newest packets of the layer it gets, newest first;
    /// a viewer of one layer gets copies of packets it has, under its own numbers. When those
    /// run out, `repeating` starts again from the newest. What was queued, in packets and bytes.
    private func queuePadding(
        bytes: Int,
        to destination: Destination,
        repeating: Bool,
        at now: UInt64
    ) -> (packets: Int, bytes: Int) {
        var queued = (packets: 0, bytes: 0)
        let layer = layers[destination.selection?.current ?? destination.keptFrom]
        let newest = layer.stream.nextSequenceNumber &- 1
        var sequenceNumber = newest
        var inPass = 0
        // A bound on the work: a history's worth of copies.
        for _ in 0..<max(layer.history.capacity, 1) {
            guard queued.packets < configuration.congestion.probeMinimumPackets || queued.bytes < bytes else { break }
            var handle = layer.handle(sequenceNumber)
            var size = layer.history.withPacket(sequenceNumber, { $0.count })
            if let selection = destination.selection, size != nil {
                if let number = selection.sentNumber(layer: layer.index, sequenceNumber: sequenceNumber) {
                    handle = layer.handle(sequenceNumber, renumberedAs: number)
                } else {
                    size = nil
                }
            }
            guard let size else {
                guard repeating, inPass > 0 else { break }
                sequenceNumber = newest
                inPass = 0
                continue
            }
            // In place: a copy of the pacer would copy its rings.
            guard destination.congestion.enqueue(handle: handle, size: size, kind: .padding, at: now) else { break }
            queued.packets += 1
            queued.bytes += size
            inPass += 1
            sequenceNumber &-= 1
        }
        return queued
    }

    /// What `destination` lets the encoder make, bits per second, when it allows `allowed`
    /// (`SendSideBandwidthEstimator.encoderVote`).
    func vote(of destination: Destination, allowed: Int) -> Int {
        destination.congestion.encoderVote(allowed: allowed)
    }

    /// Whether the encoder follows this receiver: it has not reported yet, or its vote is not
    /// below the weakest vote the policy kept (it is no outlier).
    func isFollowed(_ destination: Destination) -> Bool {
        guard let allowed = destination.allowedBitrate, let weakest = weakestFollowedVote else { return true }
        return vote(of: destination, allowed: allowed) >= weakest
    }

    /// Whether the next picture should not be encoded: the pacer of a receiver the encoder
    /// follows holds more video and retransmissions than leave in
    /// `CongestionConfiguration.maximumPacedBacklogUs` at its rate
    /// (`SendSideBandwidthEstimator.holdsVideo`).
    public func pacedBacklogHoldsVideo() -> Bool {
        for destination in destinations where destination.congestion.holdsVideo {
            if isFollowed(destination) { return true }
        }
        return false
    }
}
