/*
 * api/ssu.h — the Mamba2 selective state update op (docs/ops.md): params, validation, host oracle.
 * Part of ls_kernels.h, the header to include (docs/plugin-abi.md).
 */
#ifndef LS_API_SSU_H
#define LS_API_SSU_H

#include <stdint.h>
#include "dtypes.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Tied path: one dt and one decay per head. Per row r, slot s, head h, group g = h / (nh/ng):
 *   S <- state[s, h] if s >= 0 else 0            (S in R^{hd x ds}, ds innermost)
 *   for t: d = softplus(dt[r,t,h] + dt_bias[h]); a = exp(A[h] * d)
 *          S <- a*S + d * x[r,t,h] (outer) B[r,t,g]
 *          y[r,t,h,p] = sum_n S[p,n] C[r,t,g,n] + D[h] x[r,t,h,p];  if z: y *= z*sigmoid(z)
 *          if inter && s >= 0: inter[s, t, h] <- S
 *   if !disable_state_update && s >= 0: state[s, h] <- S
 * Padding rows: state masked (zero in, no store), output written.
 * Layouts (bf16 unless noted): x,z,y [B,T,nh,hd]; dt [B,T,nh]; Bm,Cm [B,T,ng,ds];
 *   A fp32 [nh]; dt_bias, D bf16 [nh]; state [slots, nh, hd, ds]; inter [slots, T, nh, hd, ds].
 */
typedef struct ls_ssu_params {
    int32_t batch, tokens;
    int32_t nheads, head_dim, dstate, ngroups;
    int32_t disable_state_update;
    ls_dtype state_dtype;
    const uint16_t *x, *dt, *Bm, *Cm;
    const uint16_t *z;            /* optional gate, NULL = none */
    const float *A;
    const uint16_t *dt_bias, *D;
    uint16_t *y;
    void *state;
    int64_t state_stride_slot;
    const int32_t *slot_idx;
    void *inter;
    int64_t inter_stride_slot;
    int32_t slots;                /* optional: slots of the state view (0 = not given); the
                                   * contract of ls_conv_params.slots */
} ls_ssu_params;

/* Validation shared by both backends: returns 0 or ls_fail(...) naming the bad field. */
int ls_ssu_params_check(const ls_ssu_params *p);
/* Host reference kernel (kernels/ref): the same contract, host pointers, float64 accumulation. */
int ls_ref_ssu(const ls_ssu_params *p);

#ifdef __cplusplus
}
#endif
#endif /* LS_API_SSU_H */
