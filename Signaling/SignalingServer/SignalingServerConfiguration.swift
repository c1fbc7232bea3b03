import NIOSSL

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Everything `rtc-signal` can be told; the defaults suit a local, plain-TCP server.
public struct SignalingServerConfiguration: Sendable {
    public var host: String = "127.0.0.1"
    /// 0 asks the kernel for a free port; ``SignalingServer/port`` tells which one it gave.
    public var port: Int = 8443
    /// TLS for every connection when set (see ``SignalingServerConfiguration/loadTLS(certificateFile:keyFile:)``).
    public var tls: TLSConfiguration?
    /// When set, `join` needs a ``SignalingToken`` made with this secret.
    public var secret: String?
    public var maxRooms: Int = 1_000
    public var maxMembersPerRoom: Int = 50
    /// Most client connections at once; one more is told `goodbye` `too-many-connections` and
    /// closed. ``SignalingServer/bind(configuration:logger:)`` lowers it to what the process's
    /// file descriptor limit allows, so accepting never runs out of descriptors.
    public var maxConnections: Int = 10_000
    /// A connection that sends nothing for this long is dropped; clients ping to stay.
    public var idleTimeout: Duration = .seconds(30)
    /// How long a publisher's uid stays held after its connection was lost (not after `leave`):
    /// only a `join` with the resume secret of its last `joined` takes it in that time. 30 s
    /// covers a client's reconnect backoff (at most 5 s between attempts) several times over.
    /// Zero frees the uid at once.
    public var publisherGracePeriod: Duration = .seconds(30)
    /// Messages a connection may send in a burst before the steady rate applies.
    public var messageBurst: Int = 40
    /// Steady messages per second per connection (token bucket refill rate).
    public var messagesPerSecond: Double = 20
    /// Bad messages in a row after which the server closes the connection.
    public var maxConsecutiveBadMessages: Int = 10
    /// Bytes queued for one client before it counts as too slow and is dropped.
    public var outboxLimitBytes: Int = 4 << 20
    /// How long shutdown waits for clients to take their `goodbye` before closing them anyway.
    public var shutdownGracePeriod: Duration = .seconds(2)
    /// HTTP: the request line and headers together, and the body (a WHEP offer is under 10 KB).
    public var maxHTTPHeaderBytes: Int = 16 << 10
    public var maxHTTPBodyBytes: Int = 64 << 10
    /// How long one HTTP request may take to arrive, from its first byte to its last (head and
    /// body). A client that drips it slower is answered `408` and closed (slowloris); between
    /// requests a keep-alive connection is closed after ``idleTimeout``.
    public var httpRequestTimeout: Duration = .seconds(10)
    /// WHEP sessions at once (each is a room member), and how long a `POST` waits for the
    /// publisher's answer (it gathers for at most 3 s).
    public var maxWHEPSessions: Int = 1_000
    /// WHEP sessions at once from one client address: without a secret, a client could
    /// otherwise fill a room with dead offers and no connection kept open.
    public var maxWHEPSessionsPerAddress: Int = 8
    public var whepAnswerTimeout: Duration = .seconds(15)

    public init() {}

    /// A server TLS configuration from PEM files, with errors that name the file.
    public static func loadTLS(certificateFile: String, keyFile: String) throws -> TLSConfiguration {
        for (file, code, what) in [
            (certificateFile, ServerSetupError.Code.tlsCertificate, "certificate"), (keyFile, .tlsKey, "key"),
        ] where !FileManager.default.isReadableFile(atPath: file) {
            throw ServerSetupError(code, "the TLS \(what) file \(file) does not exist or is not readable")
        }
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(certificateFile)
        } catch {
            throw ServerSetupError(
                .tlsCertificate,
                "cannot read a PEM certificate from \(certificateFile): \(error)"
            )
        }
        guard !chain.isEmpty else {
            throw ServerSetupError(.tlsCertificate, "no certificate found in \(certificateFile)")
        }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(file: keyFile, format: .pem)
        } catch {
            throw ServerSetupError(.tlsKey, "cannot read a PEM private key from \(keyFile): \(error)")
        }
        return TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) },
            privateKey: .privateKey(key)
        )
    }
}

/// A reason the server could not start, naming the setting at fault.
public struct ServerSetupError: Error, Hashable, Sendable, CustomStringConvertible {
    public struct Code: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        public static let tlsCertificate = Code(rawValue: "tls-certificate")
        public static let tlsKey = Code(rawValue: "tls-key")
        public static let bind = Code(rawValue: "bind")
        public static let configuration = Code(rawValue: "configuration")
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
