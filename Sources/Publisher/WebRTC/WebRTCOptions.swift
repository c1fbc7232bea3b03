import ICE

/// How `rtc-publish` serves WebRTC subscribers (`--ice-address`, `--stun`, `--turn`,
/// `--ice-transport-policy`, `--dtls-cert`/`--dtls-key`).
public struct WebRTCOptions: Sendable {
    /// Host candidates only on these addresses; empty: every interface libnice finds except
    /// loopback (which is used only when named).
    public var iceAddresses: [String] = []
    public var stunServer: ICEAgent.Server?
    public var turnServer: ICEAgent.TURNServer?
    /// Media only through the TURN server (`--ice-transport-policy relay`).
    public var relayOnly = false
    /// A PEM certificate and its private key; nil: a fresh ECDSA P-256 certificate at start.
    public var certificatePath: String?
    public var privateKeyPath: String?
    /// From ICE connecting to DTLS done, and from the answer to ICE connecting.
    public var handshakeTimeout: Duration = .seconds(10)
    public var connectTimeout: Duration = .seconds(30)
    /// From the answer to the viewer's first ICE connectivity check: a browser starts checking
    /// within about a second of the answer, so a viewer with none after 10 s lost the answer or
    /// never started; it ends (`webrtc-ended`) instead of holding an ICE agent for 30 s. One
    /// whose checks began keeps `connectTimeout` (`WebRTCTransport.Configuration.firstCheckTimeout`).
    public var firstCheckTimeout: Duration = .seconds(10)

    public init() {}
}
