#ifndef RTC_CNICE_SHIM_H
#define RTC_CNICE_SHIM_H
/// libnice 0.1.21 (Debian libnice-dev) for the ICE module: the RFC 8445 agent, its GLib main
/// context, and the GSocket of the selected pair. Only what Swift cannot call is wrapped here.
///
/// Loaded on first use, not at start. Only WebRTC viewers and WHIP make ICE agents, and most jobs
/// have neither, yet libnice, GIO, GObject and GLib, with the ~35 libraries libnice brings in
/// (gupnp-igd, libsoup, libxml2, ICU, sqlite, gnutls, ...), kept about 6.3 MB resident in every
/// rtc-publish just by being loaded (their relocations and constructors). So nothing links them:
/// each function Swift calls is reached through `rtc_<name>()`, which returns that function's
/// address, `dlopen`ing its library by soname (RTLD_NOW | RTLD_LOCAL) and `dlsym`ing the name the
/// first time. The type comes from the real declaration through `__typeof__`, which is not
/// evaluated, so the binary has no reference to the symbol and no DT_NEEDED on the library.
///
/// Call `rtc_nice_load_error()` once before any of them (`ICEAgent.init` does, before GLib is
/// touched): it resolves every symbol listed below and says what is missing. After it returned
/// NULL every accessor finds its symbol (the libraries are never unloaded), so no call can go
/// through a null pointer; an accessor that still found nothing would abort naming the symbol
/// rather than return NULL.
#include <dlfcn.h>
#include <gio/gio.h>
#include <glib-object.h>
#include <glib.h>
#include <nice/address.h>
#include <nice/agent.h>
#include <nice/candidate.h>
#include <stdio.h>
#include <stdlib.h>

// The `_Nonnull` on the accessors would make clang ask for nullability on every pointer here.
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wnullability-completeness"

#define RTC_NICE_LIBNICE "libnice.so.10"
#define RTC_NICE_LIBGIO "libgio-2.0.so.0"
#define RTC_NICE_LIBGOBJECT "libgobject-2.0.so.0"
#define RTC_NICE_LIBGLIB "libglib-2.0.so.0"

/// Every function called through an accessor, with its library: one line each.
#define RTC_NICE_SYMBOLS(X)                                  \
    X(RTC_NICE_LIBNICE, nice_address_copy_to_sockaddr)       \
    X(RTC_NICE_LIBNICE, nice_address_get_port)               \
    X(RTC_NICE_LIBNICE, nice_address_init)                   \
    X(RTC_NICE_LIBNICE, nice_address_set_from_string)        \
    X(RTC_NICE_LIBNICE, nice_address_to_string)              \
    X(RTC_NICE_LIBNICE, nice_agent_add_local_address)        \
    X(RTC_NICE_LIBNICE, nice_agent_add_stream)               \
    X(RTC_NICE_LIBNICE, nice_agent_attach_recv)              \
    X(RTC_NICE_LIBNICE, nice_agent_close_async)              \
    X(RTC_NICE_LIBNICE, nice_agent_gather_candidates)        \
    X(RTC_NICE_LIBNICE, nice_agent_generate_local_candidate_sdp) \
    X(RTC_NICE_LIBNICE, nice_agent_get_local_credentials)    \
    X(RTC_NICE_LIBNICE, nice_agent_get_selected_pair)        \
    X(RTC_NICE_LIBNICE, nice_agent_get_selected_socket)      \
    X(RTC_NICE_LIBNICE, nice_agent_new_full)                 \
    X(RTC_NICE_LIBNICE, nice_agent_parse_remote_candidate_sdp) \
    X(RTC_NICE_LIBNICE, nice_agent_peer_candidate_gathering_done) \
    X(RTC_NICE_LIBNICE, nice_agent_restart_stream)           \
    X(RTC_NICE_LIBNICE, nice_agent_send)                     \
    X(RTC_NICE_LIBNICE, nice_agent_set_local_credentials)    \
    X(RTC_NICE_LIBNICE, nice_agent_set_port_range)           \
    X(RTC_NICE_LIBNICE, nice_agent_set_relay_info)           \
    X(RTC_NICE_LIBNICE, nice_agent_set_remote_candidates)    \
    X(RTC_NICE_LIBNICE, nice_agent_set_remote_credentials)   \
    X(RTC_NICE_LIBNICE, nice_candidate_free)                 \
    X(RTC_NICE_LIBGIO, g_socket_get_fd)                      \
    X(RTC_NICE_LIBGOBJECT, g_object_get)                     \
    X(RTC_NICE_LIBGOBJECT, g_object_set)                     \
    X(RTC_NICE_LIBGOBJECT, g_object_unref)                   \
    X(RTC_NICE_LIBGOBJECT, g_signal_connect_data)            \
    X(RTC_NICE_LIBGOBJECT, g_signal_handler_disconnect)      \
    X(RTC_NICE_LIBGLIB, g_free)                              \
    X(RTC_NICE_LIBGLIB, g_idle_source_new)                   \
    X(RTC_NICE_LIBGLIB, g_main_context_is_owner)             \
    X(RTC_NICE_LIBGLIB, g_main_context_new)                  \
    X(RTC_NICE_LIBGLIB, g_main_context_pop_thread_default)   \
    X(RTC_NICE_LIBGLIB, g_main_context_push_thread_default)  \
    X(RTC_NICE_LIBGLIB, g_main_context_unref)                \
    X(RTC_NICE_LIBGLIB, g_main_loop_get_context)             \
    X(RTC_NICE_LIBGLIB, g_main_loop_new)                     \
    X(RTC_NICE_LIBGLIB, g_main_loop_quit)                    \
    X(RTC_NICE_LIBGLIB, g_main_loop_run)                     \
    X(RTC_NICE_LIBGLIB, g_main_loop_unref)                   \
    X(RTC_NICE_LIBGLIB, g_slist_append)                      \
    X(RTC_NICE_LIBGLIB, g_slist_free)                        \
    X(RTC_NICE_LIBGLIB, g_source_attach)                     \
    X(RTC_NICE_LIBGLIB, g_source_set_callback)               \
    X(RTC_NICE_LIBGLIB, g_source_set_priority)               \
    X(RTC_NICE_LIBGLIB, g_source_unref)                      \
    X(RTC_NICE_LIBGLIB, g_thread_join)                       \
    X(RTC_NICE_LIBGLIB, g_thread_new)

/// `name` in the library `soname`, which is loaded (RTLD_NOW | RTLD_LOCAL) if it is not yet; NULL
/// when either is missing, and then dlerror() says why. Loading a loaded library only counts a
/// reference (nothing here unloads one).
static inline void *rtc_nice_lazy_symbol(const char *soname, const char *name) {
    void *library = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    return library == NULL ? NULL : dlsym(library, name);
}

/// `rtc_nice_lazy_symbol` for the accessors: never NULL. Reached only after
/// `rtc_nice_load_error()` found every symbol, so the abort is a guard, not a path.
static inline void *rtc_nice_required_symbol(const char *soname, const char *name) {
    void *symbol = rtc_nice_lazy_symbol(soname, name);
    if (symbol == NULL) {
        const char *why = dlerror();
        fprintf(stderr, "rtc: %s from %s is missing (%s)\n", name, soname, why != NULL ? why : "?");
        abort();
    }
    return symbol;
}

/// `rtc_<name>()`: the address of `name`, resolved on the first call and then kept. Threads that
/// race on the first call store the same value.
#define RTC_NICE_LAZY(soname, name)                                              \
    static inline __typeof__(&name) _Nonnull rtc_##name(void) {                  \
        static void *cached;                                                     \
        void *symbol = __atomic_load_n(&cached, __ATOMIC_ACQUIRE);               \
        if (symbol == NULL) {                                                    \
            symbol = rtc_nice_required_symbol(soname, #name);                    \
            __atomic_store_n(&cached, symbol, __ATOMIC_RELEASE);                 \
        }                                                                        \
        return (__typeof__(&name))symbol;                                        \
    }
RTC_NICE_SYMBOLS(RTC_NICE_LAZY)

/// dlerror()'s text (it names the library, and the symbol when that is what is missing), else
/// the soname.
static inline const char *rtc_nice_dlerror(const char *soname) {
    const char *why = dlerror();
    return why != NULL ? why : soname;
}

/// NULL when every library and symbol of `RTC_NICE_SYMBOLS` is there; else why not, valid until
/// the next dl* call on this thread. Resolves each one, so it also loads the libraries.
static inline const char *_Nullable rtc_nice_load_error(void) {
#define RTC_NICE_CHECK(soname, name) \
    if (rtc_nice_lazy_symbol(soname, #name) == NULL) return rtc_nice_dlerror(soname);
    RTC_NICE_SYMBOLS(RTC_NICE_CHECK)
#undef RTC_NICE_CHECK
    return NULL;
}

/// g_object_set is variadic (Swift does not import C variadics): one typed setter per kind of
/// NiceAgent property (controlling-mode, ice-tcp, stun-server-port, ...).
static inline void rtc_nice_set_bool(NiceAgent *agent, const char *name, gboolean value) {
    rtc_g_object_set()(agent, name, value, NULL);
}
/// g_object_set is variadic: guint properties (stun-server-port, stun-max-retransmissions, ...).
static inline void rtc_nice_set_uint(NiceAgent *agent, const char *name, guint value) {
    rtc_g_object_set()(agent, name, value, NULL);
}
/// g_object_set is variadic: string properties (stun-server).
static inline void rtc_nice_set_string(NiceAgent *agent, const char *name, const char *value) {
    rtc_g_object_set()(agent, name, value, NULL);
}
/// g_object_get is variadic: boolean properties (consent-freshness, controlling-mode).
static inline gboolean rtc_nice_get_bool(NiceAgent *agent, const char *name) {
    gboolean value = FALSE;
    rtc_g_object_get()(agent, name, &value, NULL);
    return value;
}

/// g_signal_connect is a macro and G_CALLBACK a cast Swift cannot write: one typed connector per
/// signal the agent listens to, so the handler's C type is checked here once.
typedef void (*rtc_nice_component_state_cb)(NiceAgent *, guint stream, guint component, guint state,
                                            gpointer);
static inline gulong rtc_nice_connect_component_state_changed(NiceAgent *agent,
                                                              rtc_nice_component_state_cb cb,
                                                              gpointer data) {
    return rtc_g_signal_connect_data()(agent, "component-state-changed", G_CALLBACK(cb), data, NULL,
                                       (GConnectFlags)0);
}
/// "new-candidate-full": a local candidate was gathered (trickle out).
typedef void (*rtc_nice_candidate_cb)(NiceAgent *, NiceCandidate *, gpointer);
static inline gulong rtc_nice_connect_new_candidate_full(NiceAgent *agent, rtc_nice_candidate_cb cb,
                                                         gpointer data) {
    return rtc_g_signal_connect_data()(agent, "new-candidate-full", G_CALLBACK(cb), data, NULL,
                                       (GConnectFlags)0);
}
/// "new-remote-candidate-full": a remote candidate learnt from checks (peer-reflexive).
static inline gulong rtc_nice_connect_new_remote_candidate_full(NiceAgent *agent,
                                                                rtc_nice_candidate_cb cb,
                                                                gpointer data) {
    return rtc_g_signal_connect_data()(agent, "new-remote-candidate-full", G_CALLBACK(cb),
                                       data, NULL, (GConnectFlags)0);
}
/// "candidate-gathering-done": no more local candidates (end-of-candidates).
typedef void (*rtc_nice_stream_cb)(NiceAgent *, guint stream, gpointer);
static inline gulong rtc_nice_connect_candidate_gathering_done(NiceAgent *agent, rtc_nice_stream_cb cb,
                                                               gpointer data) {
    return rtc_g_signal_connect_data()(agent, "candidate-gathering-done", G_CALLBACK(cb),
                                       data, NULL, (GConnectFlags)0);
}
/// "initial-binding-request-received": the peer's first connectivity check (a Binding request
/// with our ufrag) arrived: its side of ICE has started.
static inline gulong rtc_nice_connect_initial_binding_request_received(NiceAgent *agent,
                                                                       rtc_nice_stream_cb cb,
                                                                       gpointer data) {
    return rtc_g_signal_connect_data()(agent, "initial-binding-request-received", G_CALLBACK(cb),
                                       data, NULL, (GConnectFlags)0);
}
/// "new-selected-pair-full": the pair media goes over changed.
typedef void (*rtc_nice_pair_cb)(NiceAgent *, guint stream, guint component, NiceCandidate *local,
                                 NiceCandidate *remote, gpointer);
static inline gulong rtc_nice_connect_new_selected_pair_full(NiceAgent *agent, rtc_nice_pair_cb cb,
                                                             gpointer data) {
    return rtc_g_signal_connect_data()(agent, "new-selected-pair-full", G_CALLBACK(cb), data, NULL,
                                       (GConnectFlags)0);
}

#pragma clang diagnostic pop
#endif
