#ifndef RTC_CNICE_SHIM_H
#define RTC_CNICE_SHIM_H
/// libnice 0.1.21 (Debian libnice-dev) for the ICE module: the RFC 8445 agent, its GLib main
/// context, and the GSocket of the selected pair. Only what Swift cannot call is wrapped here.
#include <gio/gio.h>
#include <glib-object.h>
#include <glib.h>
#include <nice/agent.h>
#include <nice/address.h>
#include <nice/candidate.h>

/// g_object_set is variadic (Swift does not import C variadics): one typed setter per kind of
/// NiceAgent property (controlling-mode, ice-tcp, stun-server-port, ...).
static inline void rtc_nice_set_bool(NiceAgent *agent, const char *name, gboolean value) {
    g_object_set(agent, name, value, NULL);
}
/// g_object_set is variadic: guint properties (stun-server-port, stun-max-retransmissions, ...).
static inline void rtc_nice_set_uint(NiceAgent *agent, const char *name, guint value) {
    g_object_set(agent, name, value, NULL);
}
/// g_object_set is variadic: string properties (stun-server).
static inline void rtc_nice_set_string(NiceAgent *agent, const char *name, const char *value) {
    g_object_set(agent, name, value, NULL);
}
/// g_object_get is variadic: boolean properties (consent-freshness, controlling-mode).
static inline gboolean rtc_nice_get_bool(NiceAgent *agent, const char *name) {
    gboolean value = FALSE;
    g_object_get(agent, name, &value, NULL);
    return value;
}

/// g_signal_connect is a macro and G_CALLBACK a cast Swift cannot write: one typed connector per
/// signal the agent listens to, so the handler's C type is checked here once.
typedef void (*rtc_nice_component_state_cb)(NiceAgent *, guint stream, guint component, guint state,
                                            gpointer);
static inline gulong rtc_nice_connect_component_state_changed(NiceAgent *agent,
                                                              rtc_nice_component_state_cb cb,
                                                              gpointer data) {
    return g_signal_connect(agent, "component-state-changed", G_CALLBACK(cb), data);
}
/// "new-candidate-full": a local candidate was gathered (trickle out).
typedef void (*rtc_nice_candidate_cb)(NiceAgent *, NiceCandidate *, gpointer);
static inline gulong rtc_nice_connect_new_candidate_full(NiceAgent *agent, rtc_nice_candidate_cb cb,
                                                         gpointer data) {
    return g_signal_connect(agent, "new-candidate-full", G_CALLBACK(cb), data);
}
/// "new-remote-candidate-full": a remote candidate learnt from checks (peer-reflexive).
static inline gulong rtc_nice_connect_new_remote_candidate_full(NiceAgent *agent,
                                                                rtc_nice_candidate_cb cb,
                                                                gpointer data) {
    return g_signal_connect(agent, "new-remote-candidate-full", G_CALLBACK(cb), data);
}
/// "candidate-gathering-done": no more local candidates (end-of-candidates).
typedef void (*rtc_nice_stream_cb)(NiceAgent *, guint stream, gpointer);
static inline gulong rtc_nice_connect_candidate_gathering_done(NiceAgent *agent, rtc_nice_stream_cb cb,
                                                               gpointer data) {
    return g_signal_connect(agent, "candidate-gathering-done", G_CALLBACK(cb), data);
}
/// "initial-binding-request-received": the peer's first connectivity check (a Binding request
/// with our ufrag) arrived: its side of ICE has started.
static inline gulong rtc_nice_connect_initial_binding_request_received(NiceAgent *agent,
                                                                       rtc_nice_stream_cb cb,
                                                                       gpointer data) {
    return g_signal_connect(agent, "initial-binding-request-received", G_CALLBACK(cb), data);
}
/// "new-selected-pair-full": the pair media goes over changed.
typedef void (*rtc_nice_pair_cb)(NiceAgent *, guint stream, guint component, NiceCandidate *local,
                                 NiceCandidate *remote, gpointer);
static inline gulong rtc_nice_connect_new_selected_pair_full(NiceAgent *agent, rtc_nice_pair_cb cb,
                                                             gpointer data) {
    return g_signal_connect(agent, "new-selected-pair-full", G_CALLBACK(cb), data);
}

#endif
