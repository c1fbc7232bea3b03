import Foundation

/// Runs a real program (ffmpeg, ffprobe) and captures its output; tests judge our bytes with it.
struct ToolRun {
    var status: Int32
    var stdout: Data
    var stderr: String
}

enum Tool {
    static func run(_ executable: String, _ arguments: [String], stdin: Data? = nil) throws -> ToolRun {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [executable] + arguments
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let input = Pipe()
        process.standardInput = stdin == nil ? FileHandle.nullDevice : input
        try process.run()
        if let stdin {
            try input.fileHandleForWriting.write(contentsOf: stdin)
            try input.fileHandleForWriting.close()
        }
        // Drain both pipes concurrently so a chatty stderr cannot block the process.
        nonisolated(unsafe) var errData = Data()
        let group = DispatchGroup()
        group.enter()
        DispatchQueue.global().async {
            errData = err.fileHandleForReading.readDataToEndOfFile()
            group.leave()
        }
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        return ToolRun(
            status: process.terminationStatus,
            stdout: outData,
            stderr: String(decoding: errData, as: UTF8.self)
        )
    }

    /// Removes the directory holding `path`.
    static func removeDirectory(of path: String) {
        try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent)
    }

    /// A fresh directory under the system temp folder.
    static func tempDirectory(_ name: String) throws -> String {
        let path = NSTemporaryDirectory() + "rtc-tests-\(name)-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}
