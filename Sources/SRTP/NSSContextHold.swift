#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// One NSS context held open while `srtp_init` runs, on a libsrtp2 built on NSS (Debian's).
///
/// `srtp_init` self-tests every cipher, and each test of libsrtp's NSS code opens and closes an
/// NSS context of its own. With no other context open, each close shuts NSS down and unloads
/// its softoken, and the next test loads it again: `strace` of a start showed libsoftokn3,
/// libfreeblpriv3 and libsqlite3 opened 13 times, and `srtp_init` was 96 million instructions,
/// 43 % of a three-frame run (about 30 ms of CPU at every start). With one context held, NSS loads
/// once; releasing it after the tests lets NSS unload, as before.
///
/// The two functions come from the NSS that libsrtp2 already loaded (`RTLD_NOLOAD`): no header
/// or link dependency of ours, and nothing at all where libsrtp2 is built without NSS.
struct NSSContextHold: ~Copyable {
    private typealias InitContext =
        @convention(c) (
            UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafePointer<CChar>?,
            UnsafeMutableRawPointer?, UInt32
        ) -> OpaquePointer?
    private typealias ShutdownContext = @convention(c) (OpaquePointer?) -> Int32

    private let context: OpaquePointer?
    private let shutdown: ShutdownContext?

    /// `<nss.h>`: NSS_INIT_READONLY | NOCERTDB | NOMODDB | FORCEOPEN | NOROOTINIT | OPTIMIZESPACE,
    /// the flags libsrtp2's own contexts use (no database, nothing written).
    private static let flags: UInt32 = 0x1 | 0x2 | 0x4 | 0x8 | 0x10 | 0x20

    init() {
        guard let library = dlopen("libnss3.so", RTLD_NOW | RTLD_NOLOAD),
            let open = dlsym(library, "NSS_InitContext"),
            let close = dlsym(library, "NSS_ShutdownContext")
        else {
            context = nil
            shutdown = nil
            return
        }
        // The handle only counts a reference to a library that stays loaded through libsrtp2.
        dlclose(library)
        let initContext = unsafeBitCast(open, to: InitContext.self)
        context = initContext("", "", "", "", nil, Self.flags)
        shutdown = context == nil ? nil : unsafeBitCast(close, to: ShutdownContext.self)
    }

    /// Whether a context is held (false without NSS, or if NSS refused).
    var isHeld: Bool { context != nil }

    /// Closes the held context: with no other context open, NSS shuts down and unloads.
    consuming func release() {}

    deinit {
        if let context, let shutdown { _ = shutdown(context) }
    }
}
