extension WHIPClient {
    /// Credentials, trust, timeouts and limits; the defaults suit a public WHIP service.
    public struct Configuration: Sendable {
        /// The bearer token (RFC 9725 §4.7.1, RFC 6750 §2.1), sent with every request; never logged.
        public var token: String?
        /// PEM certificates to trust for https instead of the system's roots (a private CA, or a
        /// self-signed server certificate); nil trusts the system roots.
        public var trustedCertificatesPEMPath: String?
        public var connectTimeout: Duration = .seconds(5)
        /// From the connection's opening to the response's last byte.
        public var responseTimeout: Duration = .seconds(10)
        /// 307/308 redirects followed for one POST (RFC 9725 §4.5); one more is an error.
        public var maximumRedirects = 5
        public var maximumBodyBytes = 64 * 1024
        /// The response's header names and values together, per field and in all.
        public var maximumHeaderBytes = 16 * 1024
        public var userAgent = "rtc-publish"

        public init(token: String? = nil, trustedCertificatesPEMPath: String? = nil) {
            self.token = token
            self.trustedCertificatesPEMPath = trustedCertificatesPEMPath
        }
    }
}

/// The token is a secret: printing or dumping a configuration shows only whether there is one.
extension WHIPClient.Configuration: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String {
        "WHIPClient.Configuration(token: \(token == nil ? "none" : "[redacted]"), "
            + "trustedCertificatesPEMPath: \(trustedCertificatesPEMPath ?? "system roots"), "
            + "connectTimeout: \(connectTimeout), responseTimeout: \(responseTimeout), "
            + "maximumRedirects: \(maximumRedirects), maximumBodyBytes: \(maximumBodyBytes), "
            + "maximumHeaderBytes: \(maximumHeaderBytes), userAgent: \(userAgent))"
    }

    public var debugDescription: String { description }

    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "token": token == nil ? "none" : "[redacted]",
                "trustedCertificatesPEMPath": trustedCertificatesPEMPath as Any,
                "connectTimeout": connectTimeout,
                "responseTimeout": responseTimeout,
                "maximumRedirects": maximumRedirects,
                "maximumBodyBytes": maximumBodyBytes,
                "maximumHeaderBytes": maximumHeaderBytes,
                "userAgent": userAgent,
            ]
        )
    }
}
