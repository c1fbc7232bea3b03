import COpenSSL

/// One DTLS-SRTP handshake and connection over datagrams (RFC 5763, RFC 5764), with no socket:
/// the caller passes each datagram from the peer to `receive(_:)` and sends the datagrams each
/// call returns, calls `handleTimeout()` when `nextTimeout` has passed, and, once connected, takes
/// the SRTP keys from `srtpKeys`.
///
/// OpenSSL runs over two memory BIOs: `receive` writes one datagram into the read BIO and lets the
/// handshake consume it; what OpenSSL writes into the write BIO goes back to the caller, cut into
/// datagrams at record boundaries (`DTLSRecordFraming`). ICE, which will own the socket, and tests
/// that lose flights on purpose, drive it alike.
///
/// Errors are of two kinds. A datagram the session refuses (not DTLS by RFC 7983, too large,
/// records that do not parse, or a call in the wrong state) throws and leaves the session as it
/// was: a stray or forged datagram on the 5-tuple cannot end it. A handshake or connection that
/// fails (wrong fingerprint, a fatal alert, OpenSSL refusing a message, the time limit) is not
/// thrown: the output carries `.failed(error)` and any alert to send, and `state` stays
/// `.failed(error)`.
///
/// Threading: one OpenSSL `SSL` is not safe to use from two threads at once, so the class is not
/// `Sendable`: keep a session in the one task or thread that handles its datagrams.
public final class DTLSSession {
    /// The largest datagram `receive` accepts. OpenSSL reads one datagram into a buffer of about
    /// 2^14 + 333 bytes; anything longer would be read in part and leave the rest to merge with
    /// the next datagram. Handshake datagrams are an MTU long (about 1200 to 1500 bytes).
    public static let maximumDatagramLength = 16_384

    public let configuration: Configuration
    public var role: DTLSRole { configuration.role }
    public var state: DTLSState { machine.state }
    /// Our write key (`local`) and the peer's (`remote`), set when the handshake completes.
    public private(set) var srtpKeys: DTLSSRTPKeys?
    /// The fingerprint of the certificate the peer presented, matching or not.
    public var peerFingerprint: DTLSFingerprint? { peerCheck.presented }
    /// Flights resent because their retransmission timer expired (RFC 6347 §4.2.4).
    public private(set) var retransmissions = 0
    /// Application data the peer sent after the handshake, dropped: media goes over SRTP, and data
    /// channels (SCTP over DTLS) are not supported.
    public private(set) var ignoredApplicationDataBytes = 0

    private var machine = DTLSStateMachine()
    let peerCheck: PeerCertificateCheck
    /// `SSL_CTX *`, owned.
    private let context: OpaquePointer
    /// `SSL *`, owned; it owns both BIOs (`SSL_set_bio`) and frees them with itself.
    let ssl: OpaquePointer
    /// The read BIO: one datagram from the peer at a time.
    private let incoming: OpaquePointer
    /// The write BIO: records for the peer, drained after every call into OpenSSL.
    private let outgoing: OpaquePointer
    /// When a handshake still running is failed (`Configuration.handshakeTimeout` after it began).
    private var handshakeDeadline: ContinuousClock.Instant?

    public init(_ configuration: Configuration) throws {
        try configuration.validate()
        try OpenSSLLibrary.load()
        let context = try Self.makeContext(configuration)
        OpenSSLErrorQueue.clear()
        guard let ssl = rtc_SSL_new()(context) else {
            rtc_SSL_CTX_free()(context)
            throw DTLSError(.openSSL, "SSL_new: " + OpenSSLErrorQueue.drainedText(or: "failed"))
        }
        let incoming = rtc_BIO_new()(rtc_BIO_s_mem()())
        let outgoing = rtc_BIO_new()(rtc_BIO_s_mem()())
        guard let incoming, let outgoing else {
            rtc_BIO_free()(incoming)
            rtc_BIO_free()(outgoing)
            rtc_SSL_free()(ssl)
            rtc_SSL_CTX_free()(context)
            throw DTLSError(.openSSL, "BIO_new: " + OpenSSLErrorQueue.drainedText(or: "failed"))
        }
        rtc_SSL_set_bio()(ssl, incoming, outgoing)
        // SSL_CTRL_SET_MTU answers with the MTU it set, 0 when it refused one.
        guard rtc_ssl_set_mtu(ssl, configuration.mtu) > 0 else {
            rtc_SSL_free()(ssl)
            rtc_SSL_CTX_free()(context)
            throw DTLSError(.openSSL, "cannot set the MTU to \(configuration.mtu)")
        }
        switch configuration.role {
        case .client: rtc_SSL_set_connect_state()(ssl)
        case .server: rtc_SSL_set_accept_state()(ssl)
        }
        self.configuration = configuration
        self.context = context
        self.ssl = ssl
        self.incoming = incoming
        self.outgoing = outgoing
        self.peerCheck = PeerCertificateCheck(expected: configuration.remoteFingerprint)
        peerCheck.install(on: ssl)
    }

    deinit {
        rtc_SSL_free()(ssl)
        rtc_SSL_CTX_free()(context)
    }

    // MARK: Driving

    /// Begins the handshake. A client returns its first flight (the ClientHello); a server returns
    /// nothing and waits (a server may also skip `start()`: its first datagram starts it). The
    /// handshake time limit runs from here.
    public func start() throws -> DTLSOutput {
        guard machine.startHandshake() else {
            throw DTLSError(.invalidState, "start() on a session that is already \(state)")
        }
        handshakeDeadline = .now + configuration.handshakeTimeout
        return role == .client ? advanceHandshake() : DTLSOutput()
    }

    /// Handles one datagram from the peer. Throws, leaving the session unchanged, for a datagram
    /// it refuses; see the type's comment for which failures throw and which are reported.
    public func receive(_ datagram: UnsafeRawBufferPointer) throws -> DTLSOutput {
        switch state {
        case .new where role == .client:
            throw DTLSError(.invalidState, "a client session receives only after start()")
        case .failed(let error):
            throw DTLSError(.invalidState, "the session has failed (\(error.code)): \(error.message)")
        case .closed:
            throw DTLSError(.invalidState, "the session is closed")
        case .new, .handshaking, .connected:
            break
        }
        guard datagram.count <= Self.maximumDatagramLength else {
            throw DTLSError(
                .datagramTooLarge,
                "a \(datagram.count)-byte datagram is larger than the \(Self.maximumDatagramLength) bytes accepted"
            )
        }
        _ = try DTLSRecordFraming.validate(datagram)

        if state == .new, machine.startHandshake() {
            handshakeDeadline = .now + configuration.handshakeTimeout
        }
        guard MemoryBIO.replaceContents(of: incoming, with: datagram) else {
            throw DTLSError(.openSSL, "the read BIO refused a \(datagram.count)-byte datagram")
        }
        return state == .handshaking ? advanceHandshake() : readConnection()
    }

    /// Handles one datagram from the peer (see `receive(_:)` for a buffer).
    public func receive(_ datagram: [UInt8]) throws -> DTLSOutput {
        try datagram.withUnsafeBytes { try receive($0) }
    }

    /// How long until `handleTimeout()` has something to do: the retransmission timer OpenSSL
    /// runs while it waits for the peer's next flight (1 s at first, doubling, RFC 6347 §4.2.4.1),
    /// or the handshake time limit if that comes first. Zero when overdue; nil when no timer runs.
    public var nextTimeout: Duration? {
        guard machine.isRunning else { return nil }
        var left = timeval()
        var timeout: Duration? = nil
        if rtc_dtls_get_timeout(ssl, &left) == 1 {
            timeout = .seconds(left.tv_sec) + .microseconds(left.tv_usec)
        }
        if state == .handshaking, let deadline = handshakeDeadline {
            let untilDeadline = max(.zero, ContinuousClock.now.duration(to: deadline))
            timeout = min(timeout ?? untilDeadline, untilDeadline)
        }
        return timeout
    }

    /// Resends the last flight if its retransmission timer has expired, and fails the handshake
    /// once its time limit has passed. Calling it early does nothing.
    public func handleTimeout() -> DTLSOutput {
        guard machine.isRunning else { return DTLSOutput() }
        if state == .handshaking, let deadline = handshakeDeadline, ContinuousClock.now >= deadline {
            return fail(
                DTLSError(
                    .handshakeTimeout,
                    "no DTLS handshake within \(configuration.handshakeTimeout) "
                        + "(\(retransmissions) retransmissions); is the peer reachable?"
                )
            )
        }
        OpenSSLErrorQueue.clear()
        let result = rtc_dtls_handle_timeout(ssl)
        if result < 0 {
            // OpenSSL gives up by itself after 12 timeouts in a row.
            let reason = OpenSSLErrorQueue.drainedText(or: "too many retransmissions")
            return fail(DTLSError(state == .handshaking ? .handshakeTimeout : .connectionFailed, reason))
        }
        if result == 1 { retransmissions += 1 }
        return DTLSOutput(datagrams: drainOutgoing())
    }

    /// Ends the session. Connected, it sends close_notify (RFC 5246 §7.2.1), which the returned
    /// datagrams carry; otherwise there is nothing to tell the peer. The state becomes `.closed`
    /// (a failed session stays failed).
    public func close() -> DTLSOutput {
        if case .connected = state {
            OpenSSLErrorQueue.clear()
            _ = rtc_SSL_shutdown()(ssl)
            OpenSSLErrorQueue.clear()
        }
        _ = machine.close()
        return DTLSOutput(datagrams: drainOutgoing())
    }

    // MARK: Internals shared with the handshake

    /// The records OpenSSL wrote since the last call, as datagrams within the MTU.
    func drainOutgoing() -> [[UInt8]] {
        DTLSRecordFraming.datagrams(fromRecords: MemoryBIO.readAll(outgoing), mtu: configuration.mtu)
    }

    /// Moves to `.failed(error)` and returns what to send (OpenSSL's alert, if it wrote one).
    func fail(_ error: DTLSError) -> DTLSOutput {
        guard machine.fail(error) else { return DTLSOutput(datagrams: drainOutgoing()) }
        return DTLSOutput(datagrams: drainOutgoing(), events: [.failed(error)])
    }

    func markConnected(_ keys: DTLSSRTPKeys) -> DTLSOutput {
        guard machine.connect(keys.profile) else { return DTLSOutput(datagrams: drainOutgoing()) }
        srtpKeys = keys
        return DTLSOutput(datagrams: drainOutgoing(), events: [.connected(keys.profile)])
    }

    func markClosedByPeer() -> DTLSOutput {
        guard machine.close() else { return DTLSOutput(datagrams: drainOutgoing()) }
        return DTLSOutput(datagrams: drainOutgoing(), events: [.closedByPeer])
    }

    func countIgnoredApplicationData(_ bytes: Int) { ignoredApplicationDataBytes += bytes }
}
