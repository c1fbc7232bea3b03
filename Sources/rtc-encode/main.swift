import ArgumentParser
import Media

#if canImport(Glibc)
    import Glibc
#endif

/// Encodes a source with the product's own converter, mixer and encoders and writes files any
/// player opens, or reads back the synthetic source's timecodes from decoded pictures. Top-level
/// code rather than `@main`: the command's subcommands live in files of their own.
struct RTCEncode: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rtc-encode",
        abstract:
            "Encode a source to H.264 + Ogg Opus files, read timecodes from decoded frames, or write and encode benchmark inputs.",
        subcommands: [Encode.self, ReadTimecodes.self, Generate.self, Floor.self, Sink.self],
        defaultSubcommand: Encode.self
    )
}

/// Bad arguments: one line naming the problem on stderr, exit code 2, before anything starts.
func usageError(_ message: String) -> Error {
    var stderr = StandardError()
    print("rtc-encode: \(message)", to: &stderr)
    return ExitCode(2)
}

struct StandardError: TextOutputStream {
    mutating func write(_ string: String) {
        var bytes = Array(string.utf8)
        _ = Glibc.write(2, &bytes, bytes.count)
    }
}

struct Encode: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Encode to <out>/video.h264 and <out>/audio.opus.")

    @Option(help: "Video input: 'test' (built-in synthetic screen) or a .y4m file.")
    var video = "test"
    @Option(help: "Audio input: 'test' (tone + beep), a .wav file, or 'none'.")
    var audio = "test"
    @Option(help: "How many seconds to encode.")
    var seconds = 5.0
    @Option(help: "Synthetic source size, WIDTHxHEIGHT (files keep their own, fitted into 1280x720).")
    var size = "1280x720"
    @Option(help: "Synthetic source frame rate.")
    var fps = 30
    @Option(help: "Video bitrate in kbit/s.")
    var videoBitrate = 1800
    @Option(help: "x264 preset (ultrafast … veryslow).")
    var preset = "veryfast"
    @Option(help: "Opus bitrate in bit/s.")
    var audioBitrate = 96_000
    @Option(help: "Opus complexity 0-10: lower costs less CPU and some audio quality.")
    var audioComplexity = OpusEncoder.defaultComplexity
    @Flag(help: "Loop file inputs until the duration is reached.")
    var loop = false
    @Option(help: "Output directory (created if missing).")
    var out = "out"

    mutating func run() throws {
        var options = FileEncoder.Options()
        do {
            options.video = try VideoInputKind(argument: video)
            options.audio = try AudioInputKind(argument: audio)
        } catch {
            throw usageError(error.message)
        }
        let parts = size.split(separator: "x").compactMap { Int($0) }
        guard parts.count == 2, parts[0] > 0, parts[1] > 0 else {
            throw usageError("--size '\(size)' is not WIDTHxHEIGHT with positive numbers")
        }
        (options.width, options.height) = (parts[0], parts[1])
        options.seconds = seconds
        options.frameRate = fps
        options.videoBitrateKbps = videoBitrate
        options.preset = preset
        options.audioBitrate = audioBitrate
        guard OpusEncoder.complexityRange.contains(audioComplexity) else {
            throw usageError("--audio-complexity \(audioComplexity) is outside \(OpusEncoder.complexityRange)")
        }
        options.audioComplexity = audioComplexity
        options.loop = loop
        options.outputDirectory = out
        mkdir(out, 0o755)
        do {
            print(try FileEncoder.run(options))
        } catch {
            var stderr = StandardError()
            print("rtc-encode: \(error.message)", to: &stderr)
            throw ExitCode(error.code == .invalidSetting || error.code == .io || error.code == .badHeader ? 2 : 1)
        }
    }
}

struct ReadTimecodes: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "read-timecodes",
        abstract: "Read raw 8-bit gray frames on stdin (ffmpeg -f rawvideo -pix_fmt gray -) and report their timecodes."
    )

    @Option(help: "Frame size, WIDTHxHEIGHT.")
    var size = "1280x720"

    @Option(help: "Width the pictures were drawn at, when scaled since (rtc-capture-sim's 886 → 590).")
    var sourceWidth: Int?

    mutating func run() throws {
        let parts = size.split(separator: "x").compactMap { Int($0) }
        guard parts.count == 2, parts[0] > 0, parts[1] > 0, parts[0] * parts[1] <= 8192 * 8192 else {
            throw usageError("--size '\(size)' is not WIDTHxHEIGHT within 8192x8192")
        }
        let frameBytes = parts[0] * parts[1]
        var report = TimecodeReport()
        var buffer = [UInt8](repeating: 0, count: frameBytes)
        while true {
            var filled = 0
            while filled < frameBytes {
                let got = buffer.withUnsafeMutableBytes { raw in
                    raw.baseAddress.map { read(0, $0 + filled, frameBytes - filled) } ?? 0
                }
                if got <= 0 { break }
                filled += got
            }
            guard filled == frameBytes else { break }
            report.add(
                buffer.withUnsafeBufferPointer {
                    TimecodeStrip.decode(
                        luma: $0,
                        width: parts[0],
                        height: parts[1],
                        stride: parts[0],
                        sourceWidth: sourceWidth
                    )
                }
            )
        }
        print(report)
    }
}

RTCEncode.main()
