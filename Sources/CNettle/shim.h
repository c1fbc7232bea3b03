#ifndef RTC_CNETTLE_SHIM_H
#define RTC_CNETTLE_SHIM_H
/// Nettle: the AES-CTR and HMAC-SHA1 that libsrtp2's AES-CM suites run on here
/// (Sources/SRTP/NettleTransforms.swift). Its names are macros for `nettle_`-prefixed symbols,
/// which is what Swift sees.
#include <nettle/aes.h>
#include <nettle/ctr.h>
#include <nettle/hmac.h>
#include <nettle/version.h>
#endif
