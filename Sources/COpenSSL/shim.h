#ifndef RTC_COPENSSL_SHIM_H
#define RTC_COPENSSL_SHIM_H
/// OpenSSL 3.0 (Debian libssl-dev) for the DTLS module: DTLS 1.2 with use_srtp, the RFC 5705
/// exporter, and the self-signed certificate WebRTC peers authenticate by fingerprint.
///
/// Loaded on first use, not at start. Only WebRTC viewers and WHIP use DTLS, and most jobs have
/// neither, yet libssl and libcrypto kept about 1.7 MB resident in every rtc-publish just by
/// being loaded (their relocations and constructors). So nothing links them: each function Swift
/// calls is reached through `rtc_<name>()`, which returns that function's address, `dlopen`ing
/// its library by soname (RTLD_NOW | RTLD_LOCAL) and `dlsym`ing the name the first time, as
/// CNice's and CPulse's shims do. The type comes from the real declaration through `__typeof__`,
/// which is not evaluated, so the binary has no reference to the symbol and no DT_NEEDED on the
/// library. OpenSSL's function-like macros over a function (SSL_set_mtu over SSL_ctrl, EVP_EC_gen
/// over EVP_PKEY_Q_keygen, ...) are written out below through the accessors, never used as they
/// are, since they would name the function itself.
///
/// Call `rtc_openssl_load_error()` once before any of them (the DTLS module's `OpenSSLLibrary`
/// does, before a certificate is made or read): it resolves every symbol listed below and says
/// what is missing. After it returned NULL every accessor finds its symbol (the libraries are
/// never unloaded), so no call can go through a null pointer; an accessor that still found
/// nothing would abort naming the symbol rather than return NULL.
#include <dlfcn.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/srtp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>

// The `_Nonnull` on the accessors would make clang ask for nullability on every pointer here.
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wnullability-completeness"

#define RTC_OPENSSL_LIBSSL "libssl.so.3"
#define RTC_OPENSSL_LIBCRYPTO "libcrypto.so.3"

/// Every function called through an accessor, with its library: one line each. libssl needs
/// libcrypto (its DT_NEEDED), so loading it loads both.
#define RTC_OPENSSL_SYMBOLS(X)                                   \
    X(RTC_OPENSSL_LIBSSL, DTLS_method)                           \
    X(RTC_OPENSSL_LIBSSL, SSL_CTX_check_private_key)             \
    X(RTC_OPENSSL_LIBSSL, SSL_CTX_ctrl)                          \
    X(RTC_OPENSSL_LIBSSL, SSL_CTX_free)                          \
    X(RTC_OPENSSL_LIBSSL, SSL_CTX_new)                           \
    X(RTC_OPENSSL_LIBSSL, SSL_CTX_set_options)                   \
    X(RTC_OPENSSL_LIBSSL, SSL_CTX_set_tlsext_use_srtp)           \
    X(RTC_OPENSSL_LIBSSL, SSL_CTX_use_PrivateKey)                \
    X(RTC_OPENSSL_LIBSSL, SSL_CTX_use_certificate)               \
    X(RTC_OPENSSL_LIBSSL, SSL_alert_desc_string_long)            \
    X(RTC_OPENSSL_LIBSSL, SSL_ctrl)                              \
    X(RTC_OPENSSL_LIBSSL, SSL_do_handshake)                      \
    X(RTC_OPENSSL_LIBSSL, SSL_export_keying_material)            \
    X(RTC_OPENSSL_LIBSSL, SSL_free)                              \
    X(RTC_OPENSSL_LIBSSL, SSL_get1_peer_certificate)             \
    X(RTC_OPENSSL_LIBSSL, SSL_get_error)                         \
    X(RTC_OPENSSL_LIBSSL, SSL_get_ex_data)                       \
    X(RTC_OPENSSL_LIBSSL, SSL_get_ex_data_X509_STORE_CTX_idx)    \
    X(RTC_OPENSSL_LIBSSL, SSL_get_selected_srtp_profile)         \
    X(RTC_OPENSSL_LIBSSL, SSL_new)                               \
    X(RTC_OPENSSL_LIBSSL, SSL_read)                              \
    X(RTC_OPENSSL_LIBSSL, SSL_set_accept_state)                  \
    X(RTC_OPENSSL_LIBSSL, SSL_set_bio)                           \
    X(RTC_OPENSSL_LIBSSL, SSL_set_connect_state)                 \
    X(RTC_OPENSSL_LIBSSL, SSL_set_ex_data)                       \
    X(RTC_OPENSSL_LIBSSL, SSL_set_verify)                        \
    X(RTC_OPENSSL_LIBSSL, SSL_shutdown)                          \
    X(RTC_OPENSSL_LIBCRYPTO, BIO_ctrl)                           \
    X(RTC_OPENSSL_LIBCRYPTO, BIO_ctrl_pending)                   \
    X(RTC_OPENSSL_LIBCRYPTO, BIO_free)                           \
    X(RTC_OPENSSL_LIBCRYPTO, BIO_new)                            \
    X(RTC_OPENSSL_LIBCRYPTO, BIO_new_file)                       \
    X(RTC_OPENSSL_LIBCRYPTO, BIO_read)                           \
    X(RTC_OPENSSL_LIBCRYPTO, BIO_s_mem)                          \
    X(RTC_OPENSSL_LIBCRYPTO, BIO_write)                          \
    X(RTC_OPENSSL_LIBCRYPTO, BN_free)                            \
    X(RTC_OPENSSL_LIBCRYPTO, BN_new)                             \
    X(RTC_OPENSSL_LIBCRYPTO, BN_rand)                            \
    X(RTC_OPENSSL_LIBCRYPTO, BN_to_ASN1_INTEGER)                 \
    X(RTC_OPENSSL_LIBCRYPTO, ERR_clear_error)                    \
    X(RTC_OPENSSL_LIBCRYPTO, ERR_error_string_n)                 \
    X(RTC_OPENSSL_LIBCRYPTO, ERR_get_error)                      \
    X(RTC_OPENSSL_LIBCRYPTO, EVP_PKEY_Q_keygen)                  \
    X(RTC_OPENSSL_LIBCRYPTO, EVP_PKEY_free)                      \
    X(RTC_OPENSSL_LIBCRYPTO, EVP_sha256)                         \
    X(RTC_OPENSSL_LIBCRYPTO, OPENSSL_cleanse)                    \
    X(RTC_OPENSSL_LIBCRYPTO, PEM_read_bio_PrivateKey)            \
    X(RTC_OPENSSL_LIBCRYPTO, PEM_read_bio_X509)                  \
    X(RTC_OPENSSL_LIBCRYPTO, PEM_write_bio_X509)                 \
    X(RTC_OPENSSL_LIBCRYPTO, X509_NAME_add_entry_by_txt)         \
    X(RTC_OPENSSL_LIBCRYPTO, X509_STORE_CTX_get0_cert)           \
    X(RTC_OPENSSL_LIBCRYPTO, X509_STORE_CTX_get_ex_data)         \
    X(RTC_OPENSSL_LIBCRYPTO, X509_STORE_CTX_set_error)           \
    X(RTC_OPENSSL_LIBCRYPTO, X509_check_private_key)             \
    X(RTC_OPENSSL_LIBCRYPTO, X509_digest)                        \
    X(RTC_OPENSSL_LIBCRYPTO, X509_free)                          \
    X(RTC_OPENSSL_LIBCRYPTO, X509_get_serialNumber)              \
    X(RTC_OPENSSL_LIBCRYPTO, X509_get_subject_name)              \
    X(RTC_OPENSSL_LIBCRYPTO, X509_getm_notAfter)                 \
    X(RTC_OPENSSL_LIBCRYPTO, X509_getm_notBefore)                \
    X(RTC_OPENSSL_LIBCRYPTO, X509_gmtime_adj)                    \
    X(RTC_OPENSSL_LIBCRYPTO, X509_new)                           \
    X(RTC_OPENSSL_LIBCRYPTO, X509_set_issuer_name)               \
    X(RTC_OPENSSL_LIBCRYPTO, X509_set_pubkey)                    \
    X(RTC_OPENSSL_LIBCRYPTO, X509_set_version)                   \
    X(RTC_OPENSSL_LIBCRYPTO, X509_sign)

/// `name` in the library `soname`, which is loaded (RTLD_NOW | RTLD_LOCAL) if it is not yet; NULL
/// when either is missing, and then dlerror() says why. Loading a loaded library only counts a
/// reference (nothing here unloads one).
static inline void *rtc_openssl_lazy_symbol(const char *soname, const char *name) {
    void *library = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    return library == NULL ? NULL : dlsym(library, name);
}

/// `rtc_openssl_lazy_symbol` for the accessors: never NULL. Reached only after
/// `rtc_openssl_load_error()` found every symbol, so the abort is a guard, not a path.
static inline void *rtc_openssl_required_symbol(const char *soname, const char *name) {
    void *symbol = rtc_openssl_lazy_symbol(soname, name);
    if (symbol == NULL) {
        const char *why = dlerror();
        fprintf(stderr, "rtc: %s from %s is missing (%s)\n", name, soname, why != NULL ? why : "?");
        abort();
    }
    return symbol;
}

/// `rtc_<name>()`: the address of `name`, resolved on the first call and then kept. Threads that
/// race on the first call store the same value. (EVP_PKEY_Q_keygen's is variadic, which Swift
/// does not import: only `rtc_evp_ec_gen` below calls it.)
#define RTC_OPENSSL_LAZY(soname, name)                                           \
    static inline __typeof__(&name) _Nonnull rtc_##name(void) {                  \
        static void *cached;                                                     \
        void *symbol = __atomic_load_n(&cached, __ATOMIC_ACQUIRE);               \
        if (symbol == NULL) {                                                    \
            symbol = rtc_openssl_required_symbol(soname, #name);                 \
            __atomic_store_n(&cached, symbol, __ATOMIC_RELEASE);                 \
        }                                                                        \
        return (__typeof__(&name))symbol;                                        \
    }
RTC_OPENSSL_SYMBOLS(RTC_OPENSSL_LAZY)

/// dlerror()'s text (it names the library, and the symbol when that is what is missing), else
/// the soname.
static inline const char *rtc_openssl_dlerror(const char *soname) {
    const char *why = dlerror();
    return why != NULL ? why : soname;
}

/// NULL when both libraries and every symbol of `RTC_OPENSSL_SYMBOLS` are there; else why not,
/// valid until the next dl* call on this thread. Resolves each one, so it also loads the
/// libraries.
static inline const char *_Nullable rtc_openssl_load_error(void) {
#define RTC_OPENSSL_CHECK(soname, name) \
    if (rtc_openssl_lazy_symbol(soname, #name) == NULL) return rtc_openssl_dlerror(soname);
    RTC_OPENSSL_SYMBOLS(RTC_OPENSSL_CHECK)
#undef RTC_OPENSSL_CHECK
    return NULL;
}

/// The SSL_OP_* options are `SSL_OP_BIT(n)`, a function-like macro with casts, which Swift does not
/// import; these constants carry the ones the DTLS context sets.
static const uint64_t RTC_SSL_OP_NO_QUERY_MTU = SSL_OP_NO_QUERY_MTU;
static const uint64_t RTC_SSL_OP_NO_TICKET = SSL_OP_NO_TICKET;
static const uint64_t RTC_SSL_OP_NO_RENEGOTIATION = SSL_OP_NO_RENEGOTIATION;
static const uint64_t RTC_SSL_OP_NO_COMPRESSION = SSL_OP_NO_COMPRESSION;

/// SSL_CTX_set_min_proto_version is a macro over SSL_CTX_ctrl.
static inline int rtc_ssl_ctx_set_min_proto_version(SSL_CTX *ctx, int version) {
    return (int)rtc_SSL_CTX_ctrl()(ctx, SSL_CTRL_SET_MIN_PROTO_VERSION, version, NULL);
}
/// SSL_CTX_set_max_proto_version is a macro over SSL_CTX_ctrl.
static inline int rtc_ssl_ctx_set_max_proto_version(SSL_CTX *ctx, int version) {
    return (int)rtc_SSL_CTX_ctrl()(ctx, SSL_CTRL_SET_MAX_PROTO_VERSION, version, NULL);
}
/// SSL_CTX_set_session_cache_mode is a macro over SSL_CTX_ctrl.
static inline void rtc_ssl_ctx_disable_session_cache(SSL_CTX *ctx) {
    rtc_SSL_CTX_ctrl()(ctx, SSL_CTRL_SET_SESS_CACHE_MODE, SSL_SESS_CACHE_OFF, NULL);
}
/// SSL_set_mtu is a macro over SSL_ctrl: the largest datagram DTLS writes (with
/// SSL_OP_NO_QUERY_MTU, no path-MTU query on the BIO).
static inline long rtc_ssl_set_mtu(SSL *ssl, long mtu) {
    return rtc_SSL_ctrl()(ssl, SSL_CTRL_SET_MTU, mtu, NULL);
}
/// DTLSv1_get_timeout is a macro over SSL_ctrl: 1 and the time left when a retransmission timer
/// runs, 0 when none does.
static inline int rtc_dtls_get_timeout(SSL *ssl, struct timeval *left) {
    return (int)rtc_SSL_ctrl()(ssl, DTLS_CTRL_GET_TIMEOUT, 0, (void *)left);
}
/// DTLSv1_handle_timeout is a macro over SSL_ctrl: retransmits the last flight if its timer has
/// expired (1), does nothing if not (0), -1 when the handshake has to be given up.
static inline int rtc_dtls_handle_timeout(SSL *ssl) {
    return (int)rtc_SSL_ctrl()(ssl, DTLS_CTRL_HANDLE_TIMEOUT, 0, NULL);
}
/// EVP_EC_gen is a macro over EVP_PKEY_Q_keygen, which is variadic (the curve's name is its one
/// extra argument, a `char *` for "EC").
static inline EVP_PKEY *rtc_evp_ec_gen(const char *curve) {
    return rtc_EVP_PKEY_Q_keygen()(NULL, NULL, "EC", (char *)curve);
}

#pragma clang diagnostic pop
#endif
