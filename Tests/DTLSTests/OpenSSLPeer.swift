import Foundation
import Glibc

/// `openssl s_server` or `s_client` in the background, its output in a file. Its stdin is a pipe
/// kept open: both tools end the connection when stdin reaches end of file. Killed when released.
final class OpenSSLPeer {
    private let process = Process()
    private let input = Pipe()
    let outputPath: String

    init(_ arguments: [String], directory: ScratchDirectory) throws {
        guard FileManager.default.isExecutableFile(atPath: OpenSSLTool.path) else {
            throw OpenSSLTool.Failure("\(OpenSSLTool.path) not found: run `make setup` (package openssl)")
        }
        outputPath = directory.path + "/\(arguments.first ?? "openssl")-\(UUID().uuidString.prefix(6)).log"
        guard FileManager.default.createFile(atPath: outputPath, contents: nil) else {
            throw OpenSSLTool.Failure("cannot create \(outputPath)")
        }
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        process.executableURL = URL(fileURLWithPath: OpenSSLTool.path)
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory.path)
        process.standardOutput = output
        process.standardError = output
        process.standardInput = input
        try process.run()
    }

    deinit {
        if process.isRunning {
            process.terminate()
            usleep(100_000)
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
        process.waitUntilExit()
    }

    var output: String { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }

    /// Waits (blocking) until the output contains `text`; false after `seconds`.
    func waitFor(_ text: String, seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if output.contains(text) { return true }
            if !process.isRunning { return output.contains(text) }
            usleep(20_000)
        }
        return false
    }

    /// The hex after "Keying material: " (printed once the handshake completed), as bytes.
    func keyingMaterial(seconds: Double) -> [UInt8]? {
        guard waitFor("Keying material: ", seconds: seconds) else { return nil }
        for line in output.split(separator: "\n") {
            guard let range = line.range(of: "Keying material: ") else { continue }
            return Hex.bytes(line[range.upperBound...].trimmingCharacters(in: .whitespaces))
        }
        return nil
    }
}
