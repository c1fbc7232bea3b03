/// Where raw video comes from, for tools and the publisher: the built-in synthetic screen or a
/// Y4M file. Every frame it yields is I420.
public enum VideoInputKind: Sendable, Equatable {
    case synthetic
    case y4m(path: String)

    /// Parses a command-line value: `test` for the synthetic source, otherwise a `.y4m` path.
    public init(argument: String) throws(MediaError) {
        if argument == "test" {
            self = .synthetic
        } else if argument.hasSuffix(".y4m") {
            self = .y4m(path: argument)
        } else {
            throw MediaError(.invalidSetting, "video input '\(argument)' is neither 'test' nor a .y4m file")
        }
    }
}

/// An opened video input producing frames by index.
public final class VideoInput {
    public let width: Int
    public let height: Int
    public let frameRate: Double
    private let synthetic: SyntheticScreenSource?
    private let file: Y4MReader?
    private var index = 0

    /// Opens the input; `width`/`height`/`frameRate` apply to the synthetic source (a file has its own).
    public init(_ kind: VideoInputKind, width: Int, height: Int, frameRate: Int, loop: Bool) throws(MediaError) {
        switch kind {
        case .synthetic:
            let source = try SyntheticScreenSource(width: width, height: height, frameRate: frameRate)
            synthetic = source
            file = nil
            self.width = width
            self.height = height
            self.frameRate = Double(frameRate)
        case .y4m(let path):
            let reader = try Y4MReader(path: path, loop: loop)
            synthetic = nil
            file = reader
            self.width = reader.width
            self.height = reader.height
            self.frameRate = reader.frameRate
        }
    }

    /// Encoder settings for this input: its size fitted into 1280x720 / 720x1280 (never
    /// upscaled, even dimensions) at its own frame rate.
    public func encoderConfiguration(
        bitrateKbps: Int,
        keyFrameInterval: Int? = nil,
        keyFrames: H264Encoder.Configuration.KeyFrames = .periodic,
        preset: String = "veryfast",
        threads: Int = 1
    ) -> H264Encoder.Configuration {
        let size = VideoConverter.fit(width: width, height: height)
        return H264Encoder.Configuration(
            width: size.width,
            height: size.height,
            frameRate: Int(frameRate.rounded()),
            bitrateKbps: bitrateKbps,
            keyFrameInterval: keyFrameInterval,
            keyFrames: keyFrames,
            preset: preset,
            threads: threads
        )
    }

    /// The next frame stamped with `captureTime`, or nil when a file (without loop) has ended.
    public func nextFrame(captureTime: UInt64) throws(MediaError) -> VideoFrame? {
        defer { index += 1 }
        if let synthetic { return synthetic.videoFrame(index: index, captureTime: captureTime) }
        return try file?.nextFrame(captureTime: captureTime)
    }
}
