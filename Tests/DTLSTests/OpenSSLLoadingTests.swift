import COpenSSL
import Glibc
import Testing

@testable import DTLS

/// Nothing links OpenSSL: COpenSSL's shim loads libssl.so.3 and libcrypto.so.3 when the DTLS module
/// first needs them and reaches each function through `rtc_<name>()` (`dlopen`, then `dlsym`).
@Suite("OpenSSL loaded on first use")
struct OpenSSLLoadingTests {
    @Test("the load check finds both libraries and every function the module calls")
    func loadCheckPasses() throws {
        let problem = rtc_openssl_load_error().map { String(cString: $0) }
        #expect(problem == nil)
        #expect(OpenSSLLibrary.problem == nil)
        try OpenSSLLibrary.load()
    }

    @Test("an accessor returns the function its library exports")
    func accessorsResolve() throws {
        try OpenSSLLibrary.load()
        let ssl = try #require(dlopen("libssl.so.3", RTLD_NOW | RTLD_LOCAL))
        let crypto = try #require(dlopen("libcrypto.so.3", RTLD_NOW | RTLD_LOCAL))
        #expect(address(rtc_SSL_new()) == dlsym(ssl, "SSL_new"))
        #expect(address(rtc_SSL_ctrl()) == dlsym(ssl, "SSL_ctrl"))
        #expect(address(rtc_DTLS_method()) == dlsym(ssl, "DTLS_method"))
        #expect(address(rtc_X509_new()) == dlsym(crypto, "X509_new"))
        #expect(address(rtc_ERR_get_error()) == dlsym(crypto, "ERR_get_error"))
        #expect(address(rtc_EVP_sha256()) == dlsym(crypto, "EVP_sha256"))
    }

    /// The address a C function pointer holds.
    private func address<Function>(_ function: Function) -> UnsafeMutableRawPointer {
        unsafeBitCast(function, to: UnsafeMutableRawPointer.self)
    }

    @Test("calls go through the accessors, the variadic key generation and the ctrl macros included")
    func callsThroughAccessors() throws {
        try OpenSSLLibrary.load()
        let key = try #require(rtc_evp_ec_gen("P-256"))
        rtc_EVP_PKEY_free()(key)
        let context = try #require(rtc_SSL_CTX_new()(rtc_DTLS_method()()))
        defer { rtc_SSL_CTX_free()(context) }
        #expect(rtc_ssl_ctx_set_min_proto_version(context, DTLS1_2_VERSION) == 1)
        let ssl = try #require(rtc_SSL_new()(context))
        defer { rtc_SSL_free()(ssl) }
        #expect(rtc_ssl_set_mtu(ssl, 1200) == 1200)
    }

    /// dlerror() is per thread and cleared by each call: both lookups read it at once, before any
    /// other call could touch it.
    @Test("a missing symbol is NULL, and the loader's words name it")
    func missingSymbol() {
        let symbol = rtc_openssl_lazy_symbol("libssl.so.3", "SSL_no_such_function")
        let why = String(cString: rtc_openssl_dlerror("libssl.so.3"))
        #expect(symbol == nil)
        #expect(why.contains("SSL_no_such_function"), "\(why)")
    }

    @Test("a library that cannot be loaded is a DTLSError naming it and the Debian package")
    func missingLibraryMessage() {
        let symbol = rtc_openssl_lazy_symbol("libssl.so.0-none", "SSL_new")
        let why = String(cString: rtc_openssl_dlerror("libssl.so.0-none"))
        #expect(symbol == nil)
        #expect(why.contains("libssl.so.0-none"), "\(why)")
        let error = OpenSSLLibrary.error(why)
        #expect(error.code == .library)
        #expect(error.message.contains("libssl3"), "\(error.message)")
        #expect(error.message.contains("libssl.so.0-none"), "\(error.message)")
    }
}
