import CongestionControl
import Foundation
import MediaPipeline
import ProcessSupport
import SendEngine
import Testing

@testable import Publisher

/// The status line's numbers, formatted without Foundation: they must read as `printf`'s `%.Nf`
/// did before (scripts and people read these lines).
@Suite struct StatusFormattingTests {
    @Test(arguments: [
        (29.96, 1, "30.0"),
        (29.94, 1, "29.9"),
        (0.0, 1, "0.0"),
        (0.05, 1, "0.1"),
        (-0.04, 1, "0.0"),
        (-2.25, 1, "-2.3"),
        (1651.4, 0, "1651"),
        (1651.5, 0, "1652"),
        (5.125, 2, "5.13"),
        (12.0, 3, "12.000"),
        (0.001, 3, "0.001"),
        (Double.nan, 1, "nan"),
        (-Double.infinity, 1, "-inf"),
    ])
    func fixedDecimalMatchesPrintf(value: Double, places: Int, expected: String) {
        #expect(fixedDecimal(value, places: places) == expected)
    }

    @Test func statusLineReadsAsBefore() {
        let old = PublishStatistics()
        var new = PublishStatistics()
        new.media.framesIn = 30
        new.media.framesOut = 30
        new.media.videoBytes = 312_500
        new.media.audioBytes = 12_000
        new.media.packetsSent = 320
        new.media.destinations = 2
        new.subscribers = 1
        new.signaling = "joined"
        let line = PublishStatistics.line(from: old, to: new, seconds: 1)
        #expect(
            line
                == "fps in 30.0 out 30.0 | video 2500 kbit/s | audio 96 kbit/s | packets 320 | destinations 2 "
                + "(subscribers 1) | dropped 0 | signaling joined"
        )
    }

    /// `--stats-json` keeps one flat object: the media threads' counters and the sessions' side
    /// by side, under the names scripts read.
    @Test func statisticsEncodeAsOneObject() throws {
        var statistics = PublishStatistics()
        statistics.media.framesIn = 7
        statistics.media.feedback["sub:bob"] = FeedbackStatistics()
        statistics.subscribers = 2
        statistics.signaling = "joined"
        statistics.whip = WHIPStatistics(state: "live")
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let text = String(decoding: try encoder.encode(statistics), as: UTF8.self)
        #expect(text.hasPrefix("{\"appAudioFramesDropped\":0,"))
        for key in ["\"framesIn\":7", "\"subscribers\":2", "\"signaling\":\"joined\"", "\"sub:bob\":{"] {
            #expect(text.contains(key), "\(key) in \(text)")
        }
        #expect(!text.contains("\"media\""))
        #expect(try JSONDecoder().decode(PublishStatistics.self, from: Data(text.utf8)) == statistics)
    }
}

extension StatusFormattingTests {
    /// A CI log of a failing bottleneck run must tell the estimate's limit from the encoder's:
    /// the capacity estimate and the probes are on the line once they exist.
    @Test func congestionPartShowsCapacityAndProbes() {
        var statistics = CongestionStatistics()
        #expect(statistics.statusText.isEmpty)
        statistics.transportWide = true
        statistics.delayBasedBitrate = 1_544_000
        statistics.delayState = "normal"
        statistics.delayTrendMilliseconds = -1.84
        statistics.thresholdMilliseconds = 6
        statistics.pacerQueuePackets = 3
        statistics.pacerQueueMilliseconds = 5.4
        #expect(statistics.statusText == "cc 1544 kbit/s normal trend -1.8/6.0 ms q 3 pkt 5 ms")
        statistics.linkCapacityBitrate = 4_184_134
        statistics.probesSent = 4
        statistics.lastProbeBitrate = 3_385_800
        #expect(
            statistics.statusText
                == "cc 1544 kbit/s cap 4184 normal trend -1.8/6.0 ms probes 4 last 3385 q 3 pkt 5 ms"
        )
    }
}
