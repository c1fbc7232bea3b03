import Foundation
import TestSupport
import Testing

/// The private X server the capture tests draw on and capture from.
@Suite struct XvfbServerTests {
    @Test func startsOnAFreeDisplayAndStops() throws {
        let server = try XvfbServer(width: 640, height: 480)
        #expect(server.isRunning)
        #expect(server.display.hasPrefix(":"))
        #expect(server.display != ":0")
        let query = try server.run("xrandr", ["--query"])
        #expect(query.contains("Screen 0"), "\(query)")
        #expect(query.contains("current 640 x 480"), "\(query)")
        server.stop()
        #expect(!server.isRunning)
        server.stop()  // idempotent
        #expect(!server.isRunning)
    }

    @Test func startsWithoutMITSHM() throws {
        let server = try XvfbServer(width: 320, height: 240, extraArguments: ["-extension", "MIT-SHM"])
        #expect(server.isRunning)
        #expect(try server.run("xrandr", ["--query"]).contains("Screen 0"))
        server.stop()
        #expect(!server.isRunning)
    }

    @Test func twoServersGetDifferentDisplays() throws {
        let first = try XvfbServer(width: 320, height: 240)
        let second = try XvfbServer(width: 320, height: 240)
        #expect(first.display != second.display)
        #expect(try second.run("xrandr", ["--query"]).contains("Screen 0"))
    }

    @Test func failingToolThrowsWithItsStderr() throws {
        let server = try XvfbServer(width: 320, height: 240)
        #expect(throws: (any Error).self) { try server.run("xwininfo", ["-id", "0x1"]) }
    }
}
