/// Why a DTLS operation failed: a code a caller can switch on, and a message fit to log as it is
/// (it never contains key material).
///
/// Modelled on SwiftNIO's errors, like `SRTPError`: a struct with an extensible code rather than an
/// enum, so new codes do not break callers' exhaustive switches.
public struct DTLSError: Error, Hashable, Sendable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let name: String
        public init(_ name: String) { self.name = name }
        public var description: String { name }

        // Refused datagrams: the session is unchanged and goes on.

        /// The first byte is outside 20...63, so by RFC 7983 the datagram is not DTLS (STUN, RTP,
        /// RTCP or noise) and must not reach the DTLS stack.
        public static let notDTLS = Code("not-dtls")
        /// The datagram is larger than any datagram the session accepts.
        public static let datagramTooLarge = Code("datagram-too-large")
        /// The datagram does not split into whole DTLS records (a record header cut short, a
        /// length past the end, an unknown content type or version).
        public static let malformedRecord = Code("malformed-record")
        /// The call does not fit the session's state (receive before `start()` on a client, or
        /// after the session failed or closed).
        public static let invalidState = Code("invalid-state")

        // Handshake failures: the session is failed for good.

        /// The peer's certificate does not hash to the fingerprint the remote SDP promised.
        public static let fingerprintMismatch = Code("fingerprint-mismatch")
        /// The peer finished the handshake without a certificate.
        public static let noPeerCertificate = Code("no-peer-certificate")
        /// The peer sent a fatal alert (it refused our certificate, found no common profile, ...).
        public static let alertReceived = Code("alert-received")
        /// The handshake ended without an SRTP protection profile both sides offered.
        public static let noSRTPProfile = Code("no-srtp-profile")
        /// The handshake did not complete within the configured time.
        public static let handshakeTimeout = Code("handshake-timeout")
        /// OpenSSL failed the handshake for another reason; the message carries its error queue.
        public static let handshakeFailed = Code("handshake-failed")
        /// The RFC 5705 exporter refused to produce the SRTP keys.
        public static let keyExportFailed = Code("key-export-failed")
        /// The connection failed after the handshake (a fatal alert or a protocol error).
        public static let connectionFailed = Code("connection-failed")

        // Set-up.

        /// A fingerprint that is not `sha-256` followed by 32 colon-separated hex pairs.
        public static let invalidFingerprint = Code("invalid-fingerprint")
        /// A certificate or key could not be generated, read or matched (the message names the file).
        public static let certificate = Code("certificate")
        /// A configuration value that cannot work (an MTU out of range, no SRTP profile, ...).
        public static let invalidConfiguration = Code("invalid-configuration")
        /// OpenSSL could not create a context or session object.
        public static let openSSL = Code("openssl")
        /// OpenSSL could not be loaded (it is loaded by the first certificate): libssl.so.3 or
        /// libcrypto.so.3, or one of the functions used, is missing. The message has the loader's
        /// words.
        public static let library = Code("library")
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "DTLSError(\(code)): \(message)" }
}
