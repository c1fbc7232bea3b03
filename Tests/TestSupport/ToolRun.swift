import Foundation
import Glibc

/// Runs a command-line tool to its end and returns its stdout: what the test servers' helpers
/// (`xrandr`, `xdotool`, `pactl`) share. Its stderr goes to a file in `directory` (a pipe could
/// fill and stall it) and is quoted when it exits non-zero; past `timeout` it is killed.
/// `label` names it in those errors ("xrandr --query on :201").
func runTool(
    _ path: String,
    _ arguments: [String],
    environment: [String: String],
    directory: String,
    timeout: TimeInterval,
    label: String
) throws -> String {
    let child = Process()
    child.executableURL = URL(fileURLWithPath: path)
    child.arguments = arguments
    child.environment = environment
    let stderrPath = directory + "/\(URL(fileURLWithPath: path).lastPathComponent)-\(UUID().uuidString).stderr"
    guard FileManager.default.createFile(atPath: stderrPath, contents: nil) else {
        throw InteropFailure("cannot create \(stderrPath)")
    }
    defer { try? FileManager.default.removeItem(atPath: stderrPath) }
    let output = Pipe()
    child.standardOutput = output
    child.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: stderrPath))
    child.standardInput = FileHandle.nullDevice
    try child.run()
    // Read to the end first (the pipe would otherwise stall a chatty tool), then reap.
    let data = output.fileHandleForReading.readDataToEndOfFile()
    var childEnd = ProcessEnd()
    let deadline = Date().addingTimeInterval(timeout)
    while childEnd.status(of: child) == nil {
        guard Date() < deadline else {
            Glibc.kill(child.processIdentifier, SIGKILL)
            throw InteropFailure("\(label) did not end in \(Int(timeout)) s")
        }
        usleep(5_000)
    }
    let status = childEnd.status(of: child) ?? -1
    let stdout = String(decoding: data, as: UTF8.self)
    guard status == 0 else {
        let stderr = (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? ""
        throw InteropFailure("\(label) exited \(status): \(stderr)\(stdout)")
    }
    return stdout
}
