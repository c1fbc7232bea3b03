import Foundation
import Glibc

/// A unique directory under the system temporary directory, removed when released.
public final class TemporaryDirectory {
    public let path: String

    public init() throws {
        path = NSTemporaryDirectory() + "sdp-interop-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// One ffmpeg process with its output captured to files (no pipe can fill up and stall it).
public final class FFmpegRun {
    private let process = Process()
    private let outputPath: String
    private let errorPath: String

    public init(arguments: [String], directory: TemporaryDirectory) throws {
        let name = UUID().uuidString
        outputPath = directory.path + "/\(name).out"
        errorPath = directory.path + "/\(name).err"
        guard FileManager.default.createFile(atPath: outputPath, contents: nil),
            FileManager.default.createFile(atPath: errorPath, contents: nil)
        else { throw InteropFailure("cannot create output files in \(directory.path)") }
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["ffmpeg", "-hide_banner", "-nostdin"] + arguments
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errorPath))
        try process.run()
    }

    public var standardOutput: String { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }
    public var standardError: String { (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "" }
    /// The exit status (or signal number); -1 while it runs.
    public var exitStatus: Int32 { end.status(of: process) ?? -1 }
    /// Running as far as the kernel knows too (see `BackgroundProcess.zombieStatus`).
    var isRunning: Bool { end.status(of: process) == nil }
    private var end = ProcessEnd()

    /// Polls `condition` every 10 ms until it holds; a bounded wait, not a timing assertion.
    public func waitUntil(deadlineSeconds: Double, _ condition: () throws -> Bool) throws {
        let deadline = Date().addingTimeInterval(deadlineSeconds)
        while try !condition() {
            guard isRunning else { throw InteropFailure("ffmpeg exited early:\n\(standardError)") }
            guard Date() < deadline else { throw InteropFailure("condition not met in time:\n\(standardError)") }
            usleep(10_000)
        }
    }

    /// Waits for ffmpeg to end by itself; false (and ffmpeg stopped) if it has not by the deadline.
    public func waitForExit(deadlineSeconds: Double) throws -> Bool {
        let deadline = Date().addingTimeInterval(deadlineSeconds)
        while isRunning {
            guard Date() < deadline else {
                stop()
                return false
            }
            usleep(10_000)
        }
        return true
    }

    public func stop() {
        guard isRunning else { return }
        process.terminate()
        // Bounded, not `waitUntilExit()`, which may never return for a child Foundation lost.
        let deadline = Date().addingTimeInterval(10)
        while isRunning, Date() < deadline { usleep(10_000) }
    }
}

public struct InteropFailure: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
