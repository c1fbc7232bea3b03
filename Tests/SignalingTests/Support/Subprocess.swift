import Foundation
import Synchronization

/// Runs a program to completion with a deadline and returns its exit status and output.
struct ProcessResult {
    var status: Int32
    var standardOutput: String
    var standardError: String
}

func runProcess(
    _ executable: String,
    _ arguments: [String],
    timeout: Duration = .seconds(30)
) async throws -> ProcessResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let output = Pipe()
    let errors = Pipe()
    process.standardOutput = output
    process.standardError = errors
    try process.run()
    let deadline = ContinuousClock.now + timeout
    while process.isRunning {
        if ContinuousClock.now > deadline {
            process.terminate()
            throw TestFailure("\(executable) \(arguments) still running after \(timeout)")
        }
        try await Task.sleep(for: .milliseconds(20))
    }
    return ProcessResult(
        status: process.terminationStatus,
        standardOutput: String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self),
        standardError: String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    )
}

/// Collects a pipe's output as it arrives, for long-running processes.
final class StreamedOutput: Sendable {
    private let text = Mutex("")

    init(_ pipe: Pipe) {
        pipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            guard !data.isEmpty else {
                handle.readabilityHandler = nil
                return
            }
            self?.text.withLock { $0 += String(decoding: data, as: UTF8.self) }
        }
    }

    var current: String { text.withLock { $0 } }

    /// Polls until `match` finds something in the output so far.
    func waitFor<T>(timeout: Duration = .seconds(20), _ match: (String) -> T?) async throws -> T {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let found = match(current) { return found }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw TestFailure("not found in output within \(timeout): \(current)")
    }
}

/// A fresh directory under the system temporary directory, removed by `cleanUp`.
struct TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("signal-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func path(_ name: String) -> String {
        url.appendingPathComponent(name).path
    }

    func cleanUp() {
        try? FileManager.default.removeItem(at: url)
    }
}

/// Makes a self-signed EC certificate for `localhost` and 127.0.0.1 with the openssl command.
func makeSelfSignedCertificate(in directory: TemporaryDirectory) async throws -> (certificate: String, key: String) {
    let certificate = directory.path("cert.pem")
    let key = directory.path("key.pem")
    let result = try await runProcess(
        "/usr/bin/openssl",
        [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", key, "-out", certificate, "-days", "1", "-subj", "/CN=localhost",
            "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
        ]
    )
    guard result.status == 0 else {
        throw TestFailure("openssl failed (\(result.status)): \(result.standardError)")
    }
    return (certificate, key)
}

/// The `rtc-signal` binary SwiftPM built next to this test bundle.
func rtcSignalExecutable() throws -> String {
    let testBinary = URL(fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
    let candidate = testBinary.deletingLastPathComponent().appendingPathComponent("rtc-signal").path
    guard FileManager.default.isExecutableFile(atPath: candidate) else {
        throw TestFailure("rtc-signal not found at \(candidate); run `swift build` first")
    }
    return candidate
}
