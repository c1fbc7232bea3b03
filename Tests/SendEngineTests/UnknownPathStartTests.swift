import Foundation
import Media
import Testing

@testable import CongestionControl
@testable import SendEngine

/// D33 (Docs/congestion.md): a receiver that agreed on transport feedback in an offer/answer
/// starts at 300 kbit/s, votes that start for the room's encoder from the moment it is added
/// (so the key frame it joins on is made for it) until it reports or two seconds after its first
/// packet, and probes first at three times it.
@Suite struct UnknownPathStartTests {
    typealias Viewer = PacedSendTests.Viewer

    @Test func aTransportWideNewcomerVotesItsStartUntilTwoSecondsAfterItsFirstPacket() throws {
        let sender = try PacedSendTests.sender(unknownPathStart: 300_000)
        #expect(sender.targetBitrate == PacedSendTests.start)
        // A receiver of our SDP file may send transport feedback or only RR: no start vote, it
        // starts at the room's rate.
        let plain = try Viewer(
            sender,
            id: "sdp",
            options: DestinationOptions(retransmission: .rtx, transportWideSequenceNumberID: 5)
        )
        #expect(sender.retarget(at: MonotonicClock.now()) == nil)
        #expect(plain.destination.congestion.targetBitrate == PacedSendTests.start)
        #expect(plain.destination.congestion.startVote(at: MonotonicClock.now()) == nil)

        let newcomer = try Viewer(
            sender,
            id: "twcc",
            options: DestinationOptions(
                retransmission: .rtx,
                transportWideSequenceNumberID: 5,
                agreedOnTransportFeedback: true
            )
        )
        #expect(newcomer.destination.congestion.targetBitrate == 300_000)
        #expect(sender.retarget(at: MonotonicClock.now()) == 300_000)
        #expect(sender.targetBitrate == 300_000)

        // Its first packets: the vote holds for two seconds after them, then lapses.
        try sender.send(video: try PacedSendTests.keyFrame())
        try PacedSendTests.drive(sender, [plain, newcomer])
        let first = try #require(newcomer.video(sender).first).timeUs
        let firstNs = UInt64(first) * 1000
        #expect(sender.retarget(at: firstNs + 1_900_000_000) == nil)
        #expect(newcomer.destination.congestion.startVote(at: firstNs + 1_900_000_000) == 300_000)
        #expect(newcomer.destination.congestion.startVote(at: firstNs + 2_100_000_000) == nil)
        #expect(sender.retarget(at: firstNs + 2_100_000_000) == PacedSendTests.start)
    }

    /// The start is the lower of 300 kbit/s and the configured start, never under the minimum;
    /// nil keeps the configured start.
    @Test(arguments: [
        (unknown: 300_000 as Int?, start: 1_800_000, minimum: 150_000, expected: 300_000),
        (unknown: 300_000, start: 200_000, minimum: 150_000, expected: 200_000),
        (unknown: 300_000, start: 1_800_000, minimum: 500_000, expected: 500_000),
        (unknown: nil, start: 1_800_000, minimum: 150_000, expected: 1_800_000),
    ])
    func startRate(_ row: (unknown: Int?, start: Int, minimum: Int, expected: Int)) throws {
        var configuration = CongestionConfiguration.enabled
        configuration.unknownPathStart = row.unknown
        let bitrate = CongestionConfiguration.LossBased(minimum: row.minimum, maximum: 4_000_000, start: row.start)
        let transportWide = try SendSideBandwidthEstimator(
            configuration: configuration,
            bitrate: bitrate,
            transportWideID: 5,
            stampsAudio: false,
            pathUnknown: true
        )
        #expect(transportWide.targetBitrate == row.expected)
        #expect(transportWide.startVote(at: 0) == (row.unknown == nil ? nil : row.expected))
        let plain = try SendSideBandwidthEstimator(
            configuration: configuration,
            bitrate: bitrate,
            transportWideID: nil,
            stampsAudio: false
        )
        #expect(plain.targetBitrate == row.start && plain.startVote(at: 0) == nil)
        // Agreed on feedback but without the number (same-SSRC resends): no start of its own.
        let unnumbered = try SendSideBandwidthEstimator(
            configuration: configuration,
            bitrate: bitrate,
            transportWideID: nil,
            stampsAudio: false,
            pathUnknown: true
        )
        #expect(unnumbered.targetBitrate == row.start && unnumbered.startVote(at: 0) == nil)
    }
}

extension UnknownPathStartTests {
    /// The first probe goes at 3× an unknown path's start (libwebrtc's first exponential
    /// probe), later ones at twice the estimate.
    @Test func theFirstProbeFromAnUnknownStartIsThreeTimesIt() {
        var first = ProbeController(maximum: 4_000_000)
        first.firstScale = 3
        #expect(first.probe(at: 0, estimate: 300_000)?.rate == 900_000)
        first.record(result: 880_000, cluster: 1, at: 50_000)
        #expect(first.probe(at: 50_000, estimate: 880_000)?.rate == 1_760_000)
        var known = ProbeController(maximum: 4_000_000)
        #expect(known.probe(at: 0, estimate: 300_000)?.rate == 600_000)
    }
}
