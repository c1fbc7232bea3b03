import Foundation
import Glibc
import RTP
import SRTP
import Transport

/// A small receiver of one `MediaSender` destination's video that talks back: it decrypts SRTP
/// with the destination's keys, tracks sequence gaps, NACKs them (RFC 4585 §6.2.1) until they
/// arrive or are given up, sends receiver reports (with LSR/DLSR, so the sender measures RTT)
/// and, on demand, PLI and FIR, all as SRTCP with the same keys to the address the sender's
/// reports came from. Packets go through a small reordering buffer into `H264Depacketizer`.
///
/// Its sockets exist from `init` (so a destination can be pointed at them); the keys come with
/// `setKeys` once the destination that made them exists. Single-threaded: the test calls
/// `service(milliseconds:)` between its own steps.
public final class FeedbackTestReceiver {
    public struct Configuration {
        public var rtcpMux: Bool
        public var videoPayloadType: UInt8 = 96
        /// The RTX payload type to restore (RFC 4588); nil: RTX is not expected.
        public var rtxPayloadType: UInt8?
        public var sendsNACK = true
        /// How long after a NACK the same number is asked again, and how long a gap is waited
        /// for before the packets behind it are handed on without it.
        public var nackRetryMilliseconds = 30
        public var giveUpMilliseconds = 500
        public var reportMilliseconds = 100
        public var ssrc: UInt32 = 0x5EED_0001

        public init(rtcpMux: Bool) {
            self.rtcpMux = rtcpMux
        }
    }

    public struct Report: Sendable, Equatable, CustomStringConvertible {
        public var packets = 0
        public var duplicates = 0
        /// Distinct sequence numbers seen missing (a gap behind a newer packet).
        public var lost = 0
        /// Of those, arrived later (resent or merely late).
        public var recovered = 0
        /// Of those, never arrived before being given up.
        public var unrecovered = 0
        public var rtxPackets = 0
        public var nackedNumbers = 0
        public var nackPackets = 0
        public var receiverReports = 0
        public var senderReports = 0
        public var pictureLossIndications = 0
        public var srtpFailures = 0
        public var accessUnits = 0
        public var incompleteAccessUnits = 0
        /// Access units holding an IDR slice (NAL type 5).
        public var keyFrames = 0

        public var recoveredFraction: Double { lost == 0 ? 1 : Double(recovered) / Double(lost) }

        public var description: String {
            "packets \(packets), lost \(lost), recovered \(recovered), unrecovered \(unrecovered), rtx \(rtxPackets), "
                + "duplicates \(duplicates), NACKed \(nackedNumbers) in \(nackPackets) NACKs, "
                + "access units \(accessUnits) (incomplete \(incompleteAccessUnits), key \(keyFrames))"
        }
    }

    private struct Gap {
        var detected: UInt64
        var lastNACK: UInt64?
    }

    public let configuration: Configuration
    public let rtp: UDPSocket
    public let rtcp: UDPSocket
    public private(set) var report = Report()
    /// Where the sender's RTP and RTCP came from (RTCP is where feedback goes).
    public private(set) var senderRTPAddress: UDPAddress?
    public private(set) var senderRTCPAddress: UDPAddress?
    public private(set) var mediaSSRC: UInt32?
    private var inbound: SRTPSession?
    private var outbound: SRTPSession?
    private var depacketizer = H264Depacketizer()
    private var highest: Int?
    private var nextToDeliver: Int?
    private var waiting: [Int: RTPPacket] = [:]
    private var seen: Set<Int> = []
    private var gaps: [Int: Gap] = [:]
    private var lastSenderReport: (middle: UInt32, arrival: UInt64)?
    private var lastReport: UInt64 = 0
    private var expectedAtLastReport = 0
    private var receivedAtLastReport = 0
    /// Packets that arrived on the media stream itself. An RTX repair arrives on its own SSRC
    /// (RFC 4588 §4), so it does not count as received in the media stream's report: the
    /// fraction lost is the loss before repair, as libwebrtc reports it (it leaves recovered
    /// packets out of the receive statistics).
    private var receivedOnMediaStream = 0
    private var jitter = 0.0
    private var lastTransit: Double?
    private var firSequenceNumber: UInt8 = 0
    private var buffer = [UInt8](repeating: 0, count: 65_536)

    /// Binds loopback sockets: under rtcp-mux one, otherwise an even port and the next one.
    public init(configuration: Configuration) throws {
        self.configuration = configuration
        lastReport = Self.now()
        if configuration.rtcpMux {
            rtp = try UDPSocket(bindingTo: UDPAddress(host: "127.0.0.1", port: 0))
            rtcp = rtp
            return
        }
        for _ in 0..<64 {
            let first = try UDPSocket(bindingTo: UDPAddress(host: "127.0.0.1", port: 0))
            let port = first.localAddress.port
            guard port % 2 == 0, let second = try? UDPSocket(bindingTo: UDPAddress(host: "127.0.0.1", port: port + 1))
            else { continue }
            rtp = first
            rtcp = second
            return
        }
        throw InteropFailure("no free even/odd port pair on 127.0.0.1")
    }

    public var videoPort: Int { rtp.localAddress.port }

    /// The destination's keys: SRTP in, SRTCP out (what a receiver of our one-key SDP file does).
    public func setKeys(_ keys: SRTPKeyMaterial) throws {
        inbound = try SRTPSession(keys: keys, direction: .inbound)
        outbound = try SRTPSession(keys: keys, direction: .outbound)
    }

    /// Receives and acts for `milliseconds`: packets in, NACKs and reports out on their timers.
    public func service(milliseconds: Int) {
        let deadline = Self.now() + UInt64(milliseconds) * 1_000_000
        var descriptors = [pollfd(fd: rtp.descriptor, events: Int16(POLLIN), revents: 0)]
        if rtcp !== rtp { descriptors.append(pollfd(fd: rtcp.descriptor, events: Int16(POLLIN), revents: 0)) }
        repeat {
            _ = poll(&descriptors, nfds_t(descriptors.count), 1)
            readAll(rtp)
            if rtcp !== rtp { readAll(rtcp) }
            runTimers(now: Self.now())
        } while Self.now() < deadline
    }

    /// Gives up on every gap still open and hands everything on: the final report.
    public func finish() -> Report {
        deliver(now: .max)
        if let unit = depacketizer.flush() { count(unit) }
        return report
    }

    /// Sends one PLI (RFC 4585 §6.3.1) for the video stream.
    public func sendPictureLossIndication() {
        guard let ssrc = mediaSSRC else { return }
        report.pictureLossIndications += 1
        sendCompound([
            .pictureLossIndication(RTCPPictureLossIndication(senderSSRC: configuration.ssrc, mediaSSRC: ssrc))
        ])
    }

    /// Sends one FIR (RFC 5104 §4.3.1) with a new command sequence number, or the last one again.
    public func sendFullIntraRequest(repeatLast: Bool = false) {
        guard let ssrc = mediaSSRC else { return }
        if !repeatLast { firSequenceNumber &+= 1 }
        let entry = RTCPFullIntraRequest.Entry(ssrc: ssrc, sequenceNumber: firSequenceNumber)
        sendCompound([.fullIntraRequest(RTCPFullIntraRequest(senderSSRC: configuration.ssrc, entries: [entry]))])
    }

    /// Sends `bytes` as they are (garbage, clear RTCP, forged SRTCP) to the sender's RTCP address.
    public func sendRaw(_ bytes: [UInt8]) {
        guard let target = senderRTCPAddress else { return }
        _ = bytes.withUnsafeBytes { rtcp.send($0, to: target) }
    }

    /// SRTCP-protects `packets` (after an RR and SDES, as RFC 3550 §6.1 wants) and sends them.
    public func sendCompound(_ packets: [RTCPPacket]) {
        guard let target = senderRTCPAddress,
            let clear = try? RTCPPacket.serialize([.receiverReport(receiverReport(now: Self.now()))] + sdes + packets),
            let protected = try? outbound?.protectRTCP(clear)
        else { return }
        _ = protected.withUnsafeBytes { rtcp.send($0, to: target) }
    }

    // MARK: Receiving

    private func readAll(_ socket: UDPSocket) {
        while let (length, from) = buffer.withUnsafeMutableBytes({ socket.receive(into: $0) }) {
            let bytes = Array(buffer[0..<length])
            if length >= 8, RTCPPacketType.range.contains(bytes[1]) {
                senderRTCPAddress = from
                receiveRTCP(bytes)
            } else {
                senderRTPAddress = from
                receiveRTP(bytes)
            }
        }
    }

    private func receiveRTCP(_ bytes: [UInt8]) {
        guard let clear = try? inbound?.unprotectRTCP(bytes), let packets = try? RTCPPacket.parseCompound(clear) else {
            report.srtpFailures += 1
            return
        }
        for case .senderReport(let sr) in packets {
            report.senderReports += 1
            lastSenderReport = (sr.ntpTimestamp.middle32, Self.now())
        }
    }

    private func receiveRTP(_ bytes: [UInt8]) {
        guard let clear = try? inbound?.unprotect(bytes), var packet = try? RTPPacket.parse(clear) else {
            report.srtpFailures += 1
            return
        }
        let arrival = Self.now()
        var repaired = false
        if let rtx = configuration.rtxPayloadType, packet.header.payloadType == rtx {
            guard let ssrc = mediaSSRC,
                let original = try? RTPRetransmission.original(
                    fromRTX: clear,
                    originalSSRC: ssrc,
                    originalPayloadType: configuration.videoPayloadType
                ),
                let restored = try? RTPPacket.parse(original)
            else { return }
            report.rtxPackets += 1
            packet = restored
            repaired = true
        } else {
            guard packet.header.payloadType == configuration.videoPayloadType else { return }
            mediaSSRC = packet.header.ssrc
            updateJitter(timestamp: packet.header.timestamp, arrival: arrival)
        }
        accept(packet, repaired: repaired, now: arrival)
    }

    private func accept(_ packet: RTPPacket, repaired: Bool, now: UInt64) {
        report.packets += 1
        let number = extend(packet.header.sequenceNumber)
        guard !seen.contains(number), number >= (nextToDeliver ?? number) else {
            report.duplicates += 1
            return
        }
        seen.insert(number)
        if !repaired { receivedOnMediaStream += 1 }
        if gaps.removeValue(forKey: number) != nil { report.recovered += 1 }
        if let highest, number > highest + 1 {
            for missing in (highest + 1)..<number {
                gaps[missing] = Gap(detected: now)
                report.lost += 1
            }
        }
        highest = max(highest ?? number, number)
        if nextToDeliver == nil { nextToDeliver = number }
        waiting[number] = packet
        deliver(now: now)
    }

    /// RFC 3550 A.1: the 16-bit number extended by the wraps, relative to the highest so far.
    private func extend(_ sequenceNumber: UInt16) -> Int {
        guard let highest else { return Int(sequenceNumber) }
        return highest + Int(Int16(bitPattern: sequenceNumber &- UInt16(truncatingIfNeeded: highest)))
    }

    /// Hands packets on in order; a gap older than the give-up time is skipped.
    private func deliver(now: UInt64) {
        while var next = nextToDeliver, let highest, next <= highest {
            if let packet = waiting.removeValue(forKey: next) {
                let units =
                    (try? depacketizer.push(
                        payload: packet.payload[...],
                        sequenceNumber: packet.header.sequenceNumber,
                        timestamp: packet.header.timestamp,
                        marker: packet.header.marker
                    )) ?? []
                units.forEach(count)
            } else if let gap = gaps[next] {
                let waited = now >= gap.detected ? now - gap.detected : 0
                guard waited >= UInt64(configuration.giveUpMilliseconds) * 1_000_000 else { return }
                gaps.removeValue(forKey: next)
                report.unrecovered += 1
            } else if !seen.contains(next) {
                return
            }
            next += 1
            nextToDeliver = next
        }
    }

    private func count(_ unit: H264AccessUnit) {
        report.accessUnits += 1
        if !unit.isComplete { report.incompleteAccessUnits += 1 }
        if unit.nalUnits.contains(where: { $0.first.map { $0 & 0x1F } == 5 }) { report.keyFrames += 1 }
    }

    /// RFC 3550 A.8 interarrival jitter, in 90 kHz units.
    private func updateJitter(timestamp: UInt32, arrival: UInt64) {
        let transit = Double(arrival) / 1e9 * 90_000 - Double(timestamp)
        if let last = lastTransit { jitter += (abs(transit - last) - jitter) / 16 }
        lastTransit = transit
    }

    // MARK: Sending

    private func runTimers(now: UInt64) {
        deliver(now: now)
        let retry = UInt64(configuration.nackRetryMilliseconds) * 1_000_000
        if configuration.sendsNACK, let ssrc = mediaSSRC {
            var due: [UInt16] = []
            for (number, gap) in gaps.sorted(by: { $0.key < $1.key })
            where gap.lastNACK.map({ now - $0 >= retry }) ?? true {
                due.append(UInt16(truncatingIfNeeded: number))
                gaps[number]?.lastNACK = now
            }
            if !due.isEmpty {
                report.nackedNumbers += due.count
                report.nackPackets += 1
                sendCompound([
                    .genericNACK(
                        RTCPGenericNACK(senderSSRC: configuration.ssrc, mediaSSRC: ssrc, lostSequenceNumbers: due)
                    )
                ])
                lastReport = now
            }
        }
        if mediaSSRC != nil, now - lastReport >= UInt64(configuration.reportMilliseconds) * 1_000_000 {
            report.receiverReports += 1
            sendCompound([])
            lastReport = now
        }
    }

    private var sdes: [RTCPPacket] {
        [.sourceDescription(RTCPSourceDescription(ssrc: configuration.ssrc, cname: "feedback-test-receiver"))]
    }

    /// RFC 3550 §6.4.1 / A.3: loss since the previous report, cumulative loss, jitter, LSR/DLSR.
    private func receiverReport(now: UInt64) -> RTCPReceiverReport {
        guard let ssrc = mediaSSRC, let highest, let first = seen.min() else {
            return RTCPReceiverReport(ssrc: configuration.ssrc)
        }
        let expected = highest - first + 1
        let received = receivedOnMediaStream
        let expectedInterval = expected - expectedAtLastReport
        let lostInterval = expectedInterval - (received - receivedAtLastReport)
        expectedAtLastReport = expected
        receivedAtLastReport = received
        let fraction =
            expectedInterval <= 0 || lostInterval <= 0 ? 0 : UInt8(min(255, (lostInterval << 8) / expectedInterval))
        var block = RTCPReceptionReport(
            ssrc: ssrc,
            fractionLost: fraction,
            cumulativeLost: Int32(clamping: expected - received),
            extendedHighestSequenceNumber: UInt32(truncatingIfNeeded: highest),
            jitter: UInt32(jitter)
        )
        if let sr = lastSenderReport {
            block.lastSenderReport = sr.middle
            block.delaySinceLastSenderReport = UInt32(truncatingIfNeeded: (now - sr.arrival) * 65_536 / 1_000_000_000)
        }
        return RTCPReceiverReport(ssrc: configuration.ssrc, reports: [block])
    }

    private static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }
}
