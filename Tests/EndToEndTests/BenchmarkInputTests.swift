import Foundation
import TestSupport
import Testing

/// `rtc-encode generate` and `rtc-encode floor`, which `make bench` is built on, run as users
/// run them: the inputs must be the same bytes on every run and in every form (the peers read the
/// headerless copies), and the floor must report what it encoded.
@Suite struct BenchmarkInputTests {
    static let frameBytes = 160 * 96 * 3 / 2

    /// Runs rtc-encode to the end; returns its exit status and everything it printed.
    func runEncode(_ arguments: [String], in directory: TemporaryDirectory) throws -> (status: Int32?, output: String) {
        let process = try BackgroundProcess(try builtProgram("rtc-encode"), arguments, directory: directory)
        #expect(process.waitForExit(deadlineSeconds: 60), "rtc-encode \(arguments) did not finish")
        return (process.exitStatus, process.output)
    }

    func contents(_ path: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    @Test func generateWritesTheSameFramesAndSamplesInEveryForm() throws {
        let directory = try TemporaryDirectory()
        let run = try runEncode(["generate", "--seconds", "1", "--size", "160x96", "--out", "a"], in: directory)
        #expect(run.status == 0, "\(run.output)")
        let y4m = try contents(directory.path + "/a/in.y4m")
        let yuv = try contents(directory.path + "/a/in.yuv")
        let wav = try contents(directory.path + "/a/in.wav")
        let pcm = try contents(directory.path + "/a/in.pcm")

        let header = Array("YUV4MPEG2 W160 H96 F30:1 Ip A1:1 C420jpeg\n".utf8)
        #expect(Array(y4m.prefix(header.count)) == header)
        #expect(yuv.count == 30 * Self.frameBytes)
        let marker = Array("FRAME\n".utf8)
        #expect(y4m.count == header.count + 30 * (marker.count + Self.frameBytes))
        for frame in 0..<30 {
            let start = header.count + frame * (marker.count + Self.frameBytes)
            #expect(Array(y4m[start..<(start + marker.count)]) == marker, "frame \(frame) marker")
            let planes = y4m[(start + marker.count)..<(start + marker.count + Self.frameBytes)]
            #expect(
                planes.elementsEqual(yuv[(frame * Self.frameBytes)..<((frame + 1) * Self.frameBytes)]),
                "frame \(frame)"
            )
        }

        // 1 s of 48 kHz stereo s16le; the WAV's data chunk (after its 44-byte header) is the raw file.
        #expect(pcm.count == 48_000 * 2 * 2)
        #expect(wav.count == 44 + pcm.count)
        #expect(Array(wav[0..<4]) == Array("RIFF".utf8) && Array(wav[36..<40]) == Array("data".utf8))
        #expect(wav[44...].elementsEqual(pcm))

        let again = try runEncode(["generate", "--seconds", "1", "--size", "160x96", "--out", "b"], in: directory)
        #expect(again.status == 0, "\(again.output)")
        #expect(try contents(directory.path + "/b/in.y4m") == y4m, "the same frames on every run")
        #expect(try contents(directory.path + "/b/in.pcm") == pcm, "the same samples on every run")
    }

    @Test func floorEncodesEveryFrameAndReportsItsEncodeTimes() throws {
        let directory = try TemporaryDirectory()
        #expect(
            try runEncode(["generate", "--seconds", "1", "--size", "160x96", "--out", "."], in: directory).status == 0
        )
        let run = try runEncode(
            ["floor", "--video", "in.y4m", "--preset", "ultrafast", "--threads", "1", "--keyint", "60"],
            in: directory
        )
        #expect(run.status == 0, "\(run.output)")
        let line = try #require(run.output.split(separator: "\n").last { $0.hasPrefix("{") })
        let record = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(record["final"] as? Bool == true)
        #expect(record["frames"] as? Int == 30)
        #expect(record["keyFrames"] as? Int == 1, "one IDR in 30 frames with a key frame every 60")
        #expect((record["bytes"] as? Int ?? 0) > 0)
        let encode = try #require(record["encodeMs"] as? [String: Double])
        #expect(Set(encode.keys) == ["p50", "p99", "max"])
        #expect((encode["p50"] ?? -1) <= (encode["max"] ?? -1))
    }

    @Test func badArgumentsNameTheProblem() throws {
        let directory = try TemporaryDirectory()
        let seconds = try runEncode(["generate", "--seconds", "0", "--out", "."], in: directory)
        #expect(seconds.status == 2)
        #expect(seconds.output.contains("rtc-encode: --seconds 0 is outside 1...60"), "\(seconds.output)")
        let missing = try runEncode(["floor", "--video", "missing.y4m"], in: directory)
        #expect(missing.status == 2)
        #expect(missing.output.contains("missing.y4m"), "\(missing.output)")
        let frames = try runEncode(["floor", "--video", "in.y4m", "--frames", "0"], in: directory)
        #expect(frames.status == 2)
        #expect(frames.output.contains("rtc-encode: --frames 0 must be at least 1"), "\(frames.output)")
    }
}
