import ArgumentParser
import Foundation

/// Where the token secret comes from. `--secret` on the command line is visible to every user on
/// the machine through `ps`, so a file (`--secret-file`) or the environment (`RTC_SIGNAL_SECRET`)
/// is the better place for it; all three are accepted, in that order of precedence.
struct SecretOption: ParsableArguments {
    @Option(help: "The token secret (visible in `ps`; prefer --secret-file or RTC_SIGNAL_SECRET).")
    var secret: String?

    @Option(help: "Read the token secret from this file (trailing newline ignored, at most 4 KiB).")
    var secretFile: String?

    static let environmentVariable = "RTC_SIGNAL_SECRET"

    /// The secret, or nil when none was given; throws for an empty or unreadable one.
    func resolve() throws -> String? {
        if let secret {
            guard !secret.isEmpty else { throw ValidationError("--secret must not be empty") }
            return secret
        }
        if let secretFile {
            guard let data = FileManager.default.contents(atPath: secretFile) else {
                throw ValidationError("--secret-file \(secretFile): cannot read the file")
            }
            guard data.count <= 4096 else { throw ValidationError("--secret-file \(secretFile): larger than 4 KiB") }
            var text = String(decoding: data, as: UTF8.self)
            while text.last == "\n" || text.last == "\r" { text.removeLast() }
            guard !text.isEmpty else { throw ValidationError("--secret-file \(secretFile) is empty") }
            return text
        }
        if let value = ProcessInfo.processInfo.environment[Self.environmentVariable] {
            guard !value.isEmpty else { throw ValidationError("\(Self.environmentVariable) is set but empty") }
            return value
        }
        return nil
    }
}
