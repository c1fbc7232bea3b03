#ifndef RTC_CXCB_SHIM_H
#define RTC_CXCB_SHIM_H
/* XCB and the extensions the X11 capture uses (Debian libxcb*-dev 1.15), plus System V shared
   memory for MIT-SHM segments. */
#include <xcb/xcb.h>
#include <xcb/shm.h>
#include <xcb/xfixes.h>
#include <xcb/randr.h>
#include <xcb/damage.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#endif
