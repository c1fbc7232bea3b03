#ifndef RTC_CVPX_SHIM_H
#define RTC_CVPX_SHIM_H
#include <vpx/vp8cx.h>
#include <vpx/vp8dx.h>
#include <vpx/vpx_decoder.h>
#include <vpx/vpx_encoder.h>
#include <vpx/vpx_image.h>

// Swift cannot call two kinds of libvpx entry points, so each one used is wrapped here:
// - `vpx_codec_enc_init` and `vpx_codec_dec_init` are macros that pass the ABI version the
//   headers were built with (`VPX_ENCODER_ABI_VERSION`, itself a macro expression) to the real
//   `*_init_ver` functions; these wrappers expand them against the installed headers.
// - `vpx_codec_control` is a macro over the variadic `vpx_codec_control_`, and Swift does not
//   call C variadic functions. One typed wrapper per control we use passes the argument with the
//   type vp8cx.h declares for it (`VPX_CTRL_USE_TYPE`), so an int is never read as a pointer.

static inline vpx_codec_err_t rtc_vpx_codec_enc_init(
    vpx_codec_ctx_t *ctx, vpx_codec_iface_t *iface, const vpx_codec_enc_cfg_t *cfg, vpx_codec_flags_t flags) {
    return vpx_codec_enc_init(ctx, iface, cfg, flags);
}

static inline vpx_codec_err_t rtc_vpx_codec_dec_init(
    vpx_codec_ctx_t *ctx, vpx_codec_iface_t *iface, const vpx_codec_dec_cfg_t *cfg, vpx_codec_flags_t flags) {
    return vpx_codec_dec_init(ctx, iface, cfg, flags);
}

/// VP8E_SET_CPUUSED (VP8 -16...16, VP9 -9...9): the speed/quality trade-off.
static inline vpx_codec_err_t rtc_vpx_set_cpu_used(vpx_codec_ctx_t *ctx, int value) {
    return vpx_codec_control(ctx, VP8E_SET_CPUUSED, value);
}

/// VP8E_SET_STATIC_THRESHOLD: macroblocks whose difference stays under it are skipped.
static inline vpx_codec_err_t rtc_vpx_set_static_threshold(vpx_codec_ctx_t *ctx, unsigned int value) {
    return vpx_codec_control(ctx, VP8E_SET_STATIC_THRESHOLD, value);
}

/// VP8E_SET_MAX_INTRA_BITRATE_PCT: a key frame's size cap, in percent of the average frame.
static inline vpx_codec_err_t rtc_vpx_set_max_intra_bitrate_pct(vpx_codec_ctx_t *ctx, unsigned int value) {
    return vpx_codec_control(ctx, VP8E_SET_MAX_INTRA_BITRATE_PCT, value);
}

/// VP8E_GET_LAST_QUANTIZER_64: the last frame's quantizer on the 0...63 scale of rc_*_quantizer.
static inline vpx_codec_err_t rtc_vpx_get_last_quantizer_64(vpx_codec_ctx_t *ctx, int *value) {
    return vpx_codec_control(ctx, VP8E_GET_LAST_QUANTIZER_64, value);
}

/// VP8E_SET_SCREEN_CONTENT_MODE (VP8 only): 0 off, 1 on, 2 on with frame drops on overshoot.
static inline vpx_codec_err_t rtc_vpx_vp8_set_screen_content_mode(vpx_codec_ctx_t *ctx, unsigned int value) {
    return vpx_codec_control(ctx, VP8E_SET_SCREEN_CONTENT_MODE, value);
}


/// VP9E_SET_TUNE_CONTENT (VP9 only): VP9E_CONTENT_DEFAULT or VP9E_CONTENT_SCREEN.
static inline vpx_codec_err_t rtc_vpx_vp9_set_tune_content(vpx_codec_ctx_t *ctx, int value) {
    return vpx_codec_control(ctx, VP9E_SET_TUNE_CONTENT, value);
}

/// VP9E_SET_AQ_MODE (VP9 only): 0 off, 3 cyclic refresh.
static inline vpx_codec_err_t rtc_vpx_vp9_set_aq_mode(vpx_codec_ctx_t *ctx, unsigned int value) {
    return vpx_codec_control(ctx, VP9E_SET_AQ_MODE, value);
}

/// VP9E_SET_TILE_COLUMNS (VP9 only): log2 of the tile columns, what VP9's threads split.
static inline vpx_codec_err_t rtc_vpx_vp9_set_tile_columns(vpx_codec_ctx_t *ctx, int value) {
    return vpx_codec_control(ctx, VP9E_SET_TILE_COLUMNS, value);
}

/// VP9E_SET_ROW_MT (VP9 only): row-based multithreading within tiles.
static inline vpx_codec_err_t rtc_vpx_vp9_set_row_mt(vpx_codec_ctx_t *ctx, unsigned int value) {
    return vpx_codec_control(ctx, VP9E_SET_ROW_MT, value);
}

/// The deadline of a real-time encode (`VPX_DL_REALTIME`, a macro) and the force-key-frame flag
/// (`VPX_EFLAG_FORCE_KF`, a shift expression), as values Swift sees with their C types.
static inline unsigned long rtc_vpx_deadline_realtime(void) { return VPX_DL_REALTIME; }
static inline vpx_enc_frame_flags_t rtc_vpx_eflag_force_kf(void) { return VPX_EFLAG_FORCE_KF; }

#endif
