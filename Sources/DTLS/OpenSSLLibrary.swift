import COpenSSL

/// OpenSSL (libssl.so.3 and libcrypto.so.3) is loaded when the module first needs it, not at start
/// (COpenSSL's shim.h says why), and this is where: `DTLSCertificate.generate()`, the certificate
/// read from files and `DTLSSession.init` call `load()` before anything else of OpenSSL's. Every
/// call the module makes through `rtc_…()` needs a certificate or a session, so none can find a
/// symbol missing.
enum OpenSSLLibrary {
    /// nil when both libraries and every function the module calls through `rtc_…()` were found;
    /// else the loader's words, which name the library or the symbol. Resolved once per process.
    static let problem: String? = rtc_openssl_load_error().map { String(cString: $0) }

    /// Loads OpenSSL, or throws `DTLSError.library` saying what is missing and what provides it.
    static func load() throws {
        if let problem { throw error(problem) }
    }

    /// The error for the loader's words `problem`.
    static func error(_ problem: String) -> DTLSError {
        DTLSError(
            .library,
            "OpenSSL 3 (libssl.so.3 and libcrypto.so.3, Debian package libssl3) cannot be loaded: \(problem)"
        )
    }
}
