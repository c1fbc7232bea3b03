import Media
import RTP
import SRTP
import SendEngine
import TestSupport
import Testing
import Transport

/// `MediaSender` against plain loopback sockets: what each destination receives decrypts with
/// its own keys only, and the RTP and RTCP fields are what receivers rely on.
@Suite struct MediaSenderTests {
    /// Two receivers, each a pair of sockets (RTP, RTCP) for video; audio is not asked for.
    final class Receiver {
        let rtp: UDPSocket
        let rtcp: UDPSocket
        init(mux: Bool) throws {
            // Even port with port + 1 free, found by binding.
            while true {
                let first = try UDPSocket(bindingTo: UDPAddress(host: "127.0.0.1", port: 0))
                let port = first.localAddress.port
                if mux {
                    rtp = first
                    rtcp = first
                    return
                }
                if port % 2 == 0, let second = try? UDPSocket(bindingTo: UDPAddress(host: "127.0.0.1", port: port + 1))
                {
                    rtp = first
                    rtcp = second
                    return
                }
            }
        }
    }

    @Test func eachDestinationGetsItsOwnKeysAndExactHeaders() throws {
        let start = MonotonicClock.now()
        let sender = try MediaSender(configuration: .init(cname: "alice_sub"), origin: start)
        let a = try Receiver(mux: false)
        let b = try Receiver(mux: false)
        let da = try sender.addDestination(
            id: "a",
            address: DestinationAddress(host: "127.0.0.1", videoPort: a.rtp.localAddress.port, audioPort: nil)
        )
        let db = try sender.addDestination(
            id: "b",
            address: DestinationAddress(host: "127.0.0.1", videoPort: b.rtp.localAddress.port, audioPort: nil)
        )
        #expect(da.keys != db.keys)

        let source = try SyntheticScreenSource(width: 320, height: 180)
        let encoder = try H264Encoder(.init(width: 320, height: 180))
        var sentPackets = 0
        // An independent payloader with the same budget (12-byte header, room for the longest
        // SRTP tag, 16 bytes) says how many packets each frame must take.
        var reference = H264Payloader(budget: try RTPPayloadBudget(mtu: 1200, srtpTrailerRoom: 16))
        for i in 0..<3 {
            let unit = try #require(
                try encoder.encode(source.videoFrame(index: i, captureTime: start + UInt64(i) * 33_333_333))
            )
            sentPackets += try reference.payloads(accessUnit: unit.nalUnits, maximumPayloadLength: 1200 - 28).count
            try sender.send(video: unit)
        }

        let inboundA = try SRTPSession(keys: da.keys, direction: .inbound)
        let inboundB = try SRTPSession(keys: db.keys, direction: .inbound)
        let packetsA = a.rtp.receiveAll()
        let packetsB = b.rtp.receiveAll()
        #expect(packetsA.count == sentPackets && packetsB.count == sentPackets)
        // B's packets do not authenticate with A's keys.
        #expect(throws: SRTPError.self) { _ = try inboundA.unprotect(packetsB[0]) }
        var timestamps: [UInt32] = []
        var previousSequence: UInt16?
        for bytes in packetsA {
            #expect(bytes.count <= 1200)
            let packet = try RTPPacket.parse(try inboundA.unprotect(bytes))
            #expect(packet.header.payloadType == 96 && packet.header.ssrc == sender.video.ssrc)
            if let previous = previousSequence { #expect(packet.header.sequenceNumber == previous &+ 1) }
            previousSequence = packet.header.sequenceNumber
            if packet.header.marker { timestamps.append(packet.header.timestamp) }
        }
        // One marker per frame; timestamps 3000 apart on the 90 kHz clock from capture time.
        #expect(timestamps.count == 3)
        #expect(zip(timestamps.dropFirst(), timestamps).allSatisfy { $0 &- $1 == 3000 })
        #expect(timestamps[0] == sender.videoClock.timestamp(at: start))
        _ = try packetsB.map { try inboundB.unprotect($0) }

        // RTCP: SR + SDES (CNAME) on RTP port + 1, protected with the destination's keys.
        let reports = a.rtcp.receiveAll()
        let first = try #require(reports.first)
        let compound = try RTCPPacket.parseCompound(try inboundA.unprotectRTCP(first))
        guard case .senderReport(let sr) = compound.first else {
            Issue.record("first RTCP packet is not a sender report: \(compound)")
            return
        }
        #expect(sr.ssrc == sender.video.ssrc)
        #expect(compound.contains { if case .sourceDescription = $0 { true } else { false } })

        // BYE on removal; nothing after it.
        #expect(sender.removeDestination(id: "a"))
        let bye = try RTCPPacket.parseCompound(try inboundA.unprotectRTCP(try #require(a.rtcp.receiveAll().last)))
        #expect(bye.contains { if case .goodbye = $0 { true } else { false } })
        try sender.send(
            video: try #require(try encoder.encode(source.videoFrame(index: 3, captureTime: start + 100_000_000)))
        )
        #expect(a.rtp.receiveAll().isEmpty)
        #expect(!b.rtp.receiveAll().isEmpty)
    }

    /// A 720p key frame is about 90 packets, which leave as bursts (runs of equal-size packets in
    /// one segmented send each, `Destination.send(burst:…)`). Each receiver must still get every
    /// packet once, in sequence order, within the MTU, and reassemble the exact NAL units; and
    /// the per-destination counters must count datagrams and bytes as sent.
    @Test func aKeyFrameLeavesInBurstsAndReassemblesExactly() throws {
        let start = MonotonicClock.now()
        let sender = try MediaSender(configuration: .init(cname: "alice_sub"), origin: start)
        let receivers = try [Receiver(mux: true), Receiver(mux: true)]
        var destinations: [Destination] = []
        for (index, receiver) in receivers.enumerated() {
            destinations.append(
                try sender.addDestination(
                    id: "d\(index)",
                    address: DestinationAddress(
                        host: "127.0.0.1",
                        videoPort: receiver.rtp.localAddress.port,
                        audioPort: nil,
                        rtcpMux: true
                    )
                )
            )
        }
        let source = try SyntheticScreenSource(width: 1280, height: 720)
        let encoder = try H264Encoder(.init(width: 1280, height: 720, bitrateKbps: 2_500))
        var units: [Media.H264AccessUnit] = []
        for index in 0..<3 {
            let unit = try #require(
                try encoder.encode(source.videoFrame(index: index, captureTime: start + UInt64(index) * 33_333_333))
            )
            units.append(unit)
            try sender.send(video: unit)
        }
        #expect(units[0].isKeyFrame)
        var reference = H264Payloader(budget: try RTPPayloadBudget(mtu: 1200, srtpTrailerRoom: 16))
        let expectedCount = try units.reduce(0) {
            $0 + (try reference.payloads(accessUnit: $1.nalUnits, maximumPayloadLength: 1200 - 28).count)
        }
        #expect(
            expectedCount > 60,
            "a 720p key frame should take dozens of packets, took \(expectedCount) for 3 frames"
        )

        for (receiver, destination) in zip(receivers, destinations) {
            let inbound = try SRTPSession(keys: destination.keys, direction: .inbound)
            let datagrams = receiver.rtp.receiveAll().filter { $0.count > 1 && $0[1] & 0x7F == 96 }
            #expect(datagrams.count == expectedCount)
            #expect(destination.statistics.rtpPackets == expectedCount)
            #expect(destination.statistics.rtpBytes == datagrams.reduce(0) { $0 + $1.count })
            #expect(destination.statistics.sendDrops == 0 && destination.statistics.protectFailures == 0)
            var depacketizer = H264Depacketizer()
            var reassembled: [RTP.H264AccessUnit] = []
            var previous: UInt16?
            for bytes in datagrams {
                #expect(bytes.count <= 1200)
                let packet = try RTPPacket.parse(try inbound.unprotect(bytes))
                if let previous { #expect(packet.header.sequenceNumber == previous &+ 1) }
                previous = packet.header.sequenceNumber
                reassembled += try depacketizer.push(packet)
            }
            #expect(reassembled.map { $0.nalUnits } == units.map { $0.nalUnits.map(Array.init) })
        }
    }

    @Test func rtcpMuxSendsReportsOnTheRTPPortAndTheSDPSaysSo() throws {
        let start = MonotonicClock.now()
        let sender = try MediaSender(configuration: .init(cname: "bob"), origin: start)
        let r = try Receiver(mux: true)
        let d = try sender.addDestination(
            id: "mux",
            address: DestinationAddress(
                host: "127.0.0.1",
                videoPort: r.rtp.localAddress.port,
                audioPort: nil,
                rtcpMux: true
            )
        )
        let encoder = try H264Encoder(.init(width: 320, height: 180))
        let unit = try #require(try encoder.encode(VideoFrame(width: 320, height: 180, captureTime: start)))
        try sender.send(video: unit)
        let inbound = try SRTPSession(keys: d.keys, direction: .inbound)
        let datagrams = r.rtp.receiveAll()
        // RFC 5761 §4: RTCP packet types 200–204 sit where an RTP payload type would be.
        let rtcp = datagrams.filter { (200...204).contains($0[1]) }
        #expect(rtcp.count == 1, "the video SR on the shared RTP port (no audio was asked for)")
        #expect(throws: Never.self) { _ = try RTCPPacket.parseCompound(try inbound.unprotectRTCP(rtcp[0])) }
        let (sps, pps) = try #require(sender.parameterSets)
        let sdp = try StreamSDP.playerFile(for: d, sender: sender, sps: sps, pps: pps)
        #expect(sdp.contains("a=rtcp-mux\r\n") && !sdp.contains("a=rtcp:"))
        #expect(sdp.contains("profile-level-id=42c0"))
    }
}
