import ArgumentParser

/// The room and the signaling server: `--room`, `--uid`, `--signal`, `--no-signal`, `--token`,
/// `--signal-tls`, `--signal-ca`.
public struct SignalingArguments: ParsableArguments {
    @Option(help: "Room to publish into (1–64 of A-Z a-z 0-9 _ -).") public var room: String
    @Option(help: "Your uid in the room; '<owner>_sub' marks a screen share of <owner>.") public var uid: String
    @Option(help: "Signaling server HOST:PORT.") public var signal: Parsed<HostPort> = "127.0.0.1:8443"
    @Flag(help: "Do not join a room; send only to the preview and --to destinations.") public var noSignal = false
    @Option(help: "Join token (rtc-signal --secret).") public var token: String?
    @Flag(help: "Signaling over TLS (rtc-signal --tls-cert), verified against the system's trust roots.")
    public var signalTLS = false
    @Option(help: "Signaling over TLS, trusting only the PEM certificates in this file (a private CA).")
    public var signalCa: String?

    public init() {}
}
