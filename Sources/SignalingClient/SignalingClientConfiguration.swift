import NIOSSL
import SignalingProtocol

extension SignalingClient {
    /// Where the server is and how the client behaves when things go wrong.
    public struct Configuration: Sendable {
        public var host: String
        public var port: Int
        /// TLS when set, e.g. `.makeClientConfiguration()` with `trustRoots` for a private CA.
        public var tls: TLSConfiguration?
        /// The name to verify the server certificate against (and send as SNI); defaults to `host`
        /// when `host` is a name. Needed when connecting by IP to a certificate issued for a name.
        public var serverHostname: String?
        public var connectTimeout: Duration = .seconds(5)
        /// How long a request waits for its reply.
        public var requestTimeout: Duration = .seconds(10)
        /// How long `subscribe` waits for the publisher's answer.
        public var answerTimeout: Duration = .seconds(20)
        /// How often the client pings; lowered to a third of the server's idle timeout after `joined`.
        public var pingInterval: Duration = .seconds(10)
        public var reconnect: ReconnectPolicy = ReconnectPolicy()
        /// Supplies a fresh token for each rejoin (tokens expire); nil reuses the token `join` got.
        public var tokenProvider: (@Sendable (RoomID, MemberID) async throws -> String?)?

        public init(host: String, port: Int, tls: TLSConfiguration? = nil, serverHostname: String? = nil) {
            self.host = host
            self.port = port
            self.tls = tls
            self.serverHostname = serverHostname
        }

        /// TLS to the server, verifying its certificate against the system's trust roots, or only
        /// against the PEM certificates in `certificateAuthorityFile` (a private CA, or a
        /// self-signed server certificate). An unreadable file throws, naming it.
        public mutating func useTLS(trusting certificateAuthorityFile: String? = nil) throws {
            var tls = TLSConfiguration.makeClientConfiguration()
            if let certificateAuthorityFile {
                let certificates: [NIOSSLCertificate]
                do {
                    certificates = try NIOSSLCertificate.fromPEMFile(certificateAuthorityFile)
                } catch {
                    throw SignalingError(
                        .connectionFailed,
                        "cannot read PEM certificates from \(certificateAuthorityFile): \(error)"
                    )
                }
                guard !certificates.isEmpty else {
                    throw SignalingError(.connectionFailed, "no certificate in \(certificateAuthorityFile)")
                }
                tls.trustRoots = .certificates(certificates)
            }
            self.tls = tls
        }
    }

    /// Exponential backoff between reconnect attempts, with jitter so a restarted server is not hit
    /// by every client in the same millisecond.
    public struct ReconnectPolicy: Sendable {
        /// False turns reconnecting off: a lost connection ends the client with `.closed`.
        public var enabled: Bool = true
        public var initialDelay: Duration = .milliseconds(200)
        public var maximumDelay: Duration = .seconds(5)
        public var multiplier: Double = 2
        /// Give up after this many attempts in a row; nil keeps trying.
        public var maximumAttempts: Int?

        public init() {}

        /// The wait before attempt `attempt` (1-based): initial × multiplier^(attempt−1), capped,
        /// then scaled by a random factor in [0.5, 1].
        public func delay(forAttempt attempt: Int) -> Duration {
            let exponent = Double(max(0, attempt - 1))
            let initial = Self.seconds(initialDelay)
            let capped = min(Self.seconds(maximumDelay), initial * Self.power(max(1, multiplier), exponent))
            let jitter = Double.random(in: 0.5...1.0)
            return .milliseconds(Int64((capped * jitter * 1000).rounded()))
        }

        static func seconds(_ duration: Duration) -> Double {
            Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        }

        /// `base` to a small non-negative power without Foundation's `pow`, stopping once it is huge.
        static func power(_ base: Double, _ exponent: Double) -> Double {
            var result = 1.0
            var remaining = Int(min(exponent, 64))
            while remaining > 0 && result < 1e9 {
                result *= base
                remaining -= 1
            }
            return result
        }
    }
}
