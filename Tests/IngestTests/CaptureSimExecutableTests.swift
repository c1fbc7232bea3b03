import Foundation
import Ingest
import Testing

extension RealTimeTests {
    /// The `rtc-capture-sim` binary itself: arguments, exit status, the summary line.
    @Suite(.timeLimit(.minutes(1))) struct CaptureSimExecutableTests {
        struct Result {
            var status: Int32
            var output: String
            var errors: String
        }

        static func executable() throws -> String {
            let testBinary = URL(
                fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
            )
            let candidate = testBinary.deletingLastPathComponent().appendingPathComponent("rtc-capture-sim").path
            guard FileManager.default.isExecutableFile(atPath: candidate) else {
                throw TestFailure("rtc-capture-sim not found at \(candidate); run `swift build` first")
            }
            return candidate
        }

        static func run(_ arguments: [String]) async throws -> Result {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: try executable())
            process.arguments = arguments
            let output = Pipe()
            let errors = Pipe()
            process.standardOutput = output
            process.standardError = errors
            try process.run()
            let deadline = ContinuousClock.now + .seconds(30)
            while process.isRunning {
                guard ContinuousClock.now < deadline else {
                    process.terminate()
                    throw TestFailure("rtc-capture-sim \(arguments) still running after 30 s")
                }
                try await Task.sleep(for: .milliseconds(20))
            }
            return Result(
                status: process.terminationStatus,
                output: String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self),
                errors: String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            )
        }

        @Test(arguments: [
            (["--duration", "1"], "Missing expected argument '--ingest <ingest>'"),
            (["--ingest", "/tmp/x.sock"], "'/tmp/x.sock' is not unix:/path or tcp:HOST:PORT"),
            (["--ingest", "tcp:192.168.1.2:5000"], "tcp:192.168.1.2:5000 is not a loopback address"),
            (["--ingest", "unix:/tmp/x", "--size", "886by1920"], "--size '886by1920' is not WxH, as in 886x1920"),
            (["--ingest", "unix:/tmp/x", "--size", "887x1920"], "size 887x1920 must be even"),
            (
                ["--ingest", "unix:/tmp/x", "--audio", "app,speaker"],
                "--audio 'app,speaker' is not app,mic, app, mic or none"
            ),
            (["--ingest", "unix:/tmp/x", "--fps", "0"], "frame rate 0 is outside 1–120"),
            (
                ["--ingest", "unix:/tmp/x", "--pause-at", "2", "--duration", "1"],
                "--pause-at 2.0 must be inside the duration"
            ),
            (
                ["--ingest", "unix:/tmp/x", "--garbage", "--garbage-kind", "nonsense"],
                "--garbage-kind 'nonsense' is not one of"
            ),
            (
                ["--ingest", "unix:/tmp/x", "--duration", "soon"],
                "The value 'soon' is invalid for '--duration <duration>'"
            ),
        ])
        func badArgumentsGiveOneLineAndStatus2(_ arguments: [String], _ expected: String) async throws {
            let result = try await Self.run(arguments)
            #expect(result.status == 2)
            #expect(result.output.isEmpty)
            #expect(result.errors.hasPrefix("rtc-capture-sim: "))
            #expect(result.errors.contains(expected), "\(result.errors)")
            #expect(result.errors.split(separator: "\n").count == 1)
        }

        @Test func anUnreachableHostIsStatus1() async throws {
            let result = try await Self.run([
                "--ingest", "unix:/tmp/ingest-test-nobody-listens.sock", "--duration", "1",
            ])
            #expect(result.status == 1)
            #expect(result.errors.contains("cannot connect to unix:/tmp/ingest-test-nobody-listens.sock"))
        }

        @Test func streamsAndPrintsASummary() async throws {
            let host = try await TestServer(keepPlanes: 0)
            let result = try await Self.run([
                "--ingest", "\(host.address)", "--duration", "1", "--size", "320x568", "--audio", "app",
            ])
            #expect(result.status == 0, "\(result.errors)")
            #expect(result.output.hasPrefix("sent "))
            #expect(result.output.hasSuffix("over 1 connection; finished\n"))
            #expect(result.output.contains("0 mic audio chunks"))
            if case .ended = try await host.recorder.waitForSessionEnd() {} else { Issue.record("no proper end") }
            #expect(host.recorder.events.contains { $0.video?.frame.width == 320 })
            await host.stop()
        }

        @Test func garbageReportsTheHostsReason() async throws {
            let host = try await TestServer(address: .tcp(host: "127.0.0.1", port: 0), keepPlanes: 0)
            let result = try await Self.run([
                "--ingest", "\(host.address)", "--size", "320x568", "--garbage", "--garbage-kind", "unknown-type",
            ])
            #expect(result.status == 0, "\(result.errors)")
            #expect(result.output.contains("; host ended the session: unknown-message-type: type at byte 4: type 0x7f"))
            await host.stop()
        }
    }
}
