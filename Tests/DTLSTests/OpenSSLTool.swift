import Foundation

/// The openssl command-line tool, the independent peer of these tests (Debian package `openssl`).
enum OpenSSLTool {
    static let path = "/usr/bin/openssl"

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// Runs `openssl arguments` to its end in `directory`; returns stdout and stderr together.
    @discardableResult
    static func run(_ arguments: [String], in directory: String) throws -> String {
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw Failure("\(path) not found: run `make setup` (package openssl)")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        guard process.terminationStatus == 0 else {
            throw Failure("openssl \(arguments.joined(separator: " ")) exited \(process.terminationStatus):\n\(text)")
        }
        return text
    }

    /// A self-signed P-256 certificate and key made by the CLI: `cert.pem` and `key.pem`.
    static func makeCertificate(in directory: String, commonName: String) throws -> (certificate: String, key: String) {
        let certificate = directory + "/\(commonName)-cert.pem"
        let key = directory + "/\(commonName)-key.pem"
        try run(
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", key, "-out", certificate, "-days", "2", "-subj", "/CN=\(commonName)",
            ],
            in: directory
        )
        return (certificate, key)
    }

    /// `openssl x509 -fingerprint -sha256` of a PEM file, as "AB:CD:..." (the CLI prints
    /// "sha256 Fingerprint=AB:CD:...").
    static func fingerprint(ofCertificate path: String, in directory: String) throws -> String {
        let text = try run(["x509", "-in", path, "-noout", "-fingerprint", "-sha256"], in: directory)
        guard let equals = text.firstIndex(of: "=") else { throw Failure("no fingerprint in: \(text)") }
        return text[text.index(after: equals)...].trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// A temporary directory, removed when released.
final class ScratchDirectory {
    let path: String

    init() throws {
        path = NSTemporaryDirectory() + "dtls-tests-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func write(_ text: String, to name: String) throws -> String {
        let file = path + "/" + name
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        return file
    }
}
