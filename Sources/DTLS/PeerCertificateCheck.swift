import COpenSSL

/// The one check that authenticates a WebRTC peer: its certificate must hash to the fingerprint
/// its SDP promised (RFC 5763 §5, RFC 8827 §6.5).
///
/// OpenSSL asks through the verify callback while it processes the peer's Certificate message,
/// so a mismatch fails the handshake there and then, with a bad_certificate alert to the peer,
/// instead of after both sides think they are connected. The chain is not checked against any
/// CA: self-signed is the norm, and the fingerprint is what the signalling channel vouches for.
/// Expiry is not checked either, as no WebRTC stack does.
final class PeerCertificateCheck {
    let expected: DTLSFingerprint
    /// The fingerprint of the certificate the peer presented, once it has.
    private(set) var presented: DTLSFingerprint?

    init(expected: DTLSFingerprint) {
        self.expected = expected
    }

    /// True when a presented certificate did not match.
    var mismatched: Bool {
        guard let presented else { return false }
        return presented != expected
    }

    /// The error for a mismatch, naming both fingerprints.
    var mismatchError: DTLSError {
        DTLSError(
            .fingerprintMismatch,
            "the peer's certificate has fingerprint \(presented?.sdpValue ?? "(none)"), but the remote SDP's "
                + "a=fingerprint is \(expected.sdpValue)"
        )
    }

    /// Records and judges the end-entity certificate (`X509 *`) the peer presented.
    func accepts(_ certificate: OpaquePointer) -> Bool {
        guard let fingerprint = try? DTLSFingerprint(certificate: certificate) else { return false }
        presented = fingerprint
        return fingerprint == expected
    }

    /// Installs the check on `ssl`: the peer must present a certificate (a server asks for one,
    /// and fails a client that sends none), and only this check decides whether it is accepted.
    /// `self` must outlive `ssl`; the session owns both.
    func install(on ssl: OpaquePointer) {
        // Index 0 is OpenSSL's application-data slot (what the SSL_set_app_data macro uses).
        rtc_SSL_set_ex_data()(ssl, 0, Unmanaged.passUnretained(self).toOpaque())
        rtc_SSL_set_verify()(ssl, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT) { _, store in
            // OpenSSL's own verdict (the first argument) is ignored: for a self-signed certificate
            // it is always "unable to verify". The callback may run once per chain error; it
            // gives the same answer every time.
            guard let store,
                let sslPointer = rtc_X509_STORE_CTX_get_ex_data()(store, rtc_SSL_get_ex_data_X509_STORE_CTX_idx()()),
                let check = rtc_SSL_get_ex_data()(OpaquePointer(sslPointer), 0),
                let certificate = rtc_X509_STORE_CTX_get0_cert()(store)
            else { return 0 }
            guard Unmanaged<PeerCertificateCheck>.fromOpaque(check).takeUnretainedValue().accepts(certificate) else {
                // OpenSSL picks the alert from the store's error; left alone it would be that of
                // the self-signed chain (unknown_ca). "Rejected" becomes bad_certificate.
                rtc_X509_STORE_CTX_set_error()(store, X509_V_ERR_CERT_REJECTED)
                return 0
            }
            return 1
        }
    }
}
