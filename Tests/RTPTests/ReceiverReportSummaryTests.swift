import Testing

@testable import RTP

@Suite("Receiver report summary and round-trip time")
struct ReceiverReportSummaryTests {
    /// RFC 3550 §6.4.1, Figure 2: A = b710:8000 (46864.500 s), LSR = b705:2000 (46853.125 s),
    /// DLSR = 0005:4000 (5.250 s), so RTT = 0006:2000 = 6.125 s.
    @Test("RTT follows the RFC 3550 §6.4.1 example")
    func rfcExample() {
        let block = RTCPReceptionReport(
            ssrc: 0x1234_5678,
            fractionLost: 64,
            cumulativeLost: -3,
            extendedHighestSequenceNumber: 0x0001_0005,
            jitter: 900,
            lastSenderReport: 0xB705_2000,
            delaySinceLastSenderReport: 0x0005_4000
        )
        let arrival = NTPTimestamp(seconds: 0xB710, fraction: 0x8000_0000)
        #expect(arrival.middle32 == 0xB710_8000)
        let video = ReceiverReportSummary(block, reporterSSRC: 7, clockRate: 90_000, arrival: arrival)
        #expect(video.roundTripMilliseconds == 6125)
        #expect(video.fractionLost == 0.25)
        #expect(video.cumulativeLost == -3 && video.extendedHighestSequenceNumber == 0x0001_0005)
        #expect(video.jitterMilliseconds == 10, "900 ticks of a 90 kHz clock")
        #expect(video.reporterSSRC == 7 && video.mediaSSRC == 0x1234_5678)
        var audioBlock = block
        audioBlock.jitter = 480
        #expect(
            ReceiverReportSummary(audioBlock, reporterSSRC: 7, clockRate: 48_000, arrival: arrival).jitterMilliseconds
                == 10
        )
    }

    @Test("no RTT before an SR was echoed, or when the fields run backwards")
    func noRoundTrip() {
        let arrival = NTPTimestamp(seconds: 0xB710, fraction: 0)
        let none = RTCPReceptionReport(ssrc: 1)
        #expect(
            ReceiverReportSummary(none, reporterSSRC: 2, clockRate: 90_000, arrival: arrival).roundTripMilliseconds
                == nil
        )
        let future = RTCPReceptionReport(ssrc: 1, lastSenderReport: 0xB711_0000, delaySinceLastSenderReport: 0)
        #expect(
            ReceiverReportSummary(future, reporterSSRC: 2, clockRate: 90_000, arrival: arrival).roundTripMilliseconds
                == nil
        )
    }
}
