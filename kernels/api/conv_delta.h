/*
 * api/conv_delta.h — the fused conv update + delta rule op (docs/ops.md): params, validation,
 * host oracle, the back-to-back split.
 * Part of ls_kernels.h, the header to include (docs/plugin-abi.md).
 */
#ifndef LS_API_CONV_DELTA_H
#define LS_API_CONV_DELTA_H

#include <stdint.h>
#include "conv.h"
#include "delta.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The causal conv1d update of the packed q/k/v channels feeding the GDN or KDA recurrence, as
 * ONE op that must give exactly the results of the two ops run back to back:
 *   1. conv update (ls_conv_params contract) over C = 2*H*K + HV*V channels of one row per token,
 *      channel order q (H*K), k (H*K), v (HV*V) — SGLang's mixed_qkv; its output y is rounded to
 *      bf16 as the conv op stores it;
 *   2. gdn (kda == 0) or kda (kda == 1) (ls_delta_params contract) on q, k, v = that output.
 * The conv output is not stored: conv.y and delta.q/k/v must be NULL (their strides unused).
 * conv and delta share the request rows: same batch, tokens, slots and the same slot_idx pointer.
 * The two flags stay separate: conv.disable_state_update / conv.inter are the conv half's
 * (window state, windows per step), delta.disable_state_update / delta.inter the recurrence's.
 * Padding row (slot -1): nothing is read or written for it, o included (keeps its content).
 * ls_conv_delta_split gives the back-to-back form (the oracle ls_ref_conv_delta composes it).
 */
typedef struct ls_conv_delta_params {
    int32_t kda;                  /* 0: GDN gate, 1: KDA gate (the delta struct's a/dt_bias rules) */
    ls_conv_params conv;          /* x: [B, T, C] packed q|k|v before the conv; y NULL */
    ls_delta_params delta;        /* q, k, v NULL: the conv output feeds them */
} ls_conv_delta_params;

/* Validation shared by both backends: returns 0 or ls_fail(...) naming the bad field. */
int ls_conv_delta_params_check(const ls_conv_delta_params *p);
/* conv_delta's oracle: ls_ref_conv_update then ls_ref_gdn / ls_ref_kda, as ls_conv_delta_split below. */
int ls_ref_conv_delta(const ls_conv_delta_params *p);

/*
 * The back-to-back form of a conv_delta call (pointer arithmetic only: p's pointers may be
 * device pointers). qkv: scratch of B*T*C bf16 in the same memory, the conv output. packed = 1:
 * one conv writing qkv as [B, T, C] rows and delta reading q/k/v through token strides (for an
 * impl with LS_IMPL_QKV_STRIDES); packed = 0: three convs over the q, k and v channel ranges
 * writing contiguous q [B,T,H*K], k, v [B,T,HV*V] one after the other in qkv. Fills conv[0..n)
 * (*n_conv = 1 or 3) and *delta (o, state, ... as in p). 0, or ls_fail naming a bad field.
 */
int ls_conv_delta_split(const ls_conv_delta_params *p, uint16_t *qkv, int packed, ls_conv_params conv[3],
                        int *n_conv, ls_delta_params *delta);

#ifdef __cplusplus
}
#endif
#endif /* LS_API_CONV_DELTA_H */
