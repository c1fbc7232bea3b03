import ArgumentParser
import Logging
import SignalingServer

/// `rtc-signal [serve] --port 8443 ...`: runs the room server until SIGINT or SIGTERM.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the room server (the default subcommand)."
    )

    @Option(help: "TCP port to listen on (0 picks a free one and logs it).")
    var port: Int = 8443

    @Option(help: "Address to listen on.")
    var host: String = "127.0.0.1"

    @Option(name: .customLong("tls-cert"), help: "PEM certificate chain; enables TLS (needs --tls-key).")
    var tlsCertificate: String?

    @Option(name: .customLong("tls-key"), help: "PEM private key for --tls-cert.")
    var tlsKey: String?

    /// With a secret, joins need a token made with it (see `rtc-signal token`).
    @OptionGroup var secret: SecretOption

    @Option(name: .customLong("max-rooms"), help: "Most rooms at once.")
    var maxRooms: Int = 1_000

    @Option(name: .customLong("max-members"), help: "Most members per room.")
    var maxMembers: Int = 50

    @Option(
        name: .customLong("max-connections"),
        help: "Most client connections at once (lowered to what the file descriptor limit allows)."
    )
    var maxConnections: Int = 10_000

    @Option(name: .customLong("idle-timeout"), help: "Seconds of client silence before the server drops it.")
    var idleTimeout: Double = 30

    @Option(
        name: .customLong("http-request-timeout"),
        help: "Seconds one HTTP request may take to arrive, first byte to last; slower ones get 408."
    )
    var httpRequestTimeout: Double = 10

    @Option(
        name: .customLong("publisher-grace"),
        help: "Seconds a publisher's uid stays held after its connection was lost (0: freed at once)."
    )
    var publisherGrace: Double = 30

    @Option(name: .customLong("max-whep-per-address"), help: "Most WHEP sessions at once from one client address.")
    var maxWHEPPerAddress: Int = 8

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: String = "info"

    func validate() throws {
        guard (0...65_535).contains(port) else {
            throw ValidationError("--port \(port) is not a port number 0–65535")
        }
        guard !host.isEmpty else { throw ValidationError("--host must not be empty") }
        switch (tlsCertificate, tlsKey) {
        case (.some, nil): throw ValidationError("--tls-cert needs --tls-key")
        case (nil, .some): throw ValidationError("--tls-key needs --tls-cert")
        default: break
        }
        _ = try secret.resolve()
        guard (1...1_000_000).contains(maxRooms) else {
            throw ValidationError("--max-rooms \(maxRooms) is not 1–1000000")
        }
        guard (1...10_000).contains(maxMembers) else {
            throw ValidationError("--max-members \(maxMembers) is not 1–10000")
        }
        guard (1...1_000_000).contains(maxConnections) else {
            throw ValidationError("--max-connections \(maxConnections) is not 1–1000000")
        }
        guard idleTimeout.isFinite, idleTimeout > 0, idleTimeout <= 86_400 else {
            throw ValidationError("--idle-timeout \(idleTimeout) is not a number of seconds in (0, 86400]")
        }
        guard httpRequestTimeout.isFinite, httpRequestTimeout > 0, httpRequestTimeout <= 3_600 else {
            throw ValidationError(
                "--http-request-timeout \(httpRequestTimeout) is not a number of seconds in (0, 3600]"
            )
        }
        guard publisherGrace.isFinite, publisherGrace >= 0, publisherGrace <= 3_600 else {
            throw ValidationError("--publisher-grace \(publisherGrace) is not a number of seconds in [0, 3600]")
        }
        guard (1...100_000).contains(maxWHEPPerAddress) else {
            throw ValidationError("--max-whep-per-address \(maxWHEPPerAddress) is not 1–100000")
        }
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError(
                "--log-level \(logLevel) is not one of trace, debug, info, notice, warning, error, critical"
            )
        }
    }

    func run() async throws {
        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        var configuration = SignalingServerConfiguration()
        configuration.host = host
        configuration.port = port
        configuration.secret = try secret.resolve()
        configuration.maxRooms = maxRooms
        configuration.maxMembersPerRoom = maxMembers
        configuration.maxConnections = maxConnections
        configuration.idleTimeout = .milliseconds(Int64((idleTimeout * 1000).rounded()))
        configuration.httpRequestTimeout = .milliseconds(Int64((httpRequestTimeout * 1000).rounded()))
        configuration.publisherGracePeriod = .milliseconds(Int64((publisherGrace * 1000).rounded()))
        configuration.maxWHEPSessionsPerAddress = maxWHEPPerAddress
        if let tlsCertificate, let tlsKey {
            do {
                configuration.tls = try SignalingServerConfiguration.loadTLS(
                    certificateFile: tlsCertificate,
                    keyFile: tlsKey
                )
            } catch let error as ServerSetupError {
                // An unreadable certificate or key is a bad argument, not a runtime failure.
                throw ValidationError(error.message)
            }
        }
        try await SignalingServer.serve(configuration: configuration, logger: Logger(label: "rtc-signal"))
    }
}
