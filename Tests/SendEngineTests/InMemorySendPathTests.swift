import Media
import RTP
import SRTP
import SendEngine
import Testing
import Transport

/// The send path with no network: a destination whose datagrams land in memory
/// (`DatagramSink`) and whose feedback is put into its inbox, as a WebRTC viewer's arrives.
/// Everything between the access unit and the wire runs for real: the payloader, the copy, SRTP,
/// the segmented burst, NACK handling from the history, RTCP.
@Suite struct InMemorySendPathTests {
    /// Keeps every datagram it is given, with its target.
    final class MemorySink: DatagramSink {
        var datagrams: [(bytes: [UInt8], target: UDPAddress)] = []
        var segmentedCalls = 0

        func send(_ datagram: UnsafeRawBufferPointer, to target: UDPAddress) -> Bool {
            datagrams.append((Array(datagram), target))
            return true
        }

        func send(
            _ bytes: UnsafeRawBufferPointer,
            segmentSize: Int,
            to target: UDPAddress
        ) -> (datagrams: Int, bytes: Int) {
            segmentedCalls += 1
            var offset = 0
            while offset < bytes.count {
                let length = min(segmentSize, bytes.count - offset)
                datagrams.append((Array(bytes[offset..<offset + length]), target))
                offset += length
            }
            return ((bytes.count + segmentSize - 1) / segmentSize, bytes.count)
        }
    }

    /// SPS, PPS and a 3,000-byte IDR slice: one STAP-A, then FU-A fragments at a 1,200-byte MTU.
    static func keyFrame(captureTime: UInt64) -> Media.H264AccessUnit {
        let sps: [UInt8] = [0x67, 0x42, 0xC0, 0x1F, 0x8C, 0x8D, 0x40]
        let pps: [UInt8] = [0x68, 0xCE, 0x3C, 0x80]
        let idr: [UInt8] = [0x65] + (0..<2_999).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
        let data = sps + pps + idr
        let ranges = [0..<sps.count, sps.count..<sps.count + pps.count, sps.count + pps.count..<data.count]
        return Media.H264AccessUnit(data: data, nalRanges: ranges, captureTime: captureTime, isKeyFrame: true)
    }

    struct Path {
        let sender: MediaSender
        let sink = MemorySink()
        let inbox: DatagramInbox
        let keys = SRTPKeyMaterial.random()
        let feedbackKeys = SRTPKeyMaterial.random()
        let remote: UDPAddress

        init() throws {
            sender = try MediaSender(configuration: .init(cname: "memory"), origin: 1_000_000_000)
            inbox = try DatagramInbox()
            remote = try UDPAddress(host: "127.0.0.1", port: 50_000)
            try sender.addDestination(
                id: "memory",
                keys: keys,
                feedbackKeys: feedbackKeys,
                sink: sink,
                remote: remote,
                inbox: inbox,
                owner: nil,
                audio: false,
                options: DestinationOptions()
            )
        }

        /// What the receiver would read: each datagram unprotected with the destination's keys.
        func received() throws -> [RTPPacket] {
            let session = try SRTPSession(keys: keys, direction: .inbound)
            return try rtp.map { try RTPPacket.parse(try session.unprotect($0)) }
        }

        /// The RTP datagrams, in order; RTCP (the first sender report goes with the first
        /// frame) is told apart by its packet type, as RFC 5761 section 4 demultiplexes.
        var rtp: [[UInt8]] {
            sink.datagrams.map(\.bytes).filter { $0.count > 1 && !(192...223).contains($0[1]) }
        }
    }

    @Test("an access unit leaves as SRTP the destination's keys open: STAP-A, FU-A, one timestamp")
    func accessUnitBecomesProtectedPackets() throws {
        let path = try Path()
        let unit = Self.keyFrame(captureTime: 1_000_000_000 + 100_000_000)
        try path.sender.send(video: unit)

        #expect(path.sink.datagrams.allSatisfy { $0.target == path.remote })
        #expect(path.rtp.count == path.sink.datagrams.count - 1)  // And one sender report.
        #expect(path.sink.segmentedCalls >= 1)
        let packets = try path.received()
        #expect(packets.count == 4)  // STAP-A, then 3,000 bytes in three FU-A fragments.
        let video = path.sender.video
        for (index, packet) in packets.enumerated() {
            #expect(packet.header.ssrc == video.ssrc)
            #expect(packet.header.payloadType == 96)
            #expect(packet.header.sequenceNumber == packets[0].header.sequenceNumber &+ UInt16(index))
            #expect(packet.header.timestamp == packets[0].header.timestamp)
            #expect(packet.header.marker == (index == packets.count - 1))
        }
        // 100 ms after the origin on the 90 kHz clock.
        #expect(packets[0].header.timestamp &- path.sender.videoClock.timestamp(at: 1_000_000_000) == 9_000)
        #expect(packets[0].payload.first.map { $0 & 0x1F } == 24)  // STAP-A
        // The FU-A fragments carry the IDR slice after its header, in order.
        let fragments = packets.dropFirst().map(\.payload)
        #expect(fragments.allSatisfy { $0.first.map { $0 & 0x1F } == 28 })
        #expect(fragments.first?[1] == 0x85 && fragments.last?[1] == 0x45)  // S and E bits, type 5.
        let idr = Array(unit.data[unit.nalRanges[2]])
        #expect(fragments.flatMap { $0.dropFirst(2) } == Array(idr.dropFirst()))
    }

    @Test("a NACK put in the inbox resends the very datagram from the history")
    func nackFromInboxResendsThePacket() throws {
        let path = try Path()
        try path.sender.send(video: Self.keyFrame(captureTime: 1_033_000_000))
        let sent = path.sink.datagrams.count
        let lost = try path.received()[2].header.sequenceNumber

        let nack = RTCPGenericNACK(
            senderSSRC: 0xFEED_0001,
            mediaSSRC: path.sender.video.ssrc,
            lostSequenceNumbers: [lost]
        )
        let viewer = try SRTPSession(keys: path.feedbackKeys, direction: .outbound)
        let datagram = try viewer.protectRTCP(try RTCPPacket.serialize([.genericNACK(nack)]))
        #expect(datagram.withUnsafeBytes { path.inbox.put($0) })
        _ = path.sender.pollFeedback(now: MonotonicClock.now())

        #expect(path.sink.datagrams.count == sent + 1)
        // Same SSRC, same sequence number, same SRTP index: the same bytes as the first time.
        let rtp = path.rtp
        #expect(rtp.count == 5 && rtp.last == rtp[2])
        let feedback = path.sender.destinations[0].feedbackStatistics
        #expect(feedback.rtcpPackets == 1 && feedback.rtcpBad == 0)
    }

    @Test("feedback the viewer's keys do not open is counted and changes nothing")
    func forgedFeedbackIsDropped() throws {
        let path = try Path()
        try path.sender.send(video: Self.keyFrame(captureTime: 1_033_000_000))
        let sent = path.sink.datagrams.count
        let lost = try path.received()[1].header.sequenceNumber
        let nack = RTCPGenericNACK(senderSSRC: 1, mediaSSRC: path.sender.video.ssrc, lostSequenceNumbers: [lost])
        let forger = try SRTPSession(keys: .random(), direction: .outbound)
        let datagram = try forger.protectRTCP(try RTCPPacket.serialize([.genericNACK(nack)]))
        #expect(datagram.withUnsafeBytes { path.inbox.put($0) })
        _ = path.sender.pollFeedback(now: MonotonicClock.now())

        #expect(path.sink.datagrams.count == sent)
        #expect(path.sender.destinations[0].feedbackStatistics.rtcpBad == 1)
    }

    @Test("a destination that leaves keeps its final counters, the latest 32 of them")
    func departedDestinationsKeepTheirCounters() throws {
        let path = try Path()
        try path.sender.send(video: Self.keyFrame(captureTime: 1_033_000_000))
        let lost = try path.received()[2].header.sequenceNumber
        let nack = RTCPGenericNACK(senderSSRC: 7, mediaSSRC: path.sender.video.ssrc, lostSequenceNumbers: [lost])
        let viewer = try SRTPSession(keys: path.feedbackKeys, direction: .outbound)
        let datagram = try viewer.protectRTCP(try RTCPPacket.serialize([.genericNACK(nack)]))
        #expect(datagram.withUnsafeBytes { path.inbox.put($0) })
        _ = path.sender.pollFeedback(now: MonotonicClock.now())

        #expect(path.sender.removeDestination(id: "memory", reason: "left"))
        #expect(path.sender.destinations.isEmpty)
        #expect(path.sender.departed.map(\.id) == ["memory"])
        #expect(path.sender.departed.first?.statistics.nack.sent == 1)
        #expect(path.sender.departed.first?.statistics.rtcpPackets == 1)

        // Churn keeps the newest 32; an id that comes back and leaves again appears once.
        for index in 0..<40 {
            try path.sender.addDestination(
                id: "churn\(index % 36)",
                keys: .random(),
                feedbackKeys: .random(),
                sink: path.sink,
                remote: path.remote,
                inbox: try DatagramInbox(),
                owner: nil,
                audio: false,
                options: DestinationOptions()
            )
            #expect(path.sender.removeDestination(id: "churn\(index % 36)"))
        }
        let ids = path.sender.departed.map(\.id)
        #expect(ids.count == MediaSender.departedLimit)
        #expect(Set(ids).count == ids.count)
        #expect(ids.last == "churn3" && !ids.contains("memory"))
    }

    @Test("BYE goes out as SRTCP through the sink")
    func goodbyeIsProtectedRTCP() throws {
        let path = try Path()
        try path.sender.send(video: Self.keyFrame(captureTime: 1_033_000_000))
        let before = path.sink.datagrams.count
        path.sender.sendGoodbye(reason: "done")
        #expect(path.sink.datagrams.count > before)
        let session = try SRTPSession(keys: path.keys, direction: .inbound)
        let rtcp = try RTCPPacket.parseCompound(try session.unprotectRTCP(try #require(path.sink.datagrams.last).bytes))
        let bye = rtcp.compactMap { packet -> RTCPGoodbye? in
            if case .goodbye(let bye) = packet { return bye }
            return nil
        }
        #expect(bye.first?.sources.contains(path.sender.video.ssrc) == true)
        #expect(bye.first?.reasonText == "done")
    }

    @Test("a relayed path hands each segment to the relay, counting refusals")
    func relaySinkSplitsSegments() {
        final class Calls: @unchecked Sendable { var lengths: [Int] = [] }
        let calls = Calls()
        let sink = RelayDatagramSink { datagram in
            calls.lengths.append(datagram.count)
            return calls.lengths.count != 2  // The relay refuses the second.
        }
        let bytes = [UInt8](repeating: 1, count: 2_500)
        let target = UDPAddress(storage: .init(), length: 0)
        let sent = bytes.withUnsafeBytes { sink.send($0, segmentSize: 1_000, to: target) }
        #expect(calls.lengths == [1_000, 1_000, 500])
        #expect(sent.datagrams == 2 && sent.bytes == 1_500)
    }
}
