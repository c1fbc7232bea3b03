import Foundation
import Testing

@testable import Media

@Suite struct FileEncoderTests {
    /// Y4M + a 44.1 kHz mono WAV in, files out that ffprobe reads with the right counts.
    @Test func encodesFileInputsToFilesFFmpegReads() throws {
        let dir = try Tool.tempDirectory("encode")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let source = try SyntheticScreenSource(width: 640, height: 360, frameRate: 25)
        let y4m = try Y4MWriter(path: "\(dir)/in.y4m", width: 640, height: 360, frameRate: 25)
        for i in 0..<25 { try y4m.write(source.videoFrame(index: i, captureTime: 0)) }
        y4m.flush()
        let wav = try WAVWriter(path: "\(dir)/in.wav", sampleRate: 44_100, channels: 1, format: .int16)
        try wav.write((0..<44_100).map { Float(0.3 * sin(2 * Double.pi * 1000 * Double($0) / 44_100)) })
        try wav.finish()

        var options = FileEncoder.Options()
        options.video = .y4m(path: "\(dir)/in.y4m")
        options.audio = .wav(path: "\(dir)/in.wav")
        options.seconds = 2
        options.loop = true
        options.outputDirectory = dir
        let summary = try FileEncoder.run(options)
        #expect(summary.frames == 50 && summary.width == 640 && summary.height == 360)
        #expect(summary.keyFrames == 1)

        let video = try Tool.run(
            "ffprobe",
            [
                "-v", "error", "-count_frames", "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0",
                "\(dir)/video.h264",
            ]
        )
        #expect(String(decoding: video.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) == "50")
        let audio = try Tool.run(
            "ffprobe",
            [
                "-v", "error", "-show_entries", "format=duration:stream=sample_rate,channels", "-of", "default=nw=1",
                "\(dir)/audio.opus",
            ]
        )
        let text = String(decoding: audio.stdout, as: UTF8.self)
        #expect(text.contains("sample_rate=48000") && text.contains("channels=2"), "\(text)")
        let duration = text.split(separator: "\n").first { $0.hasPrefix("duration=") }
            .flatMap { Double($0.dropFirst("duration=".count)) }
        // The WAV loops to fill 2 s; the resampler holds back under 1 ms at the end.
        #expect(abs((duration ?? 0) - 2.0) < 0.03, "\(text)")
    }

    @Test func badInputsAreNamed() throws {
        var options = FileEncoder.Options()
        options.video = .y4m(path: "/nonexistent/in.y4m")
        #expect { try FileEncoder.run(options) } throws: {
            ($0 as? MediaError)?.message == "/nonexistent/in.y4m: cannot open: No such file or directory"
        }
        #expect { try VideoInputKind(argument: "clip.mp4") } throws: {
            ($0 as? MediaError)?.message == "video input 'clip.mp4' is neither 'test' nor a .y4m file"
        }
        #expect(throws: MediaError.self) { try AudioInputKind(argument: "song.mp3") }
        options = FileEncoder.Options()
        options.seconds = 0
        #expect(throws: MediaError.self) { try FileEncoder.run(options) }
    }
}
