/*
 * api/delta.h — the gated delta rule ops, GDN and KDA (docs/ops.md): params, validation, host
 * oracles.
 * Part of ls_kernels.h, the header to include (docs/plugin-abi.md).
 */
#ifndef LS_API_DELTA_H
#define LS_API_DELTA_H

#include <stdint.h>
#include "dtypes.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * One layer of the delta-rule recurrence over T tokens per request row r, slot s = slot_idx[r],
 * value head hv, key head h = hv / (HV / H). State S in R^{K x V} (V innermost in memory).
 *   S <- state[s, hv] if s >= 0 else 0
 *   for t in 0..T-1:
 *     GDN: g = -exp(A_log[hv]) * softplus(a[r,t,hv] + dt_bias[hv])           (scalar)
 *          S <- exp(g) * S
 *     KDA: g_k = -exp(A_log[hv]) * softplus(a[r,t,hv,k] + dt_bias[hv*K + k])  (per key row k)
 *          S[k, :] <- exp(g_k) * S[k, :]
 *     beta = sigmoid(b[r,t,hv]);  softplus(x) = log1p(exp(x)) if x <= 20 else x
 *     qn = q[r,t,h] / sqrt(sum q^2 + 1e-6) * scale;  kn = k[r,t,h] / sqrt(sum k^2 + 1e-6)
 *     u = beta * (v[r,t,hv] - S^T kn);  S <- S + kn u^T;  o[r,t,hv] = S^T qn
 *     if inter && s >= 0: inter[s, t, hv] <- S
 *   if !disable_state_update && s >= 0: state[s, hv] <- S
 * Padding rows (s < 0) start from zero, store no state, but their output IS written.
 * Layouts (contiguous, bf16 unless noted): q,k [B,T,H,K]; v,o [B,T,HV,V]; b [B,T,HV];
 *   GDN a [B,T,HV], dt_bias bf16 [HV];  KDA a [B,T,HV,K] (raw gate), dt_bias fp32 [HV*K];
 *   A_log fp32 [HV]; state [slots, HV, K, V]; inter [slots, T, HV, K, V] (slot stride given).
 * state_layout LS_STATE_VK stores each head's S transposed, [V, K] (K innermost), in state and
 * inter alike; the math is the same. An impl declares the layouts its gdn/kda take (LS_IMPL_KV,
 * LS_IMPL_VK); a kernel given the other layout would compute on transposed states.
 */
typedef enum ls_state_layout { LS_STATE_KV = 0, LS_STATE_VK = 1 } ls_state_layout;
static inline const char *ls_state_layout_name(ls_state_layout l) { return l == LS_STATE_VK ? "vk" : "kv"; }

typedef struct ls_delta_params {
    int32_t batch, tokens;
    int32_t heads_qk;             /* H */
    int32_t heads_v;              /* HV, a multiple of H */
    int32_t dk, dv;               /* K, V */
    int32_t disable_state_update;
    float scale;                  /* usually 1/sqrt(K) */
    ls_dtype state_dtype;         /* LS_F32 or LS_BF16 */
    const uint16_t *q, *k, *v, *a, *b;
    const float *A_log;
    const void *dt_bias;
    uint16_t *o;
    void *state;
    int64_t state_stride_slot;    /* elements between slots (>= HV*K*V) */
    const int32_t *slot_idx;
    void *inter;                  /* optional */
    int64_t inter_stride_slot;    /* elements between slots; step stride is HV*K*V */
    int32_t slots;                /* optional: slots of the state view (0 = not given); the
                                   * contract of ls_conv_params.slots */
    ls_state_layout state_layout; /* LS_STATE_KV (default, 0) or LS_STATE_VK */
    /* Elements between consecutive tokens (row r*T + t) of q, k and v; 0 = contiguous (H*K for
     * q and k, HV*V for v). Lets q, k and v be views into one packed [B*T, 2*H*K + HV*V] row per
     * token (SGLang's mixed_qkv) without a copy. An impl that reads contiguous rows only does not
     * declare LS_IMPL_QKV_STRIDES and refuses other values. */
    int64_t q_stride_tok, k_stride_tok, v_stride_tok;
} ls_delta_params;
#define LS_DELTA_HAS_QKV_STRIDES 1

/* Validation shared by both backends: returns 0 or ls_fail(...) naming the bad field. */
int ls_delta_params_check(const ls_delta_params *p, int per_channel_gate);
/* Host reference kernel (kernels/ref): the same contract, host pointers, float64 accumulation. */
int ls_ref_gdn(const ls_delta_params *p);
int ls_ref_kda(const ls_delta_params *p);

#ifdef __cplusplus
}
#endif
#endif /* LS_API_DELTA_H */
