#ifndef RTC_CPULSE_SHIM_H
#define RTC_CPULSE_SHIM_H
/// libpulse 16 (Debian libpulse-dev): the asynchronous API on a threaded main loop, which speaks
/// to PulseAudio and to PipeWire's pulse server alike.
///
/// Loaded on first use, not at start. Only `--audio system` (and rtc-capture's system audio)
/// talks to a sound server, yet libpulse with the libraries it brings in (libpulsecommon,
/// libsndfile, vorbis, FLAC, dbus, systemd, X11, ...) kept about 2.3 MB resident in every
/// rtc-publish just by being loaded (their relocations and constructors). So nothing links it:
/// each function Swift calls is reached through `rtc_<name>()`, which returns that function's
/// address, `dlopen`ing libpulse by soname (RTLD_NOW | RTLD_LOCAL) and `dlsym`ing the name the
/// first time. The type comes from the real declaration through `__typeof__`, which is not
/// evaluated, so the binary has no reference to the symbol and no DT_NEEDED on the library.
///
/// Call `rtc_pulse_load_error()` once before any of them (`SystemAudioCapture`'s session does,
/// before its main loop exists): it resolves every symbol listed below and says what is missing.
/// After it returned NULL every accessor finds its symbol (the library is never unloaded), so no
/// call can go through a null pointer; an accessor that still found nothing would abort naming
/// the symbol rather than return NULL.
#include <dlfcn.h>
#include <pulse/pulseaudio.h>
#include <stdio.h>
#include <stdlib.h>

// The `_Nonnull` on the accessors would make clang ask for nullability on every pointer here.
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wnullability-completeness"

#define RTC_PULSE_LIBPULSE "libpulse.so.0"

/// Every function called through an accessor, with its library: one line each.
#define RTC_PULSE_SYMBOLS(X)                               \
    X(RTC_PULSE_LIBPULSE, pa_channel_map_init_stereo)      \
    X(RTC_PULSE_LIBPULSE, pa_context_connect)              \
    X(RTC_PULSE_LIBPULSE, pa_context_disconnect)           \
    X(RTC_PULSE_LIBPULSE, pa_context_errno)                \
    X(RTC_PULSE_LIBPULSE, pa_context_get_server)           \
    X(RTC_PULSE_LIBPULSE, pa_context_get_server_info)      \
    X(RTC_PULSE_LIBPULSE, pa_context_get_source_info_list) \
    X(RTC_PULSE_LIBPULSE, pa_context_get_state)            \
    X(RTC_PULSE_LIBPULSE, pa_context_new)                  \
    X(RTC_PULSE_LIBPULSE, pa_context_set_state_callback)   \
    X(RTC_PULSE_LIBPULSE, pa_context_unref)                \
    X(RTC_PULSE_LIBPULSE, pa_operation_unref)              \
    X(RTC_PULSE_LIBPULSE, pa_stream_connect_record)        \
    X(RTC_PULSE_LIBPULSE, pa_stream_disconnect)            \
    X(RTC_PULSE_LIBPULSE, pa_stream_drop)                  \
    X(RTC_PULSE_LIBPULSE, pa_stream_get_device_name)       \
    X(RTC_PULSE_LIBPULSE, pa_stream_get_latency)           \
    X(RTC_PULSE_LIBPULSE, pa_stream_get_state)             \
    X(RTC_PULSE_LIBPULSE, pa_stream_new)                   \
    X(RTC_PULSE_LIBPULSE, pa_stream_peek)                  \
    X(RTC_PULSE_LIBPULSE, pa_stream_set_read_callback)     \
    X(RTC_PULSE_LIBPULSE, pa_stream_set_state_callback)    \
    X(RTC_PULSE_LIBPULSE, pa_stream_unref)                 \
    X(RTC_PULSE_LIBPULSE, pa_strerror)                     \
    X(RTC_PULSE_LIBPULSE, pa_threaded_mainloop_free)       \
    X(RTC_PULSE_LIBPULSE, pa_threaded_mainloop_get_api)    \
    X(RTC_PULSE_LIBPULSE, pa_threaded_mainloop_lock)       \
    X(RTC_PULSE_LIBPULSE, pa_threaded_mainloop_new)        \
    X(RTC_PULSE_LIBPULSE, pa_threaded_mainloop_signal)     \
    X(RTC_PULSE_LIBPULSE, pa_threaded_mainloop_start)      \
    X(RTC_PULSE_LIBPULSE, pa_threaded_mainloop_stop)       \
    X(RTC_PULSE_LIBPULSE, pa_threaded_mainloop_unlock)     \
    X(RTC_PULSE_LIBPULSE, pa_threaded_mainloop_wait)       \
    X(RTC_PULSE_LIBPULSE, pa_timeval_add)                  \
    X(RTC_PULSE_LIBPULSE, pa_usec_to_bytes)

/// `name` in the library `soname`, which is loaded (RTLD_NOW | RTLD_LOCAL) if it is not yet; NULL
/// when either is missing, and then dlerror() says why. Loading a loaded library only counts a
/// reference (nothing here unloads one).
static inline void *rtc_pulse_lazy_symbol(const char *soname, const char *name) {
    void *library = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    return library == NULL ? NULL : dlsym(library, name);
}

/// `rtc_pulse_lazy_symbol` for the accessors: never NULL. Reached only after
/// `rtc_pulse_load_error()` found every symbol, so the abort is a guard, not a path.
static inline void *rtc_pulse_required_symbol(const char *soname, const char *name) {
    void *symbol = rtc_pulse_lazy_symbol(soname, name);
    if (symbol == NULL) {
        const char *why = dlerror();
        fprintf(stderr, "rtc: %s from %s is missing (%s)\n", name, soname, why != NULL ? why : "?");
        abort();
    }
    return symbol;
}

/// `rtc_<name>()`: the address of `name`, resolved on the first call and then kept. Threads that
/// race on the first call store the same value.
#define RTC_PULSE_LAZY(soname, name)                                             \
    static inline __typeof__(&name) _Nonnull rtc_##name(void) {                  \
        static void *cached;                                                     \
        void *symbol = __atomic_load_n(&cached, __ATOMIC_ACQUIRE);               \
        if (symbol == NULL) {                                                    \
            symbol = rtc_pulse_required_symbol(soname, #name);                   \
            __atomic_store_n(&cached, symbol, __ATOMIC_RELEASE);                 \
        }                                                                        \
        return (__typeof__(&name))symbol;                                        \
    }
RTC_PULSE_SYMBOLS(RTC_PULSE_LAZY)

/// dlerror()'s text (it names the library, and the symbol when that is what is missing), else
/// the soname.
static inline const char *rtc_pulse_dlerror(const char *soname) {
    const char *why = dlerror();
    return why != NULL ? why : soname;
}

/// NULL when the library and every symbol of `RTC_PULSE_SYMBOLS` are there; else why not, valid
/// until the next dl* call on this thread. Resolves each one, so it also loads the library.
static inline const char *_Nullable rtc_pulse_load_error(void) {
#define RTC_PULSE_CHECK(soname, name) \
    if (rtc_pulse_lazy_symbol(soname, #name) == NULL) return rtc_pulse_dlerror(soname);
    RTC_PULSE_SYMBOLS(RTC_PULSE_CHECK)
#undef RTC_PULSE_CHECK
    return NULL;
}

#pragma clang diagnostic pop
#endif
