import Media
import RTP
import SRTP
import TestSupport
import Testing
import Transport

@testable import CongestionControl
@testable import SendEngine

/// `MediaSender` with congestion control on (`CongestionConfiguration.enabled`) against bundled
/// loopback receivers (video, audio and RTCP on one port, as a WebRTC viewer has them): the
/// transport-wide sequence number each destination's copy carries, or its blanking, the pacer
/// spreading a key frame, and transport feedback driving the delay-based estimate and a probe.
@Suite("Paced sending with transport-wide sequence numbers", .serialized)
struct PacedSendTests {
    /// A 640x360 key frame of the synthetic screen at 1.5 Mbit/s, encoded once for the suite.
    static let encoded: Result<Media.H264AccessUnit?, MediaError> = {
        do throws(MediaError) {
            let source = try SyntheticScreenSource(width: 640, height: 360)
            let encoder = try H264Encoder(.init(width: 640, height: 360, bitrateKbps: 1500))
            return .success(try encoder.encode(source.videoFrame(index: 0, captureTime: origin)))
        } catch {
            return .failure(error)
        }
    }()

    static func keyFrame() throws -> Media.H264AccessUnit {
        let unit = try #require(try encoded.get())
        #expect(unit.isKeyFrame)
        return unit
    }

    static let origin: UInt64 = 1_000_000_000
    static let start = 1_800_000
    /// 2.5 × the start rate: what the pacer runs at before any feedback.
    static let pacingRate = 4_500_000

    static func sender(
        pacing: Bool = true,
        maximumPacedBacklogUs: Int64? = nil,
        unknownPathStart: Int? = nil
    ) throws -> MediaSender {
        var configuration = MediaSender.Configuration(cname: "paced")
        configuration.congestion = .enabled
        if let maximumPacedBacklogUs { configuration.congestion.maximumPacedBacklogUs = maximumPacedBacklogUs }
        if !pacing { configuration.congestion.pacing = nil }
        // Receivers start at the configured rate unless asked (D33: `UnknownPathStartTests`).
        configuration.congestion.unknownPathStart = unknownPathStart
        configuration.feedback.bitrate = CongestionConfiguration.LossBased(
            minimum: 150_000,
            maximum: 4_000_000,
            start: start
        )
        return try MediaSender(configuration: configuration, origin: origin)
    }

    /// How many packets the sender cuts `unit` into: 1200-byte MTU, room for a 16-byte tag, and
    /// the sender's header (12 bytes + the 8-byte extension).
    static func packetCount(_ unit: Media.H264AccessUnit, sender: MediaSender) throws -> Int {
        var reference = H264Payloader(budget: try RTPPayloadBudget(mtu: 1200, srtpTrailerRoom: 16))
        let budget = 1200 - 16 - sender.video.headerLength
        return try reference.payloads(accessUnit: unit.nalUnits, maximumPayloadLength: budget).count
    }

    static func opus(_ index: Int) -> OpusPacket {
        OpusPacket(
            data: [0xFC, 0xFF, 0xFE, UInt8(index)],
            sampleCount: 960,
            captureTime: origin + UInt64(index) * 20_000_000
        )
    }

    /// One bundled receiver: every RTP datagram it gets, decrypted, with its arrival time.
    final class Viewer {
        struct Arrival {
            var timeUs: Int64
            var clear: [UInt8]
            var ssrc: UInt32 {
                UInt32(clear[8]) << 24 | UInt32(clear[9]) << 16 | UInt32(clear[10]) << 8 | UInt32(clear[11])
            }
            var payloadType: UInt8 { clear[1] & 0x7F }
            func transportNumber(id: UInt8) throws -> UInt16? {
                try clear.withUnsafeBytes { try RTPTransportSequenceNumber.read(id: id, inPacket: $0) }
            }
        }

        let socket: UDPSocket
        let destination: Destination
        let inbound: SRTPSession
        var rtp: [Arrival] = []
        var rtcp = 0
        /// Where the sender's datagrams come from: where feedback goes back to.
        var senderAddress: UDPAddress?

        init(_ sender: MediaSender, id: String, options: DestinationOptions, audio: Bool = true) throws {
            socket = try UDPSocket(bindingTo: UDPAddress(host: "127.0.0.1", port: 0))
            destination = try sender.addDestination(
                id: id,
                address: DestinationAddress(bundled: socket.localAddress, audio: audio),
                options: options
            )
            inbound = try SRTPSession(keys: destination.keys, direction: .inbound)
        }

        /// Reads what is waiting (waits up to `milliseconds` for the first datagram).
        func drain(milliseconds: Int32 = 0) throws {
            var buffer = [UInt8](repeating: 0, count: 2048)
            var wait = milliseconds
            while socket.waitReadable(milliseconds: wait) {
                wait = 0
                guard let got = buffer.withUnsafeMutableBytes({ socket.receive(into: $0) }) else { break }
                let timeUs = Int64(MonotonicClock.now() / 1000)
                senderAddress = got.from
                let bytes = Array(buffer[0..<got.length])
                if RTCPPacketType.range.contains(bytes[1]) {
                    rtcp += 1
                    continue
                }
                rtp.append(Arrival(timeUs: timeUs, clear: try inbound.unprotect(bytes)))
            }
        }

        func video(_ sender: MediaSender) -> [Arrival] { rtp.filter { $0.ssrc == sender.video.ssrc } }
        func audio(_ sender: MediaSender) -> [Arrival] { rtp.filter { $0.ssrc == sender.audio.ssrc } }
    }

    /// Runs the sender thread's part for up to `milliseconds`: `sendPaced` with the real clock,
    /// reading every viewer, an audio packet every 20 ms from `audioIndex` on (when given), until
    /// the pacers are empty. Returns the audio packets sent.
    @discardableResult
    static func drive(
        _ sender: MediaSender,
        _ viewers: [Viewer],
        milliseconds: Int = 500,
        audioFrom audioIndex: Int? = nil
    ) throws -> Int {
        let begin = MonotonicClock.now()
        let end = begin + UInt64(milliseconds) * 1_000_000
        var audioSent = 0
        while MonotonicClock.now() < end {
            let now = MonotonicClock.now()
            if let audioIndex, now >= begin + UInt64(audioSent) * 20_000_000 {
                try sender.send(audio: opus(audioIndex + audioSent))
                audioSent += 1
            }
            sender.sendPaced(now: now)
            for viewer in viewers { try viewer.drain() }
            if !sender.hasPacedBacklog { break }
            _ = viewers[0].socket.waitReadable(milliseconds: 1)
        }
        for viewer in viewers { try viewer.drain(milliseconds: 20) }
        return audioSent
    }

    /// RFC 8285 one-byte form, one element: `BE DE 00 01 | id<<4|1 hi lo | 00`; id 0 and a zero
    /// number for a blanked slot.
    static func extensionBytes(id: UInt8, number: UInt16) -> [UInt8] {
        [0xBE, 0xDE, 0x00, 0x01, id == 0 ? 0 : id << 4 | 1, UInt8(number >> 8), UInt8(number & 0xFF), 0x00]
    }

    @Test("a transport-cc receiver: every packet, audio too, numbered 1, 2, 3 … in arrival order; the key frame paced")
    func numberedAndPaced() throws {
        let unit = try Self.keyFrame()
        let sender = try Self.sender()
        let viewer = try Viewer(
            sender,
            id: "twcc",
            options: DestinationOptions(
                retransmission: .rtx,
                transportWideSequenceNumberID: 5,
                transportWideAudio: true
            )
        )
        let expected = try Self.packetCount(unit, sender: sender)
        #expect(expected >= 20, "the key frame should take tens of packets, took \(expected)")
        #expect(sender.video.headerLength == 20 && sender.audio.headerLength == 20)
        // What the sender thread does first; it gives the pacer the start rate.
        _ = sender.pollFeedback(now: MonotonicClock.now())
        #expect(viewer.destination.feedbackStatistics.congestion?.pacingBitrate == Self.pacingRate)

        try sender.send(audio: Self.opus(0))
        try sender.send(video: unit)
        let pacer = try #require(viewer.destination.congestion.pacer)
        let queued = pacer.queued(.video)
        // The 40 ms burst allowance at 4.5 Mbit/s (22 500 bytes) left at once, the rest waits.
        #expect(
            (18...23).contains(expected - queued),
            "about 22 500 bytes of the picture leave at once: \(queued) of \(expected) still queued"
        )
        #expect(viewer.destination.statistics.rtpPackets == 1 + expected - queued)

        let audioSent = try Self.drive(sender, [viewer], audioFrom: 1)
        #expect(!sender.hasPacedBacklog)
        let video = viewer.video(sender)
        let audio = viewer.audio(sender)
        #expect(video.count == expected)
        #expect(audio.count == 1 + audioSent)
        #expect(viewer.rtp.count == video.count + audio.count, "nothing but video and audio")
        #expect(audioSent >= 1, "audio went out while the key frame was paced")

        // One series across both streams, in arrival order, from 1.
        let numbers = try viewer.rtp.map { try $0.transportNumber(id: 5) }
        #expect(numbers == (0..<viewer.rtp.count).map { UInt16($0 + 1) })
        for (index, arrival) in viewer.rtp.enumerated() {
            #expect(Array(arrival.clear[12..<20]) == Self.extensionBytes(id: 5, number: UInt16(index + 1)))
        }
        #expect(try viewer.rtp.allSatisfy { try $0.transportNumber(id: 3) == nil }, "the template's id 3 is gone")
        let first = try RTPPacket.parse(try #require(viewer.rtp.first).clear)
        #expect(first.header.headerExtension == RTPHeaderExtension(profile: 0xBEDE, data: [0x51, 0x00, 0x01, 0x00]))

        // What is beyond the allowance spreads out at 4.5 Mbit/s, less 3 ms (a packet and slack).
        let bytes = video.reduce(0) { $0 + $1.clear.count }
        let span = try #require(video.last).timeUs - video[0].timeUs
        let leastUs = Int64((Double(bytes * 8) / Double(Self.pacingRate) - 0.040) * 1e6) - 3_000
        #expect(span > 5_000 && span >= leastUs, "key frame of \(bytes) bytes arrived over \(span) µs")
        let sent = viewer.destination.statistics
        #expect(sent.rtpPackets == viewer.rtp.count && sent.sendDrops == 0 && sent.protectFailures == 0)
        let congestion = try #require(viewer.destination.feedbackStatistics.congestion)
        #expect(congestion.transportWide && congestion.pacerQueuePackets == 0 && congestion.pacerDropped == 0)
    }

    @Test(
        "receivers without the number (no id, or same-SSRC resends) get the slot blanked; the others' series is their own"
    )
    func blankedForOthers() throws {
        let unit = try Self.keyFrame()
        let sender = try Self.sender()
        let numbered = try Viewer(
            sender,
            id: "video-only numbers",
            options: DestinationOptions(retransmission: .rtx, transportWideSequenceNumberID: 5)
        )
        let plain = try Viewer(sender, id: "no transport-cc", options: DestinationOptions(retransmission: .rtx))
        let sameSSRC = try Viewer(
            sender,
            id: "same-SSRC resends",
            options: DestinationOptions(
                retransmission: .sameSSRC,
                transportWideSequenceNumberID: 5,
                transportWideAudio: true
            )
        )
        let viewers = [numbered, plain, sameSSRC]
        _ = sender.pollFeedback(now: MonotonicClock.now())
        try sender.send(audio: Self.opus(0))
        try sender.send(video: unit)
        let audioSent = try Self.drive(sender, viewers, audioFrom: 1)
        let expected = try Self.packetCount(unit, sender: sender)

        for viewer in viewers {
            #expect(viewer.video(sender).count == expected, "\(viewer.destination.id)")
            #expect(viewer.audio(sender).count == 1 + audioSent, "\(viewer.destination.id)")
        }
        // Video numbered 1 … N; its audio (not agreed for audio) blanked, taking no numbers.
        let video = numbered.video(sender)
        #expect(try video.map { try $0.transportNumber(id: 5) } == (0..<expected).map { UInt16($0 + 1) })
        for arrival in numbered.audio(sender) {
            #expect(Array(arrival.clear[12..<20]) == Self.extensionBytes(id: 0, number: 0))
        }
        for viewer in [plain, sameSSRC] {
            #expect(viewer.destination.congestion.transportWideID == nil, "\(viewer.destination.id)")
            for arrival in viewer.rtp {
                // Bytes 16–18: the element, all zero (RFC 8285 padding); the preamble stays.
                #expect(Array(arrival.clear[12..<16]) == [0xBE, 0xDE, 0x00, 0x01])
                #expect(Array(arrival.clear[16...18]) == [0, 0, 0], "\(viewer.destination.id)")
                #expect(try arrival.transportNumber(id: 5) == nil)
                #expect(try arrival.transportNumber(id: 3) == nil)
            }
            let header = try RTPPacket.parse(try #require(viewer.rtp.first).clear).header
            #expect(header.headerExtension == RTPHeaderExtension(profile: 0xBEDE, data: [0, 0, 0, 0]))
        }
        // The payloads are the same for all: only the slot differs.
        for (a, b) in zip(video, plain.video(sender)) {
            #expect(a.clear[20...] == b.clear[20...] && a.clear[0..<16] == b.clear[0..<16])
        }
    }

    @Test("transport feedback about the numbers received: a delay-based estimate, the receiver's target, then a probe")
    func transportFeedback() throws {
        let unit = try Self.keyFrame()
        let sender = try Self.sender()
        let viewer = try Viewer(
            sender,
            id: "twcc",
            options: DestinationOptions(
                retransmission: .rtx,
                transportWideSequenceNumberID: 5,
                transportWideAudio: true
            )
        )
        _ = sender.pollFeedback(now: MonotonicClock.now())
        try sender.send(video: unit)
        try Self.drive(sender, [viewer], audioFrom: 0)
        let count = viewer.rtp.count
        #expect(viewer.destination.feedbackStatistics.congestion?.feedbackMessages == 0)
        #expect(viewer.destination.feedbackStatistics.bitrateEstimate == nil)

        // What the receiver would send: every number it got, at the times a link would spread
        // them over, 600 ms (rounded to 250 µs by the builder): the acknowledged rate's first
        // 500 ms window fills, and only then may a probe go (`SendSideBandwidthEstimator.mayProbe`).
        let first = try #require(viewer.rtp.first).timeUs
        let spacing = 600_000 / Int64(max(count - 1, 1))
        let statuses = try viewer.rtp.enumerated().map { index, arrival in
            RTCPTransportFeedback.PacketStatus(
                sequenceNumber: try #require(try arrival.transportNumber(id: 5)),
                arrivalTime: first + Int64(index) * spacing
            )
        }
        let feedback = try RTCPTransportFeedback(
            senderSSRC: 0x5EED_0001,
            mediaSSRC: sender.video.ssrc,
            feedbackPacketCount: 0,
            packets: statuses
        )
        #expect(feedback.baseSequenceNumber == 1 && Int(feedback.packetStatusCount) == count)
        let outbound = try SRTPSession(keys: viewer.destination.keys, direction: .outbound)
        let datagram = try outbound.protectRTCP(try RTCPPacket.serialize([.transportFeedback(feedback)]))
        let target = try #require(viewer.senderAddress)
        #expect(datagram.withUnsafeBytes { viewer.socket.send($0, to: target) })
        #expect(try #require(viewer.destination.sockets.readable).rtp.waitReadable(milliseconds: 500))
        _ = sender.pollFeedback(now: MonotonicClock.now())

        let statistics = viewer.destination.feedbackStatistics
        #expect(statistics.rtcpPackets == 1 && statistics.rtcpBad == 0)
        let congestion = try #require(statistics.congestion)
        #expect(congestion.feedbackMessages == 1)
        #expect(congestion.reportedLost == 0 && congestion.unknownPackets == 0)
        let delayBased = try #require(congestion.delayBasedBitrate)
        #expect((150_000...4_000_000).contains(delayBased))
        #expect(congestion.delayState != nil && congestion.thresholdMilliseconds != nil)
        // No RR yet: the loss-based part is at its start, and the delay-based one caps it.
        #expect(statistics.bitrateEstimate == min(Self.start, delayBased))

        // The estimate is under 95 % of the 4 Mbit/s ceiling and the receiver has RTX: a probe,
        // RTX copies of the newest video packets at twice the estimate, numbered on.
        #expect(congestion.probesSent == 1)
        try Self.drive(sender, [viewer])
        let probe = viewer.rtp[count...]
        #expect(probe.count >= sender.configuration.congestion.probeMinimumPackets)
        #expect(probe.allSatisfy { $0.ssrc == sender.videoRTXSSRC && $0.payloadType == 99 })
        #expect(try probe.map { try $0.transportNumber(id: 5) } == (0..<probe.count).map { UInt16(count + 1 + $0) })
        #expect(viewer.destination.congestion.activeProbe == nil, "the probe ended with its last packet")
    }

    @Test("pacing off, transport-wide on: the whole picture leaves in send(video:), numbered")
    func unpaced() throws {
        let unit = try Self.keyFrame()
        let sender = try Self.sender(pacing: false)
        let viewer = try Viewer(
            sender,
            id: "twcc",
            options: DestinationOptions(retransmission: .rtx, transportWideSequenceNumberID: 7),
            audio: false
        )
        #expect(viewer.destination.congestion.pacer == nil)
        let expected = try Self.packetCount(unit, sender: sender)
        try sender.send(video: unit)
        #expect(viewer.destination.statistics.rtpPackets == expected, "all of it, before any sendPaced")
        #expect(!sender.hasPacedBacklog && sender.nextPacedDeadline == nil)
        try viewer.drain(milliseconds: 200)
        let video = viewer.video(sender)
        #expect(video.count == expected)
        #expect(try video.map { try $0.transportNumber(id: 7) } == (0..<expected).map { UInt16($0 + 1) })
        for (index, arrival) in video.enumerated() {
            #expect(Array(arrival.clear[12..<20]) == Self.extensionBytes(id: 7, number: UInt16(index + 1)))
        }
        #expect(viewer.destination.feedbackStatistics.congestion?.pacingBitrate == nil)
    }

    @Test("a new destination's pacer runs at the start rate before the first pollFeedback")
    func pacerStartsAtTheStartRate() throws {
        let sender = try Self.sender()
        let viewer = try Viewer(
            sender,
            id: "twcc",
            options: DestinationOptions(retransmission: .rtx, transportWideSequenceNumberID: 5)
        )
        #expect(viewer.destination.congestion.pacer?.targetRate == Self.start)
        #expect(viewer.destination.feedbackStatistics.congestion?.pacingBitrate == Self.pacingRate)
        _ = sender.pollFeedback(now: MonotonicClock.now())
        #expect(viewer.destination.congestion.pacer?.targetRate == Self.start)
    }

    @Test(
        "the encoder is held while a followed receiver's pacer backlog exceeds the limit, and again free once it drains"
    )
    func backlogHoldsTheEncoder() throws {
        let unit = try Self.keyFrame()
        // The default second: a 640x360 key frame's remainder (≈ 20 kB at 4.5 Mbit/s, ≈ 40 ms) is far below it.
        let relaxed = try Self.sender()
        let calm = try Viewer(
            relaxed,
            id: "calm",
            options: DestinationOptions(retransmission: .rtx, transportWideSequenceNumberID: 5)
        )
        _ = relaxed.pollFeedback(now: MonotonicClock.now())
        try relaxed.send(video: unit)
        #expect(relaxed.hasPacedBacklog)
        #expect(!relaxed.pacedBacklogHoldsVideo())
        _ = try Self.drive(relaxed, [calm], audioFrom: 1)

        // A 10 ms limit: the same remainder holds the next picture until the pacer has sent it.
        let strict = try Self.sender(maximumPacedBacklogUs: 10_000)
        let viewer = try Viewer(
            strict,
            id: "held",
            options: DestinationOptions(retransmission: .rtx, transportWideSequenceNumberID: 5)
        )
        _ = strict.pollFeedback(now: MonotonicClock.now())
        try strict.send(video: unit)
        let pacer = try #require(viewer.destination.congestion.pacer)
        let bytes = pacer.queuedBytes(.video)
        #expect(bytes * 8_000_000 / Self.pacingRate > 10_000, "\(bytes) bytes wait")
        #expect(strict.pacedBacklogHoldsVideo())
        _ = try Self.drive(strict, [viewer], audioFrom: 1)
        #expect(!strict.hasPacedBacklog)
        #expect(!strict.pacedBacklogHoldsVideo())
        // Off (0): never held.
        let never = try Self.sender(maximumPacedBacklogUs: 0)
        _ = try Viewer(
            never,
            id: "never",
            options: DestinationOptions(retransmission: .rtx, transportWideSequenceNumberID: 5)
        )
        _ = never.pollFeedback(now: MonotonicClock.now())
        try never.send(video: unit)
        #expect(never.hasPacedBacklog && !never.pacedBacklogHoldsVideo())
    }

    /// Sends `viewer`'s transport feedback for `arrivals` (transport number, arrival time µs)
    /// the way a receiver would, and lets the sender read it.
    static func feedback(
        _ arrivals: [(UInt16, Int64)],
        count: UInt8,
        from viewer: Viewer,
        to sender: MediaSender,
        outbound: SRTPSession
    ) throws {
        let feedback = try RTCPTransportFeedback(
            senderSSRC: 0x5EED_0001,
            mediaSSRC: sender.video.ssrc,
            feedbackPacketCount: count,
            packets: arrivals.map { RTCPTransportFeedback.PacketStatus(sequenceNumber: $0.0, arrivalTime: $0.1) }
        )
        let datagram = try outbound.protectRTCP(try RTCPPacket.serialize([.transportFeedback(feedback)]))
        let target = try #require(viewer.senderAddress)
        #expect(datagram.withUnsafeBytes { viewer.socket.send($0, to: target) })
        #expect(try #require(viewer.destination.sockets.readable).rtp.waitReadable(milliseconds: 500))
        _ = sender.pollFeedback(now: MonotonicClock.now())
    }

    @Test("after a standing queue: paced at the allowed rate, the encoder's vote lowered by the backlog until it left")
    func drainPacingAndPushback() throws {
        let unit = try Self.keyFrame()
        let sender = try Self.sender()
        let viewer = try Viewer(
            sender,
            id: "drained",
            options: DestinationOptions(
                retransmission: .rtx,
                transportWideSequenceNumberID: 5,
                transportWideAudio: true
            )
        )
        let outbound = try SRTPSession(keys: viewer.destination.keys, direction: .outbound)
        let congestion = viewer.destination.congestion
        _ = sender.pollFeedback(now: MonotonicClock.now())
        for _ in 0..<5 { try sender.send(video: unit) }
        try Self.drive(sender, [viewer], milliseconds: 300, audioFrom: 0)
        let numbers = try viewer.rtp.map { try #require(try $0.transportNumber(id: 5)) }
        #expect(numbers.count >= 80)
        // The receiver's clock: one packet every 8 ms (about 1 Mbit/s); the second half 400 ms
        // later than that, as if it had waited in a queue the first half did not meet.
        let base: Int64 = 5_000_000
        let half = numbers.count / 2
        let first = numbers[..<half].enumerated().map { ($0.element, base + Int64($0.offset) * 8_000) }
        let second = numbers[half...].enumerated().map {
            ($0.element, base + Int64(half + $0.offset) * 8_000 + 400_000)
        }
        try Self.feedback(first, count: 0, from: viewer, to: sender, outbound: outbound)
        #expect(!congestion.pacesAtAllowedRate)
        // The first feedback starts a probe; let it go (a probe sets the pacer's rate itself).
        try Self.drive(sender, [viewer])
        #expect(congestion.activeProbe == nil)
        let sent = viewer.rtp.count
        try Self.feedback(second, count: 1, from: viewer, to: sender, outbound: outbound)
        let drainCap = try #require(congestion.delayBased.drainCap, "a 400 ms standing queue")
        #expect(congestion.pacesAtAllowedRate)
        let allowed = try #require(viewer.destination.allowedBitrate)
        #expect(allowed <= max(drainCap, 150_000))
        // The pacer runs at the allowed rate itself, not 2.5 × it.
        let minimumRate = try #require(congestion.pacer?.configuration.minimumRate)
        let pacingRate = try #require(congestion.pacer?.pacingRate)
        #expect(abs(pacingRate - max(allowed, minimumRate)) <= max(allowed, minimumRate) / 100)

        // A picture into the full path: most of it waits, and the encoder is asked for less.
        try sender.send(video: unit)
        let backlog = congestion.pacedBacklogBytes
        #expect(backlog * 8_000_000 / pacingRate > 100_000, "\(backlog) bytes wait")
        _ = sender.pollFeedback(now: MonotonicClock.now())
        let share = sender.configuration.congestion.videoTarget(forWireRate: allowed)
        let pushed = max(share - backlog * 8, share / 4)
        #expect(sender.vote(of: viewer.destination, allowed: allowed) == pushed)
        #expect(
            sender.targetBitrate == pushed && pushed < share && pushed > 150_000,
            "target \(sender.targetBitrate), share \(share), backlog \(backlog) bytes, allowed \(allowed)"
        )

        // Once the backlog has left, the vote is the whole share again; and once feedback shows
        // the queue gone, the pacer is back at 2.5 × (after a drain of over 500 ms, the estimate
        // resumes at 0.9 × the acknowledged rate).
        try Self.drive(sender, [viewer], milliseconds: 3000)
        #expect(congestion.pacedBacklogBytes == 0)
        _ = sender.pollFeedback(now: MonotonicClock.now())
        #expect(sender.vote(of: viewer.destination, allowed: allowed) == share)
        // Arrivals as they happened on loopback, on the receiver's clock: no queue at all.
        let start = try #require(viewer.rtp.first?.timeUs)
        let drained = try viewer.rtp[sent...].map {
            (try #require(try $0.transportNumber(id: 5)), base + $0.timeUs - start)
        }
        #expect(!drained.isEmpty)
        try Self.feedback(drained, count: 2, from: viewer, to: sender, outbound: outbound)
        #expect(congestion.delayBased.drainCap == nil)
        #expect(!congestion.pacesAtAllowedRate)
        #expect((congestion.pacer?.pacingRate ?? 0) > 2 * (viewer.destination.allowedBitrate ?? 0))
    }
}
