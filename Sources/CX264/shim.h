#ifndef RTC_CX264_SHIM_H
#define RTC_CX264_SHIM_H
#include <stdint.h>
#include <x264.h>

/// `x264_encoder_open` is a macro that expands to a symbol carrying the library's build number
/// (`x264_encoder_open_164`), so Swift cannot see it. This wrapper calls the macro at compile time
/// against whatever x264.h is installed, keeping the Swift side version-independent.
static inline x264_t *rtc_x264_encoder_open(x264_param_t *param) {
    return x264_encoder_open(param);
}

/// The build number the headers were compiled against (also a macro).
static inline int rtc_x264_build(void) { return X264_BUILD; }

#endif
