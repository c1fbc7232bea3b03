import Media
import RTP
import SRTP
import Transport

extension Destination {
    /// Resends video packet `sequenceNumber` from `history` the way this destination asked
    /// for (`options.retransmission`): the original packet under its own index (one copy out
    /// of the history), or an RFC 4588 RTX packet with `rtx`'s SSRC and payload type and this
    /// destination's next RTX sequence number (the RTX packet is written straight from the
    /// history slot). Then SRTP in place and `sendto` from the RTP socket. False if nothing
    /// was sent (not held, mode off, protect or send failed).
    /// `renumbered`: the viewer's number of the packet (`LayerSelection`), which the resend
    /// carries under layer 0's SSRC.
    func retransmit(
        _ sequenceNumber: UInt16,
        from history: RTPPacketHistory,
        rtx: (ssrc: UInt32, payloadType: UInt8),
        renumbered: UInt16? = nil
    )
        -> Bool
    {
        let room = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<(buffer.count - RTPPacketBuffer.trailerSpare)])
        let length: Int?
        switch options.retransmission {
        case .off:
            return false
        case .sameSSRC:
            length = history.copy(sequenceNumber, into: room)
            if length != nil, let base = room.baseAddress {
                if let payloadTypes = options.payloadTypes { payloadTypes.rewrite(base) }
                if let renumbered { selection?.stamp(base, number: renumbered) }
            }
        case .rtx:
            let rtxSequenceNumber = feedback.takeRTXSequenceNumber()
            length =
                history.withPacket(sequenceNumber) { original in
                    try? RTPRetransmission.write(
                        original: original,
                        ssrc: rtx.ssrc,
                        payloadType: options.payloadTypes?.retransmission ?? rtx.payloadType,
                        sequenceNumber: rtxSequenceNumber,
                        originalSequenceNumber: renumbered,
                        into: room
                    )
                } ?? nil
        }
        guard let length else { return false }
        adaptStreamIDs(
            UnsafeMutableRawBufferPointer(rebasing: buffer[0..<length]),
            repair: options.retransmission == .rtx
        )
        guard let protected = protectRTP(buffer, length: length, audio: false) else {
            feedback.statistics.retransmissionFailures += 1
            return false
        }
        guard
            sockets.rtpSink.send(UnsafeRawBufferPointer(rebasing: buffer[0..<protected]), to: address.videoRTP)
        else {
            feedback.statistics.retransmissionFailures += 1
            return false
        }
        statistics.rtpPackets += 1
        statistics.rtpBytes += protected
        return true
    }

    /// Counts a repair of `layer` that left (`FeedbackStatistics.repairsByLayer`).
    func countRepair(layer: Int) {
        let missing = layer + 1 - feedback.statistics.repairsByLayer.count
        if missing > 0 { feedback.statistics.repairsByLayer.append(contentsOf: repeatElement(0, count: missing)) }
        feedback.statistics.repairsByLayer[layer] += 1
    }

    /// The feedback counters of this destination, with the current rate estimate.
    public var feedbackStatistics: FeedbackStatistics {
        var result = feedback.statistics
        result.nack = feedback.limiter.statistics
        result.bitrateEstimate = allowedBitrate
        result.congestion = congestion.statistics(at: MonotonicClock.now())
        if let rids = simulcast?.rids {
            let name = { (index: Int?) in index.flatMap { rids.indices.contains($0) ? rids[$0] : nil } }
            result.layer = name(selection?.current)
            result.nextLayer = name(selection?.pending)
            result.layerSwitches = selection?.switches ?? 0
            if let probes = layerProbe?.statistics {
                result.layerProbesPassed = probes.passed
                result.layerProbesFailed = probes.failed
                result.layerProbeDelayMilliseconds = probes.lastDelayMilliseconds
            }
            result.droppedLayers = Array(rids.prefix(keptFrom))
        }
        return result
    }

    /// What this receiver allows, bits per second (`SendSideBandwidthEstimator.targetBitrate`).
    var bitrateTarget: Int { congestion.targetBitrate }

    /// `bitrateTarget` once this receiver has said anything about the path; nil before: it has
    /// no vote on the encoder's rate yet (`SendSideBandwidthEstimator.allowedBitrate`).
    var allowedBitrate: Int? { congestion.allowedBitrate }
}
