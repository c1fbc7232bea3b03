import Foundation
import Media
import RTP
import SRTP
import SendEngine
import TestSupport
import Testing

/// The retransmission rate limit of a receiver that never reported (no RR, REMB or transport
/// feedback): a WebRTC viewer NACKing everything once made the publisher send 13–15 times its
/// packets. Now such a receiver gets at most half the video sent over the limiter's 500 ms
/// window (`FeedbackConfiguration.unreportedRetransmissionShare`); one that reported keeps its
/// allowed rate as the limit.
@Suite("Retransmission rate without reports", .serialized)
struct RetransmissionRateTests {
    typealias Pair = FeedbackHandlingTests.Pair

    /// A lower bound on the average size of the resent packets, bytes: a P frame of the clip is
    /// five or so full FU-A fragments (≈ 1180 bytes) and one shorter one.
    static let smallestAverageResend = 700

    /// Streams `frames` of the clip at 30 fps (so the sender's window holds about 15), then NACKs
    /// every video packet sent since the pair was set up, at once. Returns the clear video bytes
    /// sent within the last 550 ms before the NACK (an upper bound on the sender's window) and
    /// how many numbers were NACKed.
    /// `session`: the SRTCP session the NACK is protected with, when the test sent RTCP before
    /// (a fresh one would repeat its SRTCP index, which the sender's replay check refuses).
    static func streamThenNACKEverything(
        _ pair: Pair,
        frames: Int,
        session: SRTPSession? = nil
    ) throws -> (windowBytes: Int, nacked: Int) {
        let first = pair.sender.video.nextSequenceNumber
        var sent: [(at: UInt64, bytes: Int)] = []
        let start = MonotonicClock.now()
        for index in 0..<frames {
            let due = start + UInt64(index) * 33_333_333
            while MonotonicClock.now() < due { _ = pair.poll(afterMilliseconds: 2) }
            let unit = pair.units[pair.nextUnit % pair.units.count]
            try pair.sendFrames(1)
            // Payload plus RTP and FU-A headers, generously.
            sent.append((MonotonicClock.now(), unit.data.count + unit.data.count / 20 + 64))
        }
        let end = pair.sender.video.nextSequenceNumber
        let numbers = (0..<Int(end &- first)).map { first &+ UInt16($0) }
        let nack = RTCPGenericNACK(senderSSRC: 0xBAD0_0020, mediaSSRC: pair.videoSSRC, lostSequenceNumbers: numbers)
        let now = MonotonicClock.now()
        let windowBytes = sent.filter { now - $0.at <= 550_000_000 }.reduce(0) { $0 + $1.bytes }
        let packets: [RTCPPacket] = [.genericNACK(nack)]
        if let session {
            pair.receiver.sendRaw(try session.protectRTCP(try RTCPPacket.serialize(packets)))
        } else {
            pair.receiver.sendRaw(try pair.forged(packets))
        }
        _ = pair.poll()
        return (windowBytes, numbers.count)
    }

    @Test("a receiver that never reported gets at most half the video of the window resent")
    func unreportedReceiverGetsAShareOfTheMediaRate() throws {
        let pair = try Pair(periodicReports: false)
        let (windowBytes, nacked) = try Self.streamThenNACKEverything(pair, frames: 45)
        let statistics = pair.destination.feedbackStatistics
        let nack = statistics.nack
        print("unreported: \(nacked) NACKed, window ≤ \(windowBytes) bytes; nack \(nack)")
        #expect(statistics.bitrateEstimate == nil, "the receiver reported: \(statistics)")
        #expect(nack.asked == nacked && nack.notFound == 0, "\(nack)")
        #expect(nack.overRate > 0, "no resend refused: \(nack)")
        #expect(nack.sent >= 1, "\(nack)")
        // Half the window's bytes, in packets of at least the smallest average size.
        let bound = windowBytes / 2 / Self.smallestAverageResend + 1
        #expect(nack.sent <= bound, "\(nack.sent) resent, at most \(bound) (window \(windowBytes) bytes)")
        #expect(nack.sent + nack.overRate == nacked, "\(nack)")
    }

    /// A receiver whose REMB allows 200 kbit/s: its allowed rate is the limit (12 500 bytes in
    /// half a second, fewer than the share of the media would give), as before.
    @Test("a receiver that reported keeps its allowed rate as the limit")
    func reportedReceiverKeepsItsAllowedRate() throws {
        let pair = try Pair(periodicReports: false)
        let report = RTCPReceiverReport(
            ssrc: 0xBAD0_0020,
            reports: [RTCPReceptionReport(ssrc: pair.videoSSRC, fractionLost: 0, cumulativeLost: 0, jitter: 0)]
        )
        let remb = RTCPReceiverEstimatedMaximumBitrate(
            senderSSRC: 0xBAD0_0020,
            bitrate: 200_000,
            ssrcs: [pair.videoSSRC]
        )
        let session = try SRTPSession(keys: pair.destination.keys, direction: .outbound)
        pair.receiver.sendRaw(
            try session.protectRTCP(
                try RTCPPacket.serialize([.receiverReport(report), .receiverEstimatedMaximumBitrate(remb)])
            )
        )
        _ = pair.poll()
        #expect(pair.destination.feedbackStatistics.bitrateEstimate == 200_000)
        let (windowBytes, nacked) = try Self.streamThenNACKEverything(pair, frames: 45, session: session)
        let nack = pair.destination.feedbackStatistics.nack
        print("reported (REMB 200 kbit/s): \(nacked) NACKed, window ≤ \(windowBytes) bytes; nack \(nack)")
        #expect(nack.asked == nacked && nack.overRate > 0 && nack.sent >= 1, "\(nack)")
        // 200 kbit/s over 500 ms: 12 500 bytes.
        let bound = 12_500 / Self.smallestAverageResend + 1
        #expect(nack.sent <= bound, "\(nack.sent) resent, at most \(bound) at 200 kbit/s")
        // The share of the media would have allowed more: the allowed rate, not the share, ruled.
        #expect(windowBytes / 2 > 12_500 * 2, "the clip sent too little to tell the rules apart: \(windowBytes)")
    }
}
