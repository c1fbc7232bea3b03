/// Encodes a video input and an audio input to files a stock player reads: H.264 Annex B
/// (`video.h264`) and Ogg Opus (`audio.opus`). `rtc-encode` and `make demo` run it; it exercises
/// the same converter, mixer and encoders the publisher uses.
public enum FileEncoder {
    public struct Options: Sendable {
        public var video: VideoInputKind = .synthetic
        public var audio: AudioInputKind = .synthetic
        public var seconds: Double = 5
        public var width = 1280
        public var height = 720
        public var frameRate = 30
        public var loop = false
        public var videoBitrateKbps = 1800
        public var preset = "veryfast"
        public var audioBitrate = 96_000
        /// Opus complexity, 0–10 (`OpusEncoder.defaultComplexity` unless lowered).
        public var audioComplexity = OpusEncoder.defaultComplexity
        public var outputDirectory = "out"
        public init() {}
    }

    public struct Summary: Sendable, CustomStringConvertible {
        public var frames = 0
        public var keyFrames = 0
        public var videoBytes = 0
        public var width = 0
        public var height = 0
        public var frameRate = 0.0
        public var audioPackets = 0
        public var audioBytes = 0
        public var encodeNanoseconds: [UInt64] = []
        public var videoPath = ""
        public var audioPath: String?

        public var description: String {
            let seconds = Double(frames) / max(frameRate, 1)
            let kbps = seconds > 0 ? Double(videoBytes) * 8 / seconds / 1000 : 0
            let sorted = encodeNanoseconds.sorted()
            let p50 = sorted.isEmpty ? 0 : Double(sorted[sorted.count / 2]) / 1e6
            let p99 = sorted.isEmpty ? 0 : Double(sorted[min(sorted.count - 1, sorted.count * 99 / 100)]) / 1e6
            var lines = [
                "video: \(frames) frames \(width)x\(height) @ \(String(format: "%.2f", frameRate)) fps, "
                    + "\(keyFrames) key frames, \(videoBytes) bytes (\(Int(kbps)) kbit/s) → \(videoPath)",
                "encode time per frame: p50 \(String(format: "%.2f", p50)) ms, p99 \(String(format: "%.2f", p99)) ms",
            ]
            if let audioPath {
                let abps = seconds > 0 ? Double(audioBytes) * 8 / seconds / 1000 : 0
                lines.append(
                    "audio: \(audioPackets) Opus packets (20 ms), \(audioBytes) bytes (\(Int(abps)) kbit/s) → \(audioPath)"
                )
            }
            return lines.joined(separator: "\n")
        }
    }

    public static func run(_ options: Options) throws(MediaError) -> Summary {
        guard options.seconds > 0, options.seconds <= 3600 else {
            throw MediaError(.invalidSetting, "duration \(options.seconds) s is outside (0, 3600]")
        }
        let video = try VideoInput(
            options.video,
            width: options.width,
            height: options.height,
            frameRate: options.frameRate,
            loop: options.loop
        )
        let encoder = try H264Encoder(
            video.encoderConfiguration(bitrateKbps: options.videoBitrateKbps, preset: options.preset)
        )
        let size = (width: encoder.configuration.width, height: encoder.configuration.height)
        let converter = VideoConverter()
        let out = try SequentialWriter(path: "\(options.outputDirectory)/video.h264")
        var summary = Summary()
        summary.width = size.width
        summary.height = size.height
        summary.frameRate = video.frameRate
        summary.videoPath = out.path
        let frameCount = Int((options.seconds * video.frameRate).rounded())
        for index in 0..<frameCount {
            let time = UInt64(Double(index) * 1e9 / video.frameRate)
            guard var frame = try video.nextFrame(captureTime: time) else { break }
            let started = MonotonicClock.now()
            if frame.width != size.width || frame.height != size.height {
                frame = try converter.convert(RawVideoFrame(frame), width: size.width, height: size.height)
            }
            guard let unit = try encoder.encode(frame) else { continue }
            summary.encodeNanoseconds.append(MonotonicClock.now() - started)
            let bytes = unit.annexB()
            try out.write(bytes)
            summary.frames += 1
            summary.videoBytes += bytes.count
            if unit.isKeyFrame { summary.keyFrames += 1 }
        }
        try encodeAudio(options, seconds: Double(summary.frames) / video.frameRate, into: &summary)
        return summary
    }

    /// Mixes the audio input (as the app source) to 48 kHz stereo, encodes Opus, writes Ogg Opus.
    private static func encodeAudio(
        _ options: Options,
        seconds: Double,
        into summary: inout Summary
    )
        throws(MediaError)
    {
        let samplesWanted = Int(seconds * 48_000)
        var chunks: () throws(MediaError) -> AudioChunk?
        switch options.audio {
        case .none:
            return
        case .synthetic:
            let source = try SyntheticScreenSource(width: 160, height: 96)
            var next = 0
            chunks = { () throws(MediaError) -> AudioChunk? in
                guard next < samplesWanted else { return nil }
                let count = min(960, samplesWanted - next)
                defer { next += count }
                return source.audioChunk(
                    startSample: next,
                    frameCount: count,
                    captureTime: UInt64(next) * 1_000_000 / 48
                )
            }
        case .wav(let path):
            let reader = try WAVReader(path: path, loop: options.loop)
            let limit = UInt64(seconds * 1e9)
            chunks = { () throws(MediaError) -> AudioChunk? in
                guard reader.nextCaptureTime < limit else { return nil }
                return try reader.nextChunk()
            }
        }
        let mixer = try AudioMixer()
        let opus = try OpusEncoder(
            configuration: {
                var c = OpusEncoder.Configuration()
                c.bitrate = options.audioBitrate
                c.complexity = options.audioComplexity
                return c
            }()
        )
        let path = "\(options.outputDirectory)/audio.opus"
        let ogg = try OggOpusWriter(path: path, preSkip: opus.lookahead)
        var frame = MixedFrame()
        var packet = OpusPacket()
        while let chunk = try chunks() {
            try mixer.push(chunk, from: .app)
            while mixer.mixNext(into: &frame) {
                try opus.encode(frame, into: &packet)
                try ogg.write(packet)
                summary.audioPackets += 1
                summary.audioBytes += packet.data.count
            }
        }
        try ogg.finish(validSamples: Int64(summary.audioPackets * opus.frameSize))
        summary.audioPath = path
    }
}
