import RTP
import SRTP
import Transport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The receive side (Docs/feedback.md): what receivers send back on each destination's
/// sockets is read, verified, parsed and acted on between frames, on the media thread.
extension MediaSender {
    /// Reads every datagram waiting on the destinations' sockets (at most
    /// `maximumDatagramsPerPoll` per socket), never blocking, and acts on it:
    ///
    /// - RR (and report blocks in an SR): the destination's loss, jitter and RTT; its loss
    ///   feeds that receiver's rate estimate;
    /// - generic NACK: each listed packet is resent from the video history, same SSRC or RTX
    ///   as the destination asked, at most once per that receiver's RTT;
    /// - PLI / FIR: a key-frame request, through the limiter (one per interval for everyone);
    /// - REMB: caps that receiver's estimate.
    ///
    /// A datagram from a foreign host, not RTCP, failing SRTCP (unless clear feedback is
    /// accepted for that destination) or malformed is counted on the destination and dropped.
    /// Call it between frames with the monotonic time; the result says whether to force an IDR
    /// and, when it moved, the bitrate all receivers together allow.
    ///
    /// `readable` limits the reading to those descriptors (what a `poll` over
    /// `feedbackPollSet` found ready; empty runs only the timers); nil reads every socket.
    public func pollFeedback(now: UInt64, readable: [Int32]? = nil) -> FeedbackActions {
        var actions = FeedbackActions()
        for destination in destinations {
            if let inbox = destination.sockets.inbox {
                // A WebRTC viewer: never read libnice's socket; its SRTCP waits in the inbox.
                if readable?.contains(inbox.descriptor) ?? true {
                    drain(inbox, of: destination, now: now, actions: &actions)
                }
                continue
            }
            guard let (rtp, rtcp) = destination.sockets.readable else { continue }
            if destination.listener != nil {
                // At every poll, before any read: a queued ICMP error keeps the socket ready
                // (POLLERR) until taken, and one left unread would pass for a quiet port.
                let refusals = rtp.takeRefusals()
                if destination.listener?.update(refusals: refusals, at: now) == true { receiverStarts += 1 }
            }
            if readable?.contains(rtcp.descriptor) ?? true {
                drain(rtcp, of: destination, now: now, actions: &actions)
            }
            if !destination.sockets.isMultiplexed, readable?.contains(rtp.descriptor) ?? true {
                drain(rtp, of: destination, now: now, actions: &actions)
            }
        }
        for layer in layers where layer.keyFrames.due(at: now) { actions.keyFrameLayers |= 1 << layer.index }
        selectLayers(now: now, actions: &actions)
        for destination in destinations { destination.congestion.updateDrainPacing() }
        actions.targetBitrate = retarget(at: now)
        for destination in destinations where destination.congestion.isPaced {
            applyPacingRate(to: destination)
            probeIfDue(destination, at: now)
            probeLayerIfDue(destination, at: now)
        }
        return actions
    }

    /// The encoder's target from every receiver's vote at `now`, when it moved by at least
    /// `FeedbackConfiguration.bitrateChangeThreshold` (else nil). A receiver that has not
    /// reported votes its start when it has one (`SendSideBandwidthEstimator.startVote`): call
    /// this right after adding a destination, so the key frame the newcomer joins on is made
    /// at its rate.
    public func retarget(at now: UInt64) -> Int? {
        bitrateVotes.removeAll(keepingCapacity: true)
        // Layer 0's encoder follows the receivers that get layer 0: a viewer moved to a lower
        // layer no longer pulls it down.
        for destination in destinations {
            guard let allowed = destination.allowedBitrate ?? destination.congestion.startVote(at: now),
                let vote = layerZeroVote(of: destination, allowed: allowed)
            else { continue }
            bitrateVotes.append(vote)
        }
        let target = bitratePolicy.target(&bitrateVotes)
        weakestFollowedVote = bitratePolicy.weakestFollowed(&bitrateVotes)
        let threshold = configuration.feedback.bitrateChangeThreshold
        guard abs(Double(target - targetBitrate)) >= threshold * Double(targetBitrate) else { return nil }
        targetBitrate = target
        return target
    }

    /// When `pollFeedback` has timed work to do with no datagram (a key-frame request the
    /// limiter held back falls due), or nil.
    public var nextTimerDeadline: UInt64? { layers.compactMap(\.keyFrames.pendingDueTime).min() }

    /// One `pollfd` (POLLIN) per socket feedback can arrive on, every destination's, replacing
    /// what `set` held (its capacity is kept: no allocation once it has grown).
    public func feedbackPollSet(into set: inout [pollfd]) {
        set.removeAll(keepingCapacity: true)
        for destination in destinations {
            if let inbox = destination.sockets.inbox {
                set.append(pollfd(fd: inbox.descriptor, events: Int16(POLLIN), revents: 0))
                continue
            }
            guard let (rtp, rtcp) = destination.sockets.readable else { continue }
            set.append(pollfd(fd: rtcp.descriptor, events: Int16(POLLIN), revents: 0))
            if !destination.sockets.isMultiplexed {
                set.append(pollfd(fd: rtp.descriptor, events: Int16(POLLIN), revents: 0))
            }
        }
    }

    /// A key-frame request from the room (a member's `{"request": "keyframe"}` signal, a new
    /// viewer) at `now`, through the same limiter as PLI and FIR: anyone in the room can send
    /// signals as fast as the server relays them, and each IDR costs every viewer bitrate. True
    /// when the next frame should be an IDR; false when it was coalesced, and then
    /// `pollFeedback` grants it once the interval has passed (`nextTimerDeadline`).
    /// The room's viewers watch layer 0.
    public func requestKeyFrameFromRoom(at now: UInt64) -> Bool { layers[0].keyFrames.signaledRequest(at: now) }

    /// Key-frame requests received, coalesced and granted, all destinations and layers together.
    public var keyFrameRequestStatistics: KeyFrameRequestLimiter.Statistics {
        var total = layers[0].keyFrames.statistics
        for layer in layers.dropFirst() {
            let more = layer.keyFrames.statistics
            total.requests += more.requests
            total.signaled += more.signaled
            total.duplicateFIRs += more.duplicateFIRs
            total.coalesced += more.coalesced
            total.granted += more.granted
        }
        return total
    }

    private func drain(_ socket: UDPSocket, of destination: Destination, now: UInt64, actions: inout FeedbackActions) {
        for _ in 0..<configuration.feedback.maximumDatagramsPerPoll {
            let received = feedbackBuffer.withUnsafeMutableStorage { storage, count -> UDPAddress? in
                // The spare room behind the datagram is not read into: it is libsrtp's.
                let room = UnsafeMutableRawBufferPointer(
                    rebasing: storage[0..<(storage.count - RTPPacketBuffer.trailerSpare)]
                )
                guard let (length, from) = socket.receive(into: room) else { return nil }
                count = length
                return from
            }
            guard let source = received else { return }
            receive(from: source, on: destination, now: now, actions: &actions)
        }
    }

    /// The SRTCP a WebRTC viewer's transport handed over (ICE checked where it came from).
    private func drain(_ inbox: DatagramInbox, of destination: Destination, now: UInt64, actions: inout FeedbackActions)
    {
        for _ in 0..<configuration.feedback.maximumDatagramsPerPoll {
            let taken = feedbackBuffer.withUnsafeMutableStorage { storage, count -> Bool in
                let room = UnsafeMutableRawBufferPointer(
                    rebasing: storage[0..<(storage.count - RTPPacketBuffer.trailerSpare)]
                )
                guard let length = inbox.take(into: room) else { return false }
                count = length
                return true
            }
            guard taken else { return }
            receive(from: nil, on: destination, now: now, actions: &actions)
        }
    }

    /// `source` nil: the datagram came through ICE, which checked its 5-tuple.
    private func receive(
        from source: UDPAddress?,
        on destination: Destination,
        now: UInt64,
        actions: inout FeedbackActions
    ) {
        let feedback = destination.feedback
        if let source, !source.hasSameHost(as: destination.address.videoRTP) {
            feedback.statistics.foreignSource += 1
            return
        }
        // RFC 5761 §4: RTCP packet types (192–223) sit where RTP has marker + payload type.
        let isRTCP = feedbackBuffer.withUnsafeBytes { $0.count >= 8 && RTCPPacketType.range.contains($0[1]) }
        guard isRTCP else {
            feedback.statistics.notRTCP += 1
            return
        }
        // SRTCP is tried first and wins; the clear reading (when allowed) needs the bytes as
        // they arrived, and libsrtp may have changed them in place while failing.
        let allowsClear = destination.options.acceptsUnauthenticatedFeedback
        if allowsClear {
            feedbackBuffer.withUnsafeBytes { bytes in
                feedbackCopy.withUnsafeMutableStorage { storage, count in
                    storage.copyMemory(from: bytes)
                    count = bytes.count
                }
            }
        }
        let verified = feedbackBuffer.withUnsafeMutableStorage { storage, count -> Bool in
            guard let length = try? feedback.inbound.unprotectRTCP(buffer: storage, length: count) else { return false }
            count = length
            return true
        }
        guard verified || allowsClear else {
            feedback.statistics.rtcpAuthenticationFailures += 1
            return
        }
        let packets: [RTCPPacket]
        do {
            packets = try (verified ? feedbackBuffer : feedbackCopy).withUnsafeBytes { (bytes) throws(RTPError) in
                try RTCPPacket.parseCompound(bytes)
            }
        } catch {
            // Clear bytes that are not RTCP either were most likely forged or damaged SRTCP.
            if verified {
                feedback.statistics.rtcpMalformed += 1
            } else {
                feedback.statistics.rtcpAuthenticationFailures += 1
            }
            return
        }
        feedback.statistics.rtcpPackets += 1
        if !verified { feedback.statistics.rtcpUnauthenticated += 1 }
        for packet in packets {
            handle(packet, from: destination, now: now, actions: &actions)
        }
    }

    private func handle(
        _ packet: RTCPPacket,
        from destination: Destination,
        now: UInt64,
        actions: inout FeedbackActions
    ) {
        let feedback = destination.feedback
        switch packet {
        case .receiverReport(let report):
            record(report.reports, reporter: report.ssrc, from: destination, now: now)
        case .senderReport(let report):
            record(report.reports, reporter: report.ssrc, from: destination, now: now)
        case .genericNACK(let nack):
            // The layer whose SSRC it names, if that destination gets it.
            guard let layer = layer(ssrc: nack.mediaSSRC), destination.options.layers.takes(layer.index) else { break }
            // RFC 4585 §6.2.1: each entry is a PID and a bitmask of the 16 numbers after it.
            for entry in nack.entries {
                resend(entry.packetID, of: layer, to: destination, now: now)
                for bit in 0..<16 where entry.lostBitmask & (1 << bit) != 0 {
                    resend(entry.packetID &+ UInt16(bit + 1), of: layer, to: destination, now: now)
                }
            }
        case .pictureLossIndication(let pli):
            guard let layer = watched(ssrc: pli.mediaSSRC, by: destination) else { break }
            feedback.statistics.pictureLossIndications += 1
            if layer.keyFrames.pictureLoss(at: now) { actions.keyFrameLayers |= 1 << layer.index }
        case .fullIntraRequest(let fir):
            // RFC 5104 §4.3.1.2: the targets are in the FCI entries, not the media SSRC field.
            for entry in fir.entries {
                guard let layer = watched(ssrc: entry.ssrc, by: destination) else { continue }
                feedback.statistics.fullIntraRequests += 1
                let requester = UInt64(feedback.number) << 32 | UInt64(fir.senderSSRC)
                if layer.keyFrames.fullIntraRequest(
                    requester: requester,
                    sequenceNumber: entry.sequenceNumber,
                    at: now
                ) {
                    actions.keyFrameLayers |= 1 << layer.index
                }
            }
        case .transportFeedback(let transportFeedback):
            let roundTrip = feedback.statistics.video?.roundTripMilliseconds.map { Int64(max($0, 0) * 1000) }
            destination.congestion.receive(transportFeedback, roundTripUs: roundTrip, at: now)
        case .receiverEstimatedMaximumBitrate(let remb)
        where remb.ssrcs.isEmpty || remb.ssrcs.contains(where: { layer(ssrc: $0) != nil }):
            feedback.statistics.receiverEstimatedMaximumBitrate = remb.bitrate
            destination.congestion.reportReceiverEstimate(remb.bitrate)
        default:
            break
        }
    }

    /// RFC 3550 §6.4.1 report blocks about our streams; blocks about other sources are ignored.
    private func record(_ blocks: [RTCPReceptionReport], reporter: UInt32, from destination: Destination, now: UInt64) {
        let feedback = destination.feedback
        for block in blocks {
            if block.ssrc == video.ssrc {
                let summary = ReceiverReportSummary(
                    block,
                    reporterSSRC: reporter,
                    clockRate: video.clockRate,
                    arrival: ntpClock.timestamp(atMonotonic: now)
                )
                feedback.statistics.video = summary
                destination.congestion.reportLoss(summary.fractionLost, at: now)
                if destination.layerProbe != nil {
                    let outcome = destination.layerProbe?.report(
                        lastSenderReport: block.lastSenderReport,
                        roundTripUs: summary.roundTripMilliseconds.map { Int64($0 * 1000) },
                        fractionLost: summary.fractionLost,
                        at: now
                    )
                    apply(outcome, to: destination, at: now)
                }
            } else if block.ssrc == audio.ssrc {
                feedback.statistics.audio = ReceiverReportSummary(
                    block,
                    reporterSSRC: reporter,
                    clockRate: audio.clockRate,
                    arrival: ntpClock.timestamp(atMonotonic: now)
                )
            }
        }
    }

    /// The resend rate of a receiver that never reported, bits per second: its share
    /// (`FeedbackConfiguration.unreportedRetransmissionShare`) of the video sent over the
    /// limiter's window. A receiver with an allowed rate keeps that rate as its limit.
    func unreportedRetransmissionRate(at now: UInt64) -> Int {
        Int(Double(videoSent.bitsPerSecond(at: now)) * configuration.feedback.unreportedRetransmissionShare)
    }

    /// The layer feedback about `ssrc` from `destination` concerns: the one a viewer of one
    /// layer watches or waits for (it knows only layer 0's SSRC), else the layer with that SSRC
    /// if the destination gets it.
    private func watched(ssrc: UInt32, by destination: Destination) -> VideoLayer? {
        guard let layer = layer(ssrc: ssrc), destination.options.layers.takes(layer.index) else { return nil }
        guard let selection = destination.selection else { return layer }
        return layers[selection.pending ?? selection.current ?? 0]
    }

    /// A NACKed packet, resent when the limiter allows. A viewer of one layer names its own
    /// numbers: the packet is found in the layer it came from (`LayerRenumbering.source`) and
    /// resent under the viewer's number.
    private func resend(_ number: UInt16, of named: VideoLayer, to destination: Destination, now: UInt64) {
        var layer: VideoLayer? = named
        var sequenceNumber = number
        var renumbered: UInt16?
        if let selection = destination.selection {
            renumbered = number
            let source = selection.renumbering.source(of: number)
            layer = source.flatMap { layers.indices.contains($0.layer) ? layers[$0.layer] : nil }
            sequenceNumber = source?.sequenceNumber ?? number
        }
        let feedback = destination.feedback
        let interval = feedback.retransmissionInterval(
            fallback: configuration.feedback.defaultRoundTrip,
            minimum: configuration.feedback.minimumRetransmissionInterval
        )
        guard destination.options.retransmission != .off else {
            feedback.statistics.nackIgnored += 1
            return
        }
        // One history lookup: whether it is held, and its size on the wire as a resend (RTX
        // header included), which counts against what this receiver allows once it said, and
        // until then against a share of the video sent (`unreportedRetransmissionRate`).
        let size = layer?.history.withPacket(sequenceNumber) { $0.count + RTPRetransmission.overhead }
        let decision = feedback.limiter.decide(
            number,
            available: size != nil,
            at: now,
            roundTrip: interval,
            bytes: size ?? 0,
            maximumRate: destination.allowedBitrate ?? unreportedRetransmissionRate(at: now)
        )
        guard decision == .resend, let size, let layer else { return }
        queueRetransmission(sequenceNumber, of: layer, size: size, to: destination, at: now, renumbered: renumbered)
    }
}
