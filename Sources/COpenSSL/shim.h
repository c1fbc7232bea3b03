#ifndef RTC_COPENSSL_SHIM_H
#define RTC_COPENSSL_SHIM_H
/// OpenSSL 3.0 (Debian libssl-dev) for the DTLS module: DTLS 1.2 with use_srtp, the RFC 5705
/// exporter, and the self-signed certificate WebRTC peers authenticate by fingerprint.
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
#include <sys/time.h>

/// The SSL_OP_* options are `SSL_OP_BIT(n)`, a function-like macro with casts, which Swift does not
/// import; these constants carry the ones the DTLS context sets.
static const uint64_t RTC_SSL_OP_NO_QUERY_MTU = SSL_OP_NO_QUERY_MTU;
static const uint64_t RTC_SSL_OP_NO_TICKET = SSL_OP_NO_TICKET;
static const uint64_t RTC_SSL_OP_NO_RENEGOTIATION = SSL_OP_NO_RENEGOTIATION;
static const uint64_t RTC_SSL_OP_NO_COMPRESSION = SSL_OP_NO_COMPRESSION;

/// SSL_CTX_set_min_proto_version is a macro over SSL_CTX_ctrl.
static inline int rtc_ssl_ctx_set_min_proto_version(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_min_proto_version(ctx, version);
}
/// SSL_CTX_set_max_proto_version is a macro over SSL_CTX_ctrl.
static inline int rtc_ssl_ctx_set_max_proto_version(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_max_proto_version(ctx, version);
}
/// SSL_CTX_set_session_cache_mode is a macro over SSL_CTX_ctrl.
static inline void rtc_ssl_ctx_disable_session_cache(SSL_CTX *ctx) {
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
}
/// SSL_set_mtu is a macro over SSL_ctrl: the largest datagram DTLS writes (with
/// SSL_OP_NO_QUERY_MTU, no path-MTU query on the BIO).
static inline long rtc_ssl_set_mtu(SSL *ssl, long mtu) { return SSL_set_mtu(ssl, mtu); }
/// DTLSv1_get_timeout is a macro over SSL_ctrl: 1 and the time left when a retransmission timer
/// runs, 0 when none does.
static inline int rtc_dtls_get_timeout(SSL *ssl, struct timeval *left) {
    return (int)DTLSv1_get_timeout(ssl, left);
}
/// DTLSv1_handle_timeout is a macro over SSL_ctrl: retransmits the last flight if its timer has
/// expired (1), does nothing if not (0), -1 when the handshake has to be given up.
static inline int rtc_dtls_handle_timeout(SSL *ssl) { return (int)DTLSv1_handle_timeout(ssl); }
/// EVP_EC_gen is a macro over EVP_PKEY_Q_keygen, which is variadic.
static inline EVP_PKEY *rtc_evp_ec_gen(const char *curve) { return EVP_EC_gen(curve); }
#endif
