import COpenSSL

extension DTLSSession {
    /// What a session needs from the SDP exchange and from us.
    public struct Configuration: Sendable {
        /// Client (`a=setup:active`) or server (`passive`), from the answer (`DTLSRole`).
        public var role: DTLSRole
        /// What we present; its fingerprint is the one in our SDP.
        public var certificate: DTLSCertificate
        /// The `a=fingerprint` of the remote SDP: the only certificate we accept.
        public var remoteFingerprint: DTLSFingerprint
        /// The SRTP profiles offered (client) or accepted (server), best first.
        public var srtpProfiles: [DTLSSRTPProfile]
        /// The largest datagram we send. 1200 is what WebRTC stacks send (Pion's and the field
        /// notes' budget) and fits any path with room for ICE's and TURN's headers; a handshake
        /// flight larger than this is split into fragments.
        public var mtu: Int
        /// How long a handshake may take before it is failed. OpenSSL alone would retransmit with
        /// back-off for minutes; 30 s is libdatachannel's limit, and longer than an ICE check
        /// list takes to fail.
        public var handshakeTimeout: Duration

        public init(
            role: DTLSRole,
            certificate: DTLSCertificate,
            remoteFingerprint: DTLSFingerprint,
            srtpProfiles: [DTLSSRTPProfile] = DTLSSRTPProfile.defaultOffer,
            mtu: Int = 1200,
            handshakeTimeout: Duration = .seconds(30)
        ) {
            self.role = role
            self.certificate = certificate
            self.remoteFingerprint = remoteFingerprint
            self.srtpProfiles = srtpProfiles
            self.mtu = mtu
            self.handshakeTimeout = handshakeTimeout
        }

        /// The MTUs accepted: above the smallest datagram a flight can be cut into, and no more
        /// than a datagram we accept ourselves.
        public static let mtuRange = 256...DTLSSession.maximumDatagramLength

        func validate() throws {
            guard Self.mtuRange.contains(mtu) else {
                throw DTLSError(.invalidConfiguration, "MTU must be \(Self.mtuRange) bytes, got \(mtu)")
            }
            guard !srtpProfiles.isEmpty, Set(srtpProfiles).count == srtpProfiles.count else {
                throw DTLSError(
                    .invalidConfiguration,
                    "SRTP profiles must be one or more distinct profiles, got \(srtpProfiles)"
                )
            }
            guard handshakeTimeout > .zero else {
                throw DTLSError(.invalidConfiguration, "handshake timeout must be positive, got \(handshakeTimeout)")
            }
        }
    }

    /// A DTLS 1.2 context for one session: our certificate, use_srtp with our profiles, no session
    /// resumption, no renegotiation, and the MTU we set instead of one OpenSSL would query from a
    /// socket it does not have. The caller owns the returned `SSL_CTX *`.
    static func makeContext(_ configuration: Configuration) throws -> OpaquePointer {
        OpenSSLErrorQueue.clear()
        guard let method = rtc_DTLS_method()(), let context = rtc_SSL_CTX_new()(method) else {
            throw DTLSError(.openSSL, "SSL_CTX_new: " + OpenSSLErrorQueue.drainedText(or: "failed"))
        }
        func fail(_ what: String) -> DTLSError {
            rtc_SSL_CTX_free()(context)
            return DTLSError(.openSSL, "\(what): " + OpenSSLErrorQueue.drainedText(or: "failed"))
        }
        // DTLS 1.2 only: WebRTC requires it (RFC 8827 §6.5); DTLS 1.0's ciphers are obsolete.
        guard rtc_ssl_ctx_set_min_proto_version(context, DTLS1_2_VERSION) == 1,
            rtc_ssl_ctx_set_max_proto_version(context, DTLS1_2_VERSION) == 1
        else { throw fail("cannot restrict the context to DTLS 1.2") }
        // No MTU query (the BIOs are memory, not a socket), no tickets or cache (every session is
        // a fresh handshake, so every peer certificate passes the fingerprint check), no
        // renegotiation (RFC 8827 does not need it, and it is attack surface), no compression.
        _ = rtc_SSL_CTX_set_options()(
            context,
            RTC_SSL_OP_NO_QUERY_MTU | RTC_SSL_OP_NO_TICKET | RTC_SSL_OP_NO_RENEGOTIATION | RTC_SSL_OP_NO_COMPRESSION
        )
        rtc_ssl_ctx_disable_session_cache(context)

        guard rtc_SSL_CTX_use_certificate()(context, configuration.certificate.certificate) == 1,
            rtc_SSL_CTX_use_PrivateKey()(context, configuration.certificate.privateKey) == 1,
            rtc_SSL_CTX_check_private_key()(context) == 1
        else { throw fail("cannot use the DTLS certificate") }

        // RFC 5764 §4.1.1: use_srtp lists the profiles in preference order. OpenSSL's setter
        // returns 0 on success, unlike most of its API.
        let profiles = configuration.srtpProfiles.map(\.openSSLName).joined(separator: ":")
        guard rtc_SSL_CTX_set_tlsext_use_srtp()(context, profiles) == 0 else {
            throw fail("cannot offer SRTP profiles \(profiles)")
        }
        return context
    }
}
