import SendEngine
import TestSupport
import Testing

/// Real access units through a relay that loses 5% each way: with NACK the receiver gets
/// (nearly) everything back, without it the damage stays. Serialized: each run is paced in
/// real time and they would only slow each other down.
@Suite("Loss recovery through a lossy relay", .serialized)
struct LossRecoveryTests {
    static let loss = LossyUDPRelay.Impairment(dropRate: 0.05)

    @Test("same-SSRC NACK retransmission recovers nearly every lost packet")
    func sameSSRC() throws {
        let outcome = try FeedbackRun(forward: Self.loss, backward: Self.loss).run()
        let report = outcome.receiver
        print(
            "NACK (same SSRC) at 5% loss each way: \(report); relay \(outcome.forward); sender \(outcome.feedback.statusText)"
        )
        #expect(report.lost >= 10, "the relay must have dropped something: \(outcome.forward)")
        #expect(report.recoveredFraction >= 0.95, "\(report)")
        #expect(report.srtpFailures == 0, "resent packets pass the receiver's SRTP replay window")
        #expect(report.incompleteAccessUnits <= 2 * report.unrecovered, "\(report)")
        if report.unrecovered == 0 { #expect(report.incompleteAccessUnits == 0) }
        #expect(outcome.feedback.nack.sent > 0 && outcome.feedback.rtcpBad == 0)
        #expect(outcome.feedback.video?.roundTripMilliseconds != nil, "RRs echo our SRs: RTT is measured")
    }

    @Test("RTX retransmission recovers nearly every lost packet")
    func rtx() throws {
        let outcome = try FeedbackRun(
            options: DestinationOptions(retransmission: .rtx),
            forward: Self.loss,
            backward: Self.loss
        ).run()
        let report = outcome.receiver
        print("NACK (RTX) at 5% loss each way: \(report); sender \(outcome.feedback.statusText)")
        #expect(report.lost >= 10)
        #expect(report.rtxPackets > 0)
        #expect(report.recoveredFraction >= 0.95, "\(report)")
        #expect(report.incompleteAccessUnits <= 2 * report.unrecovered, "\(report)")
        #expect(report.srtpFailures == 0)
    }

    @Test("without retransmission the same loss leaves broken pictures")
    func withoutNACK() throws {
        let outcome = try FeedbackRun(
            options: DestinationOptions(retransmission: .off),
            forward: Self.loss,
            backward: Self.loss
        ).run()
        let report = outcome.receiver
        print("no retransmission at 5% loss each way: \(report); sender \(outcome.feedback.statusText)")
        #expect(report.lost >= 10)
        #expect(report.recovered == 0 && report.unrecovered == report.lost, "\(report)")
        #expect(report.incompleteAccessUnits > 0)
        #expect(outcome.feedback.nackIgnored > 0 && outcome.feedback.nack.sent == 0)
    }
}
