import CSRTP

/// libsrtp's process-wide initialisation, done exactly once.
///
/// `srtp_init` must run before any other libsrtp call and must not run concurrently with itself. A
/// Swift global/static `let` is initialised lazily under `swift_once`, which is thread-safe, so the
/// first session created from any thread runs it and every later one reuses the result. We never
/// call `srtp_shutdown`: sessions may outlive any point we could call it from.
enum SRTPLibrary {
    private static let initialization: Result<Void, SRTPError> = {
        let status = srtp_init()
        guard status == srtp_err_status_ok else {
            return .failure(SRTPError(status: status, operation: "srtp_init"))
        }
        return .success(())
    }()

    static func ensureInitialized() throws {
        try initialization.get()
    }
}
