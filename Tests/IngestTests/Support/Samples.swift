import Ingest
import Media

/// Messages tests send.
enum Samples {
    static let captureHello = IngestHello(role: .capture, capabilities: .all, name: "test-capture")

    static func helloBytes(version: UInt16 = IngestProtocol.version, role: IngestRole = .capture) throws -> [UInt8] {
        try IngestSerializer.bytes(of: .hello(IngestHello(version: version, role: role, capabilities: .all, name: "t")))
    }

    /// A small NV12 full-range frame with recognisable plane contents.
    static func smallVideo(width: Int = 16, height: Int = 8, value: Int64 = 1) throws -> IngestVideo {
        let cw = (width + 1) / 2
        let y = (0..<(width * height)).map { UInt8(truncatingIfNeeded: $0) }
        let uv = [UInt8](repeating: 128, count: 2 * cw * ((height + 1) / 2))
        let frame = try RawVideoFrame(
            format: .nv12FullRange,
            width: width,
            height: height,
            planes: [y, uv],
            strides: [width, 2 * cw],
            captureTime: 0
        )
        return IngestVideo(frame: frame, timestamp: IngestTimestamp(value: value, timescale: 30))
    }

    static func smallAudio(source: AudioSource = .mic) -> IngestAudio {
        IngestAudio(
            source: source,
            sampleRate: 32_000,
            channels: 1,
            samples: .s16([0, 100, -100, 0]),
            timestamp: IngestTimestamp(value: 0, timescale: 32_000)
        )
    }

    static func bytes(_ message: IngestMessage) throws -> [UInt8] {
        try IngestSerializer.bytes(of: message)
    }
}
