import Foundation
import Media
import TestSupport

/// A stock ffmpeg playing one SDP file, keeping what a viewer would see: every decoded picture
/// (gray, for the timecode strip), its timestamps (framecrc), and the decoded audio.
final class Receiver {
    let ffmpeg: FFmpegRun
    let base: String
    let width: Int
    let height: Int

    init(sdp: String, width: Int, height: Int, directory: TemporaryDirectory, name: String) throws {
        base = directory.path + "/" + name
        self.width = width
        self.height = height
        ffmpeg = try FFmpegRun(
            arguments: Self.arguments(sdp: sdp, base: base),
            directory: directory
        )
    }

    /// The ffmpeg command line, shared with `--play` commands (`{sdp}` stands for the file).
    static func arguments(sdp: String, base: String) -> [String] {
        [
            "-protocol_whitelist", "file,udp,rtp", "-i", sdp,
            "-map", "0:v", "-vsync", "passthrough", "-f", "rawvideo", "-pix_fmt", "gray", base + ".gray",
            "-map", "0:v", "-vsync", "passthrough", "-f", "framecrc", base + ".crc",
            "-map", "0:a", "-f", "s16le", "-ac", "2", "-ar", "48000", base + ".pcm",
        ]
    }

    static func playCommand(base: String) -> String {
        "ffmpeg -hide_banner -nostdin -v error " + arguments(sdp: "{sdp}", base: base).joined(separator: " ")
    }
}

/// What a receiver got, read from its output files.
struct Received: CustomStringConvertible {
    var timecodes = TimecodeReport()
    var framesByTimestamp = 0
    var framesPerSecond: Double?
    var audioSeconds = 0.0

    init(base: String, width: Int, height: Int) throws {
        let size = width * height
        let gray = (try? Data(contentsOf: URL(fileURLWithPath: base + ".gray"))) ?? Data()
        var report = TimecodeReport()
        [UInt8](gray).withUnsafeBufferPointer { all in
            for f in 0..<(all.count / size) {
                let picture = UnsafeBufferPointer(rebasing: all[(f * size)..<((f + 1) * size)])
                report.add(TimecodeStrip.decode(luma: picture, width: width, height: height, stride: width))
            }
        }
        timecodes = report
        let crc = (try? String(contentsOfFile: base + ".crc", encoding: .utf8)) ?? ""
        let lines = crc.split(separator: "\n")
        let den = lines.first { $0.hasPrefix("#tb 0:") }.flatMap { $0.split(separator: "/").last }
            .flatMap { Double($0.trimmingCharacters(in: .whitespaces)) }
        let pts = lines.filter { !$0.hasPrefix("#") }.compactMap { line -> Int? in
            let fields = line.split(separator: ",")
            return fields.count > 2 ? Int(fields[2].trimmingCharacters(in: .whitespaces)) : nil
        }
        framesByTimestamp = pts.count
        if let den, let first = pts.first, let last = pts.last, last > first {
            framesPerSecond = Double(pts.count - 1) / (Double(last - first) / den)
        }
        let pcm = (try? Data(contentsOf: URL(fileURLWithPath: base + ".pcm"))) ?? Data()
        audioSeconds = Double(pcm.count / 4) / 48_000
    }

    var description: String {
        "\(timecodes); \(framesByTimestamp) frames by timestamp at "
            + "\(framesPerSecond.map { String(format: "%.2f", $0) } ?? "?") fps; audio \(String(format: "%.2f", audioSeconds)) s"
    }
}
