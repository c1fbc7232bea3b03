import WHIP

/// `--whip URL`, `--whip-token`, `--whip-ca`: publish the one encode into a WHIP endpoint too.
public struct WHIPOptions: Sendable {
    public var endpoint: WHIPURL
    /// RFC 9725 §4.8: sent as `Authorization: Bearer`; never logged.
    public var token: String?
    /// For an https endpoint: trust only the PEM certificates in this file (nil: system roots).
    public var certificateAuthority: String?
    /// Waits between attempts after a failure: 1 s, doubling, at most this.
    public var maximumBackoff: Duration = .seconds(30)
    /// Live but no RTCP from the endpoint for this long: the session is dead, publish anew.
    public var mediaTimeout: Duration = .seconds(10)

    public init(endpoint: WHIPURL, token: String? = nil, certificateAuthority: String? = nil) {
        self.endpoint = endpoint
        self.token = token
        self.certificateAuthority = certificateAuthority
    }
}
