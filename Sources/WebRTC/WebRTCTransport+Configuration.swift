import DTLS
import ICE

extension WebRTCTransport {
    /// What every viewer's transport shares: our certificate, where ICE gathers, the servers, the
    /// time limits.
    public struct Configuration: Sendable {
        /// Presented to every viewer; its fingerprint is in every answer.
        public var certificate: DTLSCertificate
        /// Host candidates only on these addresses (empty: every non-loopback interface libnice
        /// finds; loopback only when named).
        public var localAddresses: [String]
        public var stunServer: ICEAgent.Server?
        public var turnServer: ICEAgent.TURNServer?
        /// Offer and check only the TURN server's relayed candidate (`--ice-transport-policy relay`).
        public var relayOnly: Bool
        /// Host candidates bind only UDP ports in this range (`--ice-ports MIN-MAX`); nil: any.
        public var portRange: ClosedRange<UInt16>?
        /// From ICE connecting to DTLS done (the 10 s).
        public var handshakeTimeout: Duration
        /// From the answer to ICE connecting: a viewer that never checks is dropped after this.
        public var connectTimeout: Duration
        /// From the answer to the peer's first connectivity check; nil: only `connectTimeout`.
        /// A browser starts checking within about a second of applying our answer, so a viewer
        /// with no check at all after this never got the answer or never started ICE, and holds
        /// an ICE agent (a thread, its sockets) for nothing. One whose checks began keeps the
        /// whole `connectTimeout`. Only for peers known to run full ICE (viewers: browsers,
        /// aiortc, webrtcbin); an ICE-lite endpoint (many WHIP servers) never sends a check.
        public var firstCheckTimeout: Duration?
        /// The owner restarts ICE when a connected path is lost (`.iceLost`) instead of the
        /// transport failing: a WHIP session whose endpoint accepts PATCH (RFC 9725 §4.3.2).
        public var restartsICE = false
        public var log: @Sendable (String) -> Void

        public init(
            certificate: DTLSCertificate,
            localAddresses: [String] = [],
            stunServer: ICEAgent.Server? = nil,
            turnServer: ICEAgent.TURNServer? = nil,
            relayOnly: Bool = false,
            portRange: ClosedRange<UInt16>? = nil,
            handshakeTimeout: Duration = .seconds(10),
            connectTimeout: Duration = .seconds(30),
            firstCheckTimeout: Duration? = nil,
            log: @escaping @Sendable (String) -> Void = { _ in }
        ) {
            self.certificate = certificate
            self.localAddresses = localAddresses
            self.stunServer = stunServer
            self.turnServer = turnServer
            self.relayOnly = relayOnly
            self.portRange = portRange
            self.handshakeTimeout = handshakeTimeout
            self.connectTimeout = connectTimeout
            self.firstCheckTimeout = firstCheckTimeout
            self.log = log
        }

        func validate() throws {
            guard handshakeTimeout > .zero, connectTimeout > .zero, (firstCheckTimeout ?? .seconds(1)) > .zero else {
                throw ICEError(.invalidConfiguration, "WebRTC time limits must be positive")
            }
        }
    }
}
