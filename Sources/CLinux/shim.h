#ifndef RTC_CLINUX_SHIM_H
#define RTC_CLINUX_SHIM_H
#include <sys/prctl.h>

/// prctl(2) is variadic, which Swift cannot call. PR_SET_THP_DISABLE (Linux 3.15) turns
/// transparent huge pages off for this process and its children; 0 on success, -1 with errno.
static inline int rtc_disable_transparent_huge_pages(void) {
    return prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
}

#endif
