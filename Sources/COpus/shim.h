#ifndef RTC_COPUS_SHIM_H
#define RTC_COPUS_SHIM_H
#include <opus/opus.h>

/// `opus_encoder_ctl` is variadic and its requests (`OPUS_SET_BITRATE(x)` …) are function-like
/// macros that also type-check the argument; Swift can call neither. Each wrapper below issues
/// one request and returns libopus's error code (OPUS_OK on success).
static inline int rtc_opus_set_bitrate(OpusEncoder *e, opus_int32 bps) {
    return opus_encoder_ctl(e, OPUS_SET_BITRATE(bps));
}
static inline int rtc_opus_get_bitrate(OpusEncoder *e, opus_int32 *bps) {
    return opus_encoder_ctl(e, OPUS_GET_BITRATE(bps));
}
static inline int rtc_opus_set_complexity(OpusEncoder *e, opus_int32 c) {
    return opus_encoder_ctl(e, OPUS_SET_COMPLEXITY(c));
}
static inline int rtc_opus_set_inband_fec(OpusEncoder *e, opus_int32 on) {
    return opus_encoder_ctl(e, OPUS_SET_INBAND_FEC(on));
}
static inline int rtc_opus_set_packet_loss_perc(OpusEncoder *e, opus_int32 pct) {
    return opus_encoder_ctl(e, OPUS_SET_PACKET_LOSS_PERC(pct));
}
static inline int rtc_opus_set_dtx(OpusEncoder *e, opus_int32 on) {
    return opus_encoder_ctl(e, OPUS_SET_DTX(on));
}
static inline int rtc_opus_set_vbr(OpusEncoder *e, opus_int32 on) {
    return opus_encoder_ctl(e, OPUS_SET_VBR(on));
}
static inline int rtc_opus_set_signal_music(OpusEncoder *e) {
    return opus_encoder_ctl(e, OPUS_SET_SIGNAL(OPUS_SIGNAL_MUSIC));
}
static inline int rtc_opus_get_lookahead(OpusEncoder *e, opus_int32 *samples) {
    return opus_encoder_ctl(e, OPUS_GET_LOOKAHEAD(samples));
}
static inline int rtc_opus_get_in_dtx(OpusEncoder *e, opus_int32 *flag) {
    return opus_encoder_ctl(e, OPUS_GET_IN_DTX(flag));
}
#endif
