#ifndef RTC_CPULSE_SHIM_H
#define RTC_CPULSE_SHIM_H
/* libpulse 16 (Debian libpulse-dev): the asynchronous API on a threaded main loop, which speaks
   to PulseAudio and to PipeWire's pulse server alike. */
#include <pulse/pulseaudio.h>
#endif
