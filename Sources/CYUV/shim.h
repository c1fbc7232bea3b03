#ifndef RTC_CYUV_SHIM_H
#define RTC_CYUV_SHIM_H
/* Debian's libyuv-dev ships no pkg-config file; the module map links "yuv" directly. */
#include <libyuv.h>
#endif
