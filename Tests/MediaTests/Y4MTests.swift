import Foundation
import Testing

@testable import Media

@Suite struct Y4MTests {
    /// Writes `bytes` to a fresh temp directory that the caller removes with `cleanUp`.
    func write(_ bytes: [UInt8], _ name: String) throws -> String {
        let dir = try Tool.tempDirectory("y4m")
        let path = "\(dir)/\(name)"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func readsWhatFFmpegWritesAndLoops() throws {
        let dir = try Tool.tempDirectory("y4m")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = "\(dir)/ff.y4m"
        let made = try Tool.run(
            "ffmpeg",
            [
                "-v", "error", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=25", "-frames:v", "3",
                "-pix_fmt", "yuv420p", "-f", "yuv4mpegpipe", path,
            ]
        )
        #expect(made.status == 0, "\(made.stderr)")
        let reader = try Y4MReader(path: path, loop: true)
        #expect(reader.width == 320 && reader.height == 240 && reader.frameRate == 25)
        var frames: [VideoFrame] = []
        for i in 0..<7 { frames.append(try #require(try reader.nextFrame(captureTime: UInt64(i)))) }
        #expect(frames[0].y == frames[3].y && frames[0].y == frames[6].y)
        #expect(frames[0].y != frames[1].y)
        #expect(frames[5].captureTime == 5)
        let once = try Y4MReader(path: path)
        for _ in 0..<3 { _ = try once.nextFrame(captureTime: 0) }
        #expect(try once.nextFrame(captureTime: 0) == nil)
    }

    @Test func roundTripsOurOwnWriter() throws {
        let dir = try Tool.tempDirectory("y4m")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let source = try SyntheticScreenSource(width: 320, height: 180)
        let writer = try Y4MWriter(path: "\(dir)/a.y4m", width: 320, height: 180, frameRate: 30)
        let frame = source.videoFrame(index: 4, captureTime: 0)
        try writer.write(frame)
        writer.flush()
        let back = try #require(try Y4MReader(path: "\(dir)/a.y4m").nextFrame(captureTime: 0))
        #expect(back == frame)
    }

    @Test(arguments: [
        ("GARBAGE W2 H2\n", "not a YUV4MPEG2 file"),
        ("YUV4MPEG2 H240 F30:1\n", "missing or bad width (W)"),
        ("YUV4MPEG2 W320 H0\n", "frame size 320x0 is empty"),
        ("YUV4MPEG2 W99999 H2\n", "exceeds the 8192x8192 limit"),
        ("YUV4MPEG2 W320 H240 C444\n", "colour space 'C444' is not supported"),
        ("YUV4MPEG2 W320 H240 F30:0\n", "bad frame rate 'F30:0'"),
        ("YUV4MPEG2 W320 H240 It\n", "interlaced video 'It' is not supported"),
        ("", "empty file"),
    ])
    func brokenHeadersNameTheProblem(header: String, message: String) throws {
        let path = try write(Array(header.utf8), "bad.y4m")
        defer { Tool.removeDirectory(of: path) }
        #expect { try Y4MReader(path: path) } throws: { error in
            guard let e = error as? MediaError else { return false }
            return e.code == .badHeader && e.message.hasPrefix(path) && e.message.contains(message)
        }
    }

    @Test func truncatedFrameAndMissingFileAreErrors() throws {
        let path = try write(Array("YUV4MPEG2 W4 H4\nFRAME\n".utf8) + [UInt8](repeating: 9, count: 10), "short.y4m")
        defer { Tool.removeDirectory(of: path) }
        let reader = try Y4MReader(path: path)
        #expect { try reader.nextFrame(captureTime: 0) } throws: {
            ($0 as? MediaError)?.message == "\(path): frame 0 is truncated: 10 of 24 bytes"
        }
        let noMarker = try write(Array("YUV4MPEG2 W4 H4\nFRAMX\n".utf8), "marker.y4m")
        defer { Tool.removeDirectory(of: noMarker) }
        #expect(throws: MediaError.self) { try Y4MReader(path: noMarker).nextFrame(captureTime: 0) }
        #expect { try Y4MReader(path: "/nonexistent/x.y4m") } throws: {
            ($0 as? MediaError)?.message == "/nonexistent/x.y4m: cannot open: No such file or directory"
        }
        let long = try write(Array(("YUV4MPEG2 W4 H4 X" + String(repeating: "a", count: 2000) + "\n").utf8), "long.y4m")
        defer { Tool.removeDirectory(of: long) }
        #expect { try Y4MReader(path: long) } throws: {
            ($0 as? MediaError)?.message.contains("longer than 1024") == true
        }
    }
}
