import Ingest
import Media
import Testing

/// Byte-exact messages built by hand from Docs/ingest.md, checked against the serializer and
/// parsed back.
@Suite struct WireVectorTests {
    /// magic, type, flags, reserved, length, timestamp value, timescale.
    static func header(type: UInt8, flags: UInt8 = 0, length: [UInt8], value: [UInt8], timescale: [UInt8]) -> [UInt8] {
        [0x52, 0x54, 0x43, 0x49, type, flags, 0x00, 0x00] + length + value + timescale
    }

    static let noTime: ([UInt8], [UInt8]) = ([0, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0])

    static let helloBytes: [UInt8] =
        header(type: 0x01, length: [0x0B, 0, 0, 0], value: noTime.0, timescale: noTime.1)
        + [0x01, 0x00, 0x01, 0x03, 0x0F, 0x00, 0x00, 0x00, 0x73, 0x69, 0x6D]

    @Test func helloMatchesTheSpecification() throws {
        let hello = IngestHello(role: .capture, capabilities: .all, name: "sim")
        #expect(try IngestSerializer.bytes(of: .hello(hello)) == Self.helloBytes)
        let (message, length) = try IngestParser().parse(Self.helloBytes)
        #expect(length == 35)
        #expect(message.hello == hello)
    }

    /// NV12 full range 4x2, strides 4 and 4, discontinuity flag, 33 333 333 / 10⁹ s.
    static let videoBytes: [UInt8] =
        header(
            type: 0x02,
            flags: 0x01,
            length: [0x20, 0, 0, 0],
            value: [0x55, 0xA0, 0xFC, 0x01, 0, 0, 0, 0],
            timescale: [0x00, 0xCA, 0x9A, 0x3B]
        )
        + [0x01, 0x00, 0x5A, 0x00, 0x04, 0x00, 0x02, 0x00]
        + [0x04, 0, 0, 0, 0x04, 0, 0, 0, 0, 0, 0, 0]
        + [0x00, 0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70]
        + [0x80, 0x81, 0x82, 0x83]

    @Test func videoMatchesTheSpecification() throws {
        let frame = try RawVideoFrame(
            format: .nv12FullRange,
            width: 4,
            height: 2,
            planes: [[0x00, 0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70], [0x80, 0x81, 0x82, 0x83]],
            strides: [4, 4],
            rotation: .clockwise90,
            captureTime: 0
        )
        let video = IngestVideo(
            frame: frame,
            timestamp: IngestTimestamp(value: 33_333_333, timescale: 1_000_000_000),
            flags: .discontinuity
        )
        #expect(try IngestSerializer.bytes(of: .video(video)) == Self.videoBytes)
        let (message, _) = try IngestParser().parse(Self.videoBytes)
        guard case .video(let parsed) = message else {
            Issue.record("expected video, got \(message.type)")
            return
        }
        #expect(parsed.frame.format == .nv12FullRange)
        #expect(parsed.frame.width == 4 && parsed.frame.height == 2)
        #expect(parsed.frame.strides == [4, 4])
        #expect(parsed.frame.rotation == .clockwise90)
        #expect(parsed.frame.planes == frame.planes)
        #expect(parsed.timestamp == video.timestamp)
        #expect(parsed.flags == .discontinuity)
    }

    /// I420 3x3 (odd sizes round chroma up) with padded strides 4, 3, 3.
    @Test func oddSizedI420WithPaddedStridesRoundTrips() throws {
        let y = (0..<12).map { UInt8($0) }
        let u: [UInt8] = [1, 2, 0, 3, 4, 0]
        let v: [UInt8] = [5, 6, 0, 7, 8, 0]
        let frame = try RawVideoFrame(
            format: .i420,
            width: 3,
            height: 3,
            planes: [y, u, v],
            strides: [4, 3, 3],
            rotation: .clockwise270,
            captureTime: 0
        )
        let bytes = try IngestSerializer.bytes(
            of: .video(IngestVideo(frame: frame, timestamp: IngestTimestamp(value: -5, timescale: 600)))
        )
        #expect(bytes.count == 24 + 20 + 12 + 6 + 6)
        #expect(Array(bytes[24..<44]) == [3, 0, 0x0E, 0x01, 3, 0, 3, 0, 4, 0, 0, 0, 3, 0, 0, 0, 3, 0, 0, 0])
        let (message, _) = try IngestParser().parse(bytes)
        guard case .video(let parsed) = message else {
            Issue.record("expected video")
            return
        }
        #expect(parsed.frame.planes == [y, u, v])
        #expect(parsed.timestamp == IngestTimestamp(value: -5, timescale: 600))
    }

    /// Mic, s16, mono, 32 kHz, 4 frames, stamped 64 000 / 32 000 s.
    static let audioBytes: [UInt8] =
        header(
            type: 0x03,
            length: [0x14, 0, 0, 0],
            value: [0x00, 0xFA, 0, 0, 0, 0, 0, 0],
            timescale: [0x00, 0x7D, 0, 0]
        )
        + [0x02, 0x01, 0x01, 0x00, 0x00, 0x7D, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00]
        + [0x00, 0x00, 0x01, 0x00, 0xFF, 0xFF, 0xFF, 0x7F]

    @Test func audioMatchesTheSpecification() throws {
        let audio = IngestAudio(
            source: .mic,
            sampleRate: 32_000,
            channels: 1,
            samples: .s16([0, 1, -1, 32767]),
            timestamp: IngestTimestamp(value: 64_000, timescale: 32_000)
        )
        #expect(try IngestSerializer.bytes(of: .audio(audio)) == Self.audioBytes)
        let (message, _) = try IngestParser().parse(Self.audioBytes)
        guard case .audio(let parsed) = message else {
            Issue.record("expected audio")
            return
        }
        #expect(parsed == audio)
        let chunk = try parsed.chunk(captureTime: 7)
        let expected: [Float] = [0, 1, -1, 32767].map { $0 / 32768 }
        #expect(chunk.samples == expected)
        #expect(chunk.sampleRate == 32_000 && chunk.channels == 1 && chunk.captureTime == 7)
    }

    @Test func floatAudioMatchesTheSpecification() throws {
        let audio = IngestAudio(
            source: .app,
            sampleRate: 44_100,
            channels: 2,
            samples: .f32([0.5, -0.5, 1.0, 0.0]),
            timestamp: IngestTimestamp(value: 1, timescale: 44_100)
        )
        let bytes = try IngestSerializer.bytes(of: .audio(audio))
        #expect(Array(bytes[24..<36]) == [0x01, 0x02, 0x02, 0x00, 0x44, 0xAC, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00])
        #expect(Array(bytes[36...]) == [0, 0, 0, 0x3F, 0, 0, 0, 0xBF, 0, 0, 0x80, 0x3F, 0, 0, 0, 0])
        #expect(try IngestParser().parse(bytes).message.audioValue == audio)
    }

    static let pauseBytes: [UInt8] =
        header(type: 0x04, length: [0x06, 0, 0, 0], value: noTime.0, timescale: noTime.1)
        + [0x01, 0x00, 0x00, 0x00, 0x00, 0x00]

    static let endBytes: [UInt8] =
        header(type: 0x04, length: [0x09, 0, 0, 0], value: noTime.0, timescale: noTime.1)
        + [0x03, 0x00, 0x05, 0x00, 0x03, 0x00, 0x62, 0x61, 0x64]

    @Test func controlMatchesTheSpecification() throws {
        #expect(try IngestSerializer.bytes(of: .control(.pause)) == Self.pauseBytes)
        var resume = Self.pauseBytes
        resume[24] = 0x02
        #expect(try IngestSerializer.bytes(of: .control(.resume)) == resume)
        #expect(try IngestSerializer.bytes(of: .end(.malformedMessage, "bad")) == Self.endBytes)
        #expect(try IngestParser().parse(Self.pauseBytes).message.controlValue == .pause)
        #expect(try IngestParser().parse(resume).message.controlValue == .resume)
        #expect(try IngestParser().parse(Self.endBytes).message.controlValue == .end(.malformedMessage, "bad"))
    }

    @Test func longTextIsCutAtACharacterBoundaryAndControlCharactersBecomeSpaces() throws {
        let name = String(repeating: "é", count: 40)  // 80 bytes of UTF-8
        let bytes = try IngestSerializer.bytes(of: .hello(IngestHello(role: .host, capabilities: [], name: name)))
        let hello = try IngestParser().parse(bytes).message.hello
        #expect(hello?.name == String(repeating: "é", count: 32))
        let end = try IngestSerializer.bytes(of: .end(.busy, "line one\nline two"))
        #expect(try IngestParser().parse(end).message.controlValue == .end(.busy, "line one line two"))
    }

    @Test func unknownEndReasonsSurviveAndPrintAsNumbers() throws {
        let bytes = try IngestSerializer.bytes(of: .end(IngestEndReason(rawValue: 999), ""))
        #expect(try IngestParser().parse(bytes).message.controlValue == .end(IngestEndReason(rawValue: 999), ""))
        #expect("\(IngestEndReason(rawValue: 999))" == "reason-999")
        #expect("\(IngestEndReason.versionMismatch)" == "version-mismatch")
    }
}

extension IngestMessage {
    var audioValue: IngestAudio? {
        if case .audio(let audio) = self { return audio }
        return nil
    }

    var controlValue: IngestControl? {
        if case .control(let control) = self { return control }
        return nil
    }
}
