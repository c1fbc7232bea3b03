#ifndef RTC_CNETTLE_SHIM_H
#define RTC_CNETTLE_SHIM_H
/// Nettle: the AES-CTR, HMAC-SHA1 and AES-GCM that libsrtp2's suites run on here
/// (Sources/SRTP/NettleTransforms.swift). Its names are macros for `nettle_`-prefixed symbols,
/// which is what Swift sees.
#include <nettle/aes.h>
#include <nettle/ctr.h>
#include <nettle/gcm.h>
#include <nettle/memops.h>
#include <nettle/hmac.h>
#include <nettle/version.h>
#endif
