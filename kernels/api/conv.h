/*
 * api/conv.h — the causal conv1d update op (docs/ops.md): params, validation, host oracle.
 * Part of ls_kernels.h, the header to include (docs/plugin-abi.md).
 */
#ifndef LS_API_CONV_H
#define LS_API_CONV_H

#include <stdint.h>
#include "dtypes.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Depthwise causal convolution over one conv state tensor of one layer, per request row r with
 * slot s = slot_idx[r]:  u = [state[s, c, 0..W-2], x[r, c, 0..T-1]] (oldest first),
 *   y[r, t, c] = act(bias[c] + sum_j w[c, j] * u[t + j])
 *   state[s, c, :] <- u[T .. T+W-2]            (unless disable_state_update)
 *   inter[s, t, c, :] <- u[t+1 .. t+W-1]       (if inter != NULL; window after token t)
 * Padding row (slot -1): nothing is read or written for that row — y keeps its old content.
 * The state view is [slots, C, W-1] with explicit strides, so both pool orientations work:
 *   channel-major (Mamba2/GDN) state_stride_c = W-1, state_stride_w = 1;
 *   window-major  (KDA)        state_stride_c = 1,   state_stride_w = C.
 * The intermediate window view has the same orientation freedom.
 */
typedef struct ls_conv_params {
    int32_t batch;                /* B request rows, >= 1 */
    int32_t tokens;               /* T >= 1 */
    int32_t channels;             /* C */
    int32_t width;                /* W in 2..4; the state keeps W-1 columns */
    int32_t silu;                 /* 1: SiLU activation, 0: identity */
    int32_t disable_state_update; /* 1: leave state untouched (verify on the real pool) */
    ls_dtype weight_dtype;        /* weight and bias: LS_BF16 or LS_F32 (Kimi) */
    ls_dtype state_dtype;         /* conv state and windows: LS_BF16 (LS_F32 allowed) */
    const uint16_t *x;            /* bf16, element (r, t, c) at r*x_stride_b + t*x_stride_t + c*x_stride_c */
    int64_t x_stride_b, x_stride_t, x_stride_c;
    uint16_t *y;                  /* bf16 output, same indexing with y_* strides */
    int64_t y_stride_b, y_stride_t, y_stride_c;
    const void *weight;           /* [C, W] contiguous */
    const void *bias;             /* [C] or NULL */
    void *state;                  /* one layer: element (s, c, w) at s*slot + c*c + w*w strides */
    int64_t state_stride_slot, state_stride_c, state_stride_w;
    const int32_t *slot_idx;      /* [B] */
    void *inter;                  /* optional: element (s, t, c, w) */
    int64_t inter_stride_slot, inter_stride_t, inter_stride_c, inter_stride_w;
    int32_t slots;                /* optional: slots of the state view (0 = not given). When
                                   * given, every index must be < slots, and a backend may
                                   * prefetch or read the state at the index it sees before the
                                   * previous kernel of the stream has finished (a read is
                                   * re-checked against the index afterwards) */
} ls_conv_params;

/* Validation shared by both backends: returns 0 or ls_fail(...) naming the bad field. */
int ls_conv_params_check(const ls_conv_params *p);
/* The contract of a given slot count (slots > 0): every index below it; host indices only.
 * Returns 0 or ls_fail naming the first row that breaks it. */
int ls_slots_check(const char *op, const int32_t *slot_idx, int32_t batch, int32_t slots);
/* Host reference kernel (kernels/ref): the same contract, host pointers, float64 accumulation. */
int ls_ref_conv_update(const ls_conv_params *p);

#ifdef __cplusplus
}
#endif
#endif /* LS_API_CONV_H */
