import Media
import SendEngine
import Testing

@testable import MediaPipeline

/// The audio path builds its Opus encoder from the publish options: `--audio-bitrate` and
/// `--audio-complexity` reach libopus, and a value libopus cannot take is refused by name.
@Suite("Audio path settings")
struct AudioPathTests {
    private func control() throws -> MediaControl {
        MediaControl(sender: try MediaSender(configuration: .init(cname: "alice_sub"), origin: MonotonicClock.now()))
    }

    @Test func defaultsAreTheBestAudio() throws {
        let path = try AudioPath(options: MediaOptions(), control: control())
        #expect(path.opusConfiguration.complexity == 10)
        #expect(path.opusConfiguration.bitrate == 96_000)
    }

    @Test(arguments: [0, 5, 9])
    func complexityAndBitrateReachTheEncoder(complexity: Int) throws {
        var options = MediaOptions()
        options.audioComplexity = complexity
        options.audioBitrate = 64_000
        let path = try AudioPath(options: options, control: control())
        #expect(path.opusConfiguration.complexity == complexity)
        #expect(path.opusConfiguration.bitrate == 64_000)
    }

    @Test func complexityOutOfRangeIsRefusedByName() throws {
        var options = MediaOptions()
        options.audioComplexity = 11
        #expect {
            _ = try AudioPath(options: options, control: control())
        } throws: { error in
            "\(error)".contains("Opus complexity 11 is outside 0...10")
        }
    }
}
