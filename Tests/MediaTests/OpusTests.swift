import Foundation
import Testing

@testable import Media

@Suite("Opus encoder and decoder (libopus)")
struct OpusTests {
    typealias S = AudioTestSupport

    /// `seconds` of 48 kHz stereo: 440 Hz + 1 kHz on the left, 440 Hz + 1 kHz shifted on the right.
    static func twoTone(seconds: Double, amplitude: Double = 0.3) -> [Float] {
        let frames = Int(48_000 * seconds)
        var out: [Float] = []
        out.reserveCapacity(frames * 2)
        for n in 0..<frames {
            let t = Double(n) / 48_000
            out.append(Float(amplitude * (sin(2 * .pi * 440 * t) + sin(2 * .pi * 1000 * t))))
            out.append(Float(amplitude * (sin(2 * .pi * 440 * t) + sin(2 * .pi * 1000 * t + 1))))
        }
        return out
    }

    static func encodeAll(_ encoder: OpusEncoder, _ pcm: [Float], start: UInt64 = 0) throws -> [OpusPacket] {
        let step = encoder.frameSize * 2
        return try stride(from: 0, to: pcm.count - step + 1, by: step).map { offset in
            let time = start + UInt64(offset / 2) * 1_000_000_000 / 48_000
            return try encoder.encode(Array(pcm[offset..<(offset + step)]), captureTime: time)
        }
    }

    @Test("1 s of 440 Hz + 1 kHz stereo survives encode → decode (lookahead compensated)")
    func roundTrip() throws {
        let encoder = try OpusEncoder()
        #expect(encoder.frameSize == 960)
        #expect(encoder.lookahead > 0 && encoder.lookahead < 960)
        let input = Self.twoTone(seconds: 1)
        let packets = try Self.encodeAll(encoder, input, start: 3_000_000_000)
        #expect(packets.count == 50)
        #expect(packets.allSatisfy { $0.sampleCount == 960 && !$0.isDTX && !$0.isFirstAfterDTX })
        #expect(packets[1].captureTime - packets[0].captureTime == 20_000_000)
        #expect(packets[0].captureTime == 3_000_000_000)
        // 96 kbit/s is 240 bytes per 20 ms on average; VBR varies per packet.
        let average = packets.map(\.data.count).reduce(0, +) / packets.count
        #expect((160...320).contains(average), "average \(average) bytes")

        let decoder = try OpusDecoder()
        var output: [Float] = []
        for packet in packets { output += try decoder.decode(packet.data) }
        #expect(output.count == input.count)

        let delay = encoder.lookahead
        for channel in 0..<2 {
            let original = S.channel(input, channel, of: 2)
            let decoded = S.channel(output, channel, of: 2)
            // Skip the first 100 ms (encoder start-up); decoded[n + delay] is input[n].
            let range = 4800..<(original.count - delay)
            let shifted = Array(decoded[(range.lowerBound + delay)..<(range.upperBound + delay)])
            let correlation = S.correlation(original[range], shifted[...])
            #expect(correlation > 0.98, "channel \(channel): correlation \(correlation)")
            for frequency in [440.0, 1000.0] {
                let level = S.toneAmplitude(shifted[...], frequency: frequency, sampleRate: 48_000)
                #expect(abs(S.decibels(level / 0.3)) < 0.5, "\(frequency) Hz at \(level)")
            }
        }
    }

    @Test("10, 40 and 60 ms frames encode and decode to their length")
    func frameDurations() throws {
        for ms in [10, 40, 60] {
            var config = OpusEncoder.Configuration()
            config.frameMilliseconds = ms
            let encoder = try OpusEncoder(configuration: config)
            #expect(encoder.frameSize == ms * 48)
            let packet = try encoder.encode(Array(Self.twoTone(seconds: Double(ms) / 1000)))
            #expect(packet.sampleCount == ms * 48)
            #expect(try OpusDecoder().decode(packet.data).count == ms * 48 * 2)
        }
    }

    @Test("DTX on silence yields tiny packets; the first packet after it is flagged for the marker bit")
    func dtx() throws {
        var config = OpusEncoder.Configuration()
        config.dtx = true
        let encoder = try OpusEncoder(configuration: config)
        let silence = [Float](repeating: 0, count: 48_000 * 2)
        let quiet = try Self.encodeAll(encoder, silence)
        #expect(quiet.suffix(25).filter(\.isDTX).count >= 20)
        #expect(quiet.suffix(25).allSatisfy { $0.data.count <= 10 })
        #expect(encoder.isInDTX)
        #expect(quiet.last?.isDTX == true)
        let loud = try Self.encodeAll(encoder, Self.twoTone(seconds: 0.1))
        #expect(loud[0].isFirstAfterDTX)
        #expect(!loud[0].isDTX)
        #expect(!loud[1].isFirstAfterDTX)
        #expect(!encoder.isInDTX)
    }

    @Test("without DTX silence still produces decodable packets, never DTX")
    func noDTX() throws {
        let encoder = try OpusEncoder()
        let packets = try Self.encodeAll(encoder, [Float](repeating: 0, count: 48_000))
        #expect(packets.allSatisfy { !$0.isDTX })
        #expect(!encoder.isInDTX)
    }

    @Test("in-band FEC is accepted and its copy decodes in place of a lost packet")
    func fec() throws {
        var config = OpusEncoder.Configuration()
        config.inbandFEC = true
        config.expectedPacketLossPercent = 20
        config.bitrate = 24_000  // low enough for libopus's SILK/hybrid modes, where FEC lives
        let encoder = try OpusEncoder(configuration: config)
        try encoder.setExpectedPacketLoss(percent: 30)
        let packets = try Self.encodeAll(encoder, Self.twoTone(seconds: 0.5))
        let decoder = try OpusDecoder()
        var output = [Float](repeating: 0, count: OpusDecoder.maxFrameSize * 2)
        for packet in packets.prefix(10) { _ = try decoder.decode(packet.data) }
        // Packet 10 "lost": recover it from packet 11's FEC data, then decode 11 normally.
        let recovered = try packets[11].data.withUnsafeBufferPointer { packet in
            try output.withUnsafeMutableBufferPointer {
                try decoder.recoverLost(frameSize: 960, from: packet, into: $0)
            }
        }
        #expect(recovered == 960)
        #expect(try decoder.decode(packets[11].data).count == 1920)
        let concealed = try output.withUnsafeMutableBufferPointer { try decoder.concealLoss(frameSize: 960, into: $0) }
        #expect(concealed == 960)
        #expect(throws: MediaError.self) {
            _ = try output.withUnsafeMutableBufferPointer { try decoder.concealLoss(frameSize: 7, into: $0) }
        }
    }

    @Test("a run-time bitrate change takes effect: bigger packets at a higher bitrate")
    func bitrateChange() throws {
        var config = OpusEncoder.Configuration()
        config.bitrate = 32_000
        let encoder = try OpusEncoder(configuration: config)
        #expect(encoder.bitrate == 32_000)
        let signal = Self.twoTone(seconds: 2)
        let half = signal.count / 2
        let low = try Self.encodeAll(encoder, Array(signal[..<half]))
        try encoder.setBitrate(128_000)
        #expect(encoder.bitrate == 128_000)
        let high = try Self.encodeAll(encoder, Array(signal[half...]))
        let lowAverage = Double(low.suffix(25).map(\.data.count).reduce(0, +)) / 25
        let highAverage = Double(high.suffix(25).map(\.data.count).reduce(0, +)) / 25
        #expect(abs(lowAverage - 80) < 30, "32 kbit/s ≈ 80 bytes per frame, got \(lowAverage)")
        #expect(highAverage > 2.5 * lowAverage, "\(highAverage) vs \(lowAverage)")
    }

    @Test("the zero-allocation API writes into caller buffers")
    func bufferAPI() throws {
        let encoder = try OpusEncoder()
        let pcm = Self.twoTone(seconds: 0.02)
        var out = [UInt8](repeating: 0, count: OpusEncoder.maxPacketBytes)
        let length = try pcm.withUnsafeBufferPointer { input in
            try out.withUnsafeMutableBufferPointer { try encoder.encode(input, into: $0) }
        }
        #expect(length > 2 && length <= OpusEncoder.maxPacketBytes)
        var packet = OpusPacket()
        try encoder.encode(MixedFrame(samples: pcm, captureTime: 77), into: &packet)
        #expect(packet.captureTime == 77 && packet.sampleCount == 960 && packet.data.count > 2)
    }

    @Test("invalid settings and input are clear errors")
    func invalid() throws {
        func message(_ body: () throws -> Void) -> String? {
            do {
                try body()
                return nil
            } catch let error as MediaError {
                return "\(error.code): \(error.message)"
            } catch {
                return "\(error)"
            }
        }
        var config = OpusEncoder.Configuration()
        config.bitrate = 0
        #expect(
            message { _ = try OpusEncoder(configuration: config) }
                == "invalid-setting: Opus bitrate 0 bit/s is outside 6000...510000"
        )
        config = OpusEncoder.Configuration()
        config.frameMilliseconds = 7
        #expect(
            message { _ = try OpusEncoder(configuration: config) }
                == "invalid-setting: Opus frame duration 7 ms is not one of 10, 20, 40, 60 ms"
        )
        config = OpusEncoder.Configuration()
        config.complexity = 11
        #expect(
            message { _ = try OpusEncoder(configuration: config) }
                == "invalid-setting: Opus complexity 11 is outside 0...10"
        )
        let encoder = try OpusEncoder()
        #expect(
            message { try encoder.setBitrate(0) } == "invalid-setting: Opus bitrate 0 bit/s is outside 6000...510000"
        )
        #expect(encoder.bitrate == 96_000)
        #expect(
            message { _ = try encoder.encode([Float](repeating: 0, count: 960)) }
                == "invalid-audio: Opus frame needs 1920 interleaved stereo samples, got 960"
        )
        #expect(message { try encoder.setExpectedPacketLoss(percent: 101) } != nil)

        let decoder = try OpusDecoder()
        #expect(message { _ = try decoder.decode([]) } == "invalid-audio: empty Opus packet")
        // TOC code 3 (arbitrary frame count) with no count byte: malformed.
        #expect(message { _ = try decoder.decode([0x03]) } == "invalid-audio: Opus packet of 1 bytes: corrupted stream")
        #expect(message { _ = try OpusDecoder(sampleRate: 44_100) } != nil)
        #expect(message { _ = try OpusDecoder(channels: 3) } != nil)
    }

    @Test("the decoder survives 2000 random packets without crashing")
    func randomPackets() throws {
        let decoder = try OpusDecoder()
        var rng = SplitMix64(seed: 7)
        var decoded = 0
        for _ in 0..<2000 {
            let packet = (0..<Int.random(in: 1...400, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            if let samples = try? decoder.decode(packet) {
                #expect(samples.count % 2 == 0 && samples.count <= OpusDecoder.maxFrameSize * 2)
                decoded += 1
            }
        }
        #expect(decoded > 0)
    }
}
