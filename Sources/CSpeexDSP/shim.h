#ifndef RTC_CSPEEXDSP_SHIM_H
#define RTC_CSPEEXDSP_SHIM_H
#include <speex/speex_resampler.h>
#endif
