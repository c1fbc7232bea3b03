#ifndef RTC_CSRTP_SHIM_H
#define RTC_CSRTP_SHIM_H
#include <srtp2/srtp.h>
/// The cipher and authenticator interfaces libsrtp2 lets a program replace (see
/// Sources/SRTP/NettleTransforms.swift), and the algorithm ids they are registered under.
#include <srtp2/cipher.h>
#include <srtp2/auth.h>
#include <srtp2/crypto_types.h>

/// libsrtp's per-suite policy setters are partly function-like macros
/// (`srtp_crypto_policy_set_aes_cm_128_hmac_sha1_80` is `srtp_crypto_policy_set_rtp_default`),
/// which Swift cannot call. These wrappers give every suite we offer one callable name.
static inline void rtc_srtp_policy_aes_cm_128_hmac_sha1_80(srtp_crypto_policy_t *p) {
    srtp_crypto_policy_set_aes_cm_128_hmac_sha1_80(p);
}
static inline void rtc_srtp_policy_aes_cm_128_hmac_sha1_32(srtp_crypto_policy_t *p) {
    srtp_crypto_policy_set_aes_cm_128_hmac_sha1_32(p);
}
static inline void rtc_srtp_policy_aead_aes_128_gcm(srtp_crypto_policy_t *p) {
    srtp_crypto_policy_set_aes_gcm_128_16_auth(p);
}
/// SRTP_MAX_TRAILER_LEN is a macro: the room `srtp_protect` may append (auth tag, MKI).
static inline int rtc_srtp_max_trailer_len(void) { return SRTP_MAX_TRAILER_LEN; }
#endif
