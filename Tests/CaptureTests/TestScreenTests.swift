import Foundation
import Glibc
import Media
import TestSupport
import Testing

/// rtc-testscreen, the capture tests' X client, end to end: it paints into a private Xvfb, a stock
/// capturer (ffmpeg's x11grab) grabs the window, and the timecode strip is read back.
@Suite struct TestScreenTests {
    /// Through MIT-SHM, and with PutImage in bands (`--put-image`).
    @Test(arguments: [true, false])
    func paintsTheSyntheticScreenWithAdvancingTimecodes(sharedMemory: Bool) throws {
        let directory = try TemporaryDirectory()
        let server = try XvfbServer()
        let screen = try startTestScreen(
            server,
            ["--size", "800x450", "--position", "200,100"] + (sharedMemory ? [] : ["--put-image"]),
            directory
        )
        let values = try grabTimecodes(server, x: 200, y: 100, width: 800, height: 450, frames: 12, directory)
        var report = TimecodeReport()
        values.forEach { report.add($0) }
        #expect(report.readable == report.pictures, "\(report)")
        #expect(report.outOfOrder == 0, "\(report)")
        // Grabbed at 10 fps from a 30 fps picture: it moves on between grabs, a busy machine allowing.
        #expect(report.repeated <= report.pictures / 2, "\(report)")
        let first = try #require(report.firstFrame)
        let last = try #require(report.lastFrame)
        #expect(last > first, "\(report)")
        // The timecodes' own rate: frame numbers follow wall time at --fps.
        let rate = try #require(report.captureFrameRate, "\(report)")
        #expect((25...35).contains(rate), "\(report)")
        // Capture times are on this machine's monotonic clock, now.
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let nowMs = UInt32(truncatingIfNeeded: Int(now.tv_sec) * 1000 + Int(now.tv_nsec) / 1_000_000)
        let lastTime = try #require(report.lastTimeMs)
        #expect(nowMs &- lastTime < 10_000, "\(report); now \(nowMs) ms")
        #expect(screen.isRunning, "\(screen.everything)")
    }

    /// On a server without MIT-SHM it falls back to PutImage by itself. (Checked by its own
    /// report: ffmpeg 5.1's x11grab grabs nothing from such a server, it never sends GetImage.)
    @Test func runsOnAServerWithoutMITSHM() throws {
        let directory = try TemporaryDirectory()
        let server = try XvfbServer(width: 640, height: 480, extraArguments: ["-extension", "MIT-SHM"])
        let screen = try BackgroundProcess(
            try builtProgram("rtc-testscreen"),
            ["--display", server.display, "--size", "640x480", "--duration", "1.5", "--stats"],
            directory: directory,
            separateErrors: true
        )
        #expect(screen.waitForExit(deadlineSeconds: 20))
        #expect(screen.exitStatus == 0, "\(screen.everything)")
        #expect(screen.output.hasPrefix("window 0x"), "\(screen.everything)")
        #expect(screen.errors.contains("PutImage") && screen.errors.contains("painted"), "\(screen.everything)")
    }

    @Test func followsAResize() throws {
        let directory = try TemporaryDirectory()
        let server = try XvfbServer()
        let screen = try startTestScreen(server, ["--size", "640x360", "--position", "0,0"], directory)
        try server.run("xdotool", ["windowsize", screen.window, "961", "541"])
        let geometry = try server.run("xwininfo", ["-id", screen.window])
        #expect(geometry.contains("Width: 961") && geometry.contains("Height: 541"), "\(geometry)")
        // The picture is drawn at 962 wide (even): its strip's blocks are those of 962.
        try screen.process.waitUntil(deadlineSeconds: 10, "a readable picture at the new size") {
            let values = (try? grabTimecodes(server, x: 0, y: 0, width: 960, height: 540, frames: 1, directory)) ?? []
            return values.count == 1 && values[0] != nil
        }
        #expect(screen.isRunning, "\(screen.everything)")
    }

    @Test func paintsASolidColourExactlyWhereAsked() throws {
        let directory = try TemporaryDirectory()
        let server = try XvfbServer(width: 640, height: 480)
        let screen = try startTestScreen(
            server,
            ["--solid", "20c040", "--size", "100x80", "--position", "300,200"],
            directory
        )
        let pixels = try grabRGB(server, x: 298, y: 198, width: 104, height: 84, directory)
        func pixel(_ x: Int, _ y: Int) -> [UInt8] {
            let at = ((y - 198) * 104 + (x - 298)) * 3
            return Array(pixels[at..<(at + 3)])
        }
        let green: [UInt8] = [0x20, 0xC0, 0x40]
        for (x, y) in [(300, 200), (399, 200), (300, 279), (399, 279), (350, 240)] {
            #expect(pixel(x, y) == green, "(\(x), \(y)) is \(pixel(x, y))")
        }
        for (x, y) in [(299, 200), (300, 199), (400, 279), (399, 280)] {
            #expect(pixel(x, y) != green, "(\(x), \(y)) outside the window is green")
        }
        #expect(screen.isRunning, "\(screen.everything)")
    }

    @Test func exitsWithOneLineWhenTheDisplayGoesAway() throws {
        let directory = try TemporaryDirectory()
        let server = try XvfbServer(width: 320, height: 240)
        let screen = try startTestScreen(server, ["--size", "320x240"], directory)
        server.stop()
        #expect(screen.process.waitForExit(deadlineSeconds: 10))
        #expect(screen.process.exitStatus == 1)
        #expect(screen.process.errors.contains("lost the X display \(server.display)"), "\(screen.everything)")
    }
}

/// A running rtc-testscreen and the id of its window ("0x…").
private struct TestScreenProcess {
    let process: BackgroundProcess
    let window: String
    var isRunning: Bool { process.isRunning }
    var everything: String { process.everything }
}

/// rtc-testscreen on `server` with `arguments`, once it printed its window's id (mapped, painted).
private func startTestScreen(
    _ server: XvfbServer,
    _ arguments: [String],
    _ directory: TemporaryDirectory
) throws -> TestScreenProcess {
    let process = try BackgroundProcess(
        try builtProgram("rtc-testscreen"),
        ["--display", server.display, "--duration", "120"] + arguments,
        directory: directory,
        separateErrors: true
    )
    try process.waitUntil(deadlineSeconds: 20, "window id printed") { process.output.contains("window 0x") }
    let line = process.output.split(separator: "\n").first { $0.hasPrefix("window 0x") } ?? ""
    return TestScreenProcess(process: process, window: String(line.dropFirst("window ".count)))
}

/// `frames` pictures of the region grabbed by ffmpeg's x11grab at 10 fps, as yuv420p, each
/// picture's timecode (nil where unreadable).
private func grabTimecodes(
    _ server: XvfbServer,
    x: Int,
    y: Int,
    width: Int,
    height: Int,
    frames: Int,
    _ directory: TemporaryDirectory
) throws -> [TimecodeStrip.Value?] {
    let path = directory.path + "/grab-\(UUID().uuidString).yuv"
    try grab(server, x: x, y: y, width: width, height: height, frames: frames, format: "yuv420p", path, directory)
    let data = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    let pictureBytes = width * height * 3 / 2
    guard data.count == frames * pictureBytes else {
        throw InteropFailure("x11grab wrote \(data.count) bytes, not \(frames) pictures of \(pictureBytes)")
    }
    return data.withUnsafeBufferPointer { all in
        (0..<frames).map { f in
            TimecodeStrip.decode(
                luma: UnsafeBufferPointer(rebasing: all[(f * pictureBytes)..<(f * pictureBytes + width * height)]),
                width: width,
                height: height,
                stride: width
            )
        }
    }
}

/// One picture of the region as packed RGB bytes.
private func grabRGB(
    _ server: XvfbServer,
    x: Int,
    y: Int,
    width: Int,
    height: Int,
    _ directory: TemporaryDirectory
) throws -> [UInt8] {
    let path = directory.path + "/grab-\(UUID().uuidString).rgb"
    try grab(server, x: x, y: y, width: width, height: height, frames: 1, format: "rgb24", path, directory)
    let data = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    guard data.count == width * height * 3 else { throw InteropFailure("x11grab wrote \(data.count) bytes") }
    return data
}

private func grab(
    _ server: XvfbServer,
    x: Int,
    y: Int,
    width: Int,
    height: Int,
    frames: Int,
    format: String,
    _ path: String,
    _ directory: TemporaryDirectory
) throws {
    let ffmpeg = try FFmpegRun(
        arguments: [
            "-loglevel", "error", "-f", "x11grab", "-draw_mouse", "0", "-framerate", "10",
            "-video_size", "\(width)x\(height)", "-i", "\(server.display)+\(x),\(y)",
            "-frames:v", "\(frames)", "-f", "rawvideo", "-pix_fmt", format, "-y", path,
        ],
        directory: directory
    )
    guard try ffmpeg.waitForExit(deadlineSeconds: 30), ffmpeg.exitStatus == 0 else {
        throw InteropFailure("ffmpeg x11grab failed (\(ffmpeg.exitStatus)):\n\(ffmpeg.standardError)")
    }
}
