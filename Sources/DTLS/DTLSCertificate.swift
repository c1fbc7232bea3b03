import COpenSSL

/// The certificate and private key this endpoint presents in DTLS handshakes.
///
/// WebRTC endpoints use self-signed certificates; the peer checks only that the certificate hashes
/// to the fingerprint in our SDP (RFC 8827 §6.5), so nothing here needs a CA. A fresh one per run
/// (`generate()`) is what browsers do; a fixed one (`init(certificatePath:privateKeyPath:)`) keeps
/// the fingerprint stable across restarts for peers that pin it. Either is the process's first use
/// of OpenSSL, which loads it then (`OpenSSLLibrary`): a machine without libssl3 gets
/// `DTLSError.library` here.
///
/// Sendable: the X509 and EVP_PKEY are never changed after `init`, and OpenSSL takes its own
/// reference (`SSL_CTX_use_certificate`) under its own locks, so one certificate may serve sessions
/// on any number of threads.
public final class DTLSCertificate: @unchecked Sendable {
    /// The certificate (`X509 *`), owned.
    let certificate: OpaquePointer
    /// Its private key (`EVP_PKEY *`), owned.
    let privateKey: OpaquePointer
    /// The SHA-256 fingerprint to write into our SDP's `a=fingerprint`.
    public let fingerprint: DTLSFingerprint

    /// Takes ownership of both handles: freed in `deinit`, or here when this throws.
    fileprivate init(adopting certificate: OpaquePointer, privateKey: OpaquePointer) throws {
        do {
            self.fingerprint = try DTLSFingerprint(certificate: certificate)
        } catch {
            rtc_X509_free()(certificate)
            rtc_EVP_PKEY_free()(privateKey)
            throw error
        }
        self.certificate = certificate
        self.privateKey = privateKey
    }

    deinit {
        rtc_X509_free()(certificate)
        rtc_EVP_PKEY_free()(privateKey)
    }

    /// The certificate in PEM (no key): for a peer's configuration or for inspecting it with the
    /// openssl CLI.
    public var certificatePEM: String {
        guard let bio = rtc_BIO_new()(rtc_BIO_s_mem()()) else { return "" }
        defer { rtc_BIO_free()(bio) }
        guard rtc_PEM_write_bio_X509()(bio, certificate) == 1 else { return "" }
        return String(decoding: MemoryBIO.readAll(bio), as: UTF8.self)
    }

    // MARK: Generate

    /// A fresh ECDSA P-256 key and a self-signed certificate for it.
    ///
    /// The key and the 127-bit serial come from OpenSSL's default random generator (a DRBG seeded
    /// from getrandom(2)). The certificate is valid from a day ago (peers with a clock behind ours
    /// still accept it) for `validityDays`; the short life limits what a leaked key is worth, and
    /// the process makes a new one at every start anyway. P-256 with SHA-256 is the pairing every
    /// WebRTC stack accepts (browsers generate the same).
    public static func generate(commonName: String = "rtc-publish", validityDays: Int = 30) throws -> DTLSCertificate {
        guard (1...365).contains(validityDays) else {
            throw DTLSError(.invalidConfiguration, "certificate validity must be 1...365 days, got \(validityDays)")
        }
        try OpenSSLLibrary.load()
        OpenSSLErrorQueue.clear()
        guard let key = rtc_evp_ec_gen("P-256") else {
            throw failure("cannot generate a P-256 key")
        }
        guard let x509 = rtc_X509_new()() else {
            rtc_EVP_PKEY_free()(key)
            throw failure("cannot allocate a certificate")
        }
        // The draft owns both from here on and frees them should a step throw.
        let draft = DTLSCertificateDraft(certificate: x509, privateKey: key)
        try draft.fill(commonName: commonName, validityDays: validityDays)
        return try draft.finish()
    }

    // MARK: Load

    /// Loads a PEM certificate and its PEM private key (unencrypted: there is nobody to ask for a
    /// passphrase). Errors name the file that failed.
    public convenience init(certificatePath: String, privateKeyPath: String) throws {
        try OpenSSLLibrary.load()
        let certificate = try Self.readPEM(certificatePath, kind: "certificate") { bio in
            rtc_PEM_read_bio_X509()(bio, nil, nil, nil)
        }
        let key: OpaquePointer
        do {
            key = try Self.readPEM(privateKeyPath, kind: "private key") { bio in
                // A callback that supplies no passphrase: OpenSSL's default would prompt on the
                // terminal for an encrypted key.
                rtc_PEM_read_bio_PrivateKey()(bio, nil, { _, _, _, _ in 0 }, nil)
            }
        } catch {
            rtc_X509_free()(certificate)
            throw error
        }
        guard rtc_X509_check_private_key()(certificate, key) == 1 else {
            rtc_X509_free()(certificate)
            rtc_EVP_PKEY_free()(key)
            OpenSSLErrorQueue.clear()
            throw DTLSError(
                .certificate,
                "the private key in '\(privateKeyPath)' does not belong to the certificate in '\(certificatePath)'"
            )
        }
        try self.init(adopting: certificate, privateKey: key)
    }

    /// Opens `path` and reads one PEM object of `kind` from it with `read`.
    private static func readPEM(
        _ path: String,
        kind: String,
        _ read: (OpaquePointer) -> OpaquePointer?
    ) throws -> OpaquePointer {
        OpenSSLErrorQueue.clear()
        guard let bio = rtc_BIO_new_file()(path, "r") else {
            throw DTLSError(
                .certificate,
                "cannot open the \(kind) file '\(path)': "
                    + OpenSSLErrorQueue.drainedText(or: "BIO_new_file failed")
            )
        }
        defer { rtc_BIO_free()(bio) }
        guard let object = read(bio) else {
            let reason = OpenSSLErrorQueue.drainedText(or: "no PEM data")
            throw DTLSError(.certificate, "'\(path)' holds no usable PEM \(kind): \(reason)")
        }
        return object
    }

    static func failure(_ what: String) -> DTLSError {
        DTLSError(.certificate, "\(what): \(OpenSSLErrorQueue.drainedText(or: "no OpenSSL reason"))")
    }
}

/// A certificate being built: owns the handles until `finish()` hands them to a `DTLSCertificate`,
/// and frees them if building stops half-way.
private final class DTLSCertificateDraft {
    private var certificate: OpaquePointer?
    private var privateKey: OpaquePointer?

    init(certificate: OpaquePointer, privateKey: OpaquePointer) {
        self.certificate = certificate
        self.privateKey = privateKey
    }

    deinit {
        if let certificate { rtc_X509_free()(certificate) }
        if let privateKey { rtc_EVP_PKEY_free()(privateKey) }
    }

    /// Version 3, a random positive serial, the validity window, subject = issuer = CN, the public
    /// key, and the ECDSA-SHA256 signature over it all.
    func fill(commonName: String, validityDays: Int) throws {
        guard let x509 = certificate, let key = privateKey else { return }
        guard rtc_X509_set_version()(x509, 2) == 1 else { throw DTLSCertificate.failure("cannot set version 3") }

        // RFC 5280 §4.1.2.2: a positive serial of at most 20 bytes. 127 random bits with the top
        // one set: never zero, never negative, unique in practice.
        guard let serial = rtc_BN_new()() else { throw DTLSCertificate.failure("cannot allocate a serial") }
        defer { rtc_BN_free()(serial) }
        guard rtc_BN_rand()(serial, 127, BN_RAND_TOP_ONE, BN_RAND_BOTTOM_ANY) == 1,
            rtc_BN_to_ASN1_INTEGER()(serial, rtc_X509_get_serialNumber()(x509)) != nil
        else { throw DTLSCertificate.failure("cannot set a random serial") }

        let day = 86_400
        guard rtc_X509_gmtime_adj()(rtc_X509_getm_notBefore()(x509), -day) != nil,
            rtc_X509_gmtime_adj()(rtc_X509_getm_notAfter()(x509), validityDays * day) != nil
        else { throw DTLSCertificate.failure("cannot set the validity") }

        guard let name = rtc_X509_get_subject_name()(x509),
            rtc_X509_NAME_add_entry_by_txt()(name, "CN", MBSTRING_ASC, commonName, -1, -1, 0) == 1,
            rtc_X509_set_issuer_name()(x509, name) == 1
        else { throw DTLSCertificate.failure("cannot set the name CN=\(commonName)") }

        guard rtc_X509_set_pubkey()(x509, key) == 1 else { throw DTLSCertificate.failure("cannot set the public key") }
        guard rtc_X509_sign()(x509, key, rtc_EVP_sha256()()) > 0 else { throw DTLSCertificate.failure("cannot sign") }
    }

    func finish() throws -> DTLSCertificate {
        guard let x509 = certificate, let key = privateKey else {
            throw DTLSError(.certificate, "certificate draft already finished")
        }
        certificate = nil
        privateKey = nil
        return try DTLSCertificate(adopting: x509, privateKey: key)
    }
}
