import CSRTP

/// libsrtp's process-wide initialisation, done exactly once.
///
/// `srtp_init` must run before any other libsrtp call and must not run concurrently with itself. A
/// Swift global/static `let` is initialised lazily under `swift_once`, which is thread-safe, so the
/// first session created from any thread runs it and every later one reuses the result. We never
/// call `srtp_shutdown`: sessions may outlive any point we could call it from.
///
/// Right after `srtp_init`, before any session exists, the AES-CM cipher and HMAC-SHA1 move onto
/// Nettle (`NettleTransforms`). Should libsrtp refuse them, sessions still work on the library's
/// own crypto, only slower; `SRTPSession.cryptoImplementation` says which is in use.
enum SRTPLibrary {
    private static let initialization: Result<Result<Void, SRTPError>, SRTPError> = {
        // NSS stays loaded through libsrtp's self-tests instead of loading once per test.
        let hold = NSSContextHold()
        let status = srtp_init()
        let transforms = status == srtp_err_status_ok ? NettleTransforms.install() : nil
        hold.release()
        guard let transforms else { return .failure(SRTPError(status: status, operation: "srtp_init")) }
        return .success(transforms)
    }()

    static func ensureInitialized() throws {
        _ = try initialization.get()
    }

    /// What protects AES-CM packets in this process, for logs and benchmark reports.
    static var cryptoImplementation: String {
        switch initialization {
        case .failure(let error): return "none (\(error))"
        case .success(.success): return "libsrtp2 with AES-CM, HMAC-SHA1 and AES-GCM on \(NettleTransforms.version)"
        case .success(.failure(let error)): return "libsrtp2's own crypto (Nettle refused: \(error))"
        }
    }

    /// Whether AES-CM and HMAC-SHA1 run on Nettle (see `NettleTransforms`).
    static var usesNettle: Bool {
        if case .success(.success) = initialization { return true }
        return false
    }
}
