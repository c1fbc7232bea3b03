import ArgumentParser

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `rtc-signal`: the room server (`serve`, the default) and its token tool (`token`).
@main
struct RTCSignal: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rtc-signal",
        abstract: "The rtc-publisher room server: newline-delimited JSON signaling over TCP or TLS.",
        subcommands: [Serve.self, MakeToken.self],
        defaultSubcommand: Serve.self
    )

    /// Exit status for bad arguments, as the issue asks (ArgumentParser's own default is 64).
    static let badArgumentsStatus: Int32 = 2

    /// Parses, runs, and maps failures to one line on stderr: exit 2 for bad arguments, 1 otherwise.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            let code = exitCode(for: error)
            if code == .success {
                exit(withError: error)
            }
            let message = self.message(for: error).split(separator: "\n").first.map(String.init) ?? "\(error)"
            writeToStandardError("rtc-signal: \(message)\n")
            if code == .validationFailure {
                Glibc.exit(badArgumentsStatus)
            }
            Glibc.exit(code.rawValue == 0 ? 1 : code.rawValue)
        }
    }

    static func writeToStandardError(_ text: String) {
        var bytes = Array(text.utf8)
        _ = bytes.withUnsafeMutableBytes { write(2, $0.baseAddress, $0.count) }
    }
}
