import ArgumentParser
import SignalingAuth
import SignalingProtocol

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `rtc-signal token --room R --uid U --secret S [--ttl S]`: prints a join token.
struct MakeToken: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Print a join token for a server started with --secret."
    )

    @Option(help: "Room the token admits to.")
    var room: String

    @Option(help: "uid the token admits.")
    var uid: String

    /// The server's secret: --secret, --secret-file or RTC_SIGNAL_SECRET.
    @OptionGroup var secret: SecretOption

    @Option(help: "Seconds until the token expires (1 to 31536000).")
    var ttl: Int = 3_600

    func validate() throws {
        do {
            _ = try RoomID(validating: room)
            _ = try MemberID(validating: uid)
        } catch {
            throw ValidationError(error.message)
        }
        guard try secret.resolve() != nil else {
            throw ValidationError("a secret is needed: --secret, --secret-file or \(SecretOption.environmentVariable)")
        }
        guard (1...31_536_000).contains(ttl) else {
            throw ValidationError("--ttl \(ttl) is not 1–31536000 seconds")
        }
    }

    func run() throws {
        let roomID = try RoomID(validating: room)
        let memberID = try MemberID(validating: uid)
        let expiry = Int64(Date().timeIntervalSince1970) + Int64(ttl)
        guard let key = try secret.resolve() else { throw ValidationError("a secret is needed") }
        print(SignalingToken.make(room: roomID, uid: memberID, expiry: expiry, secret: key))
    }
}
