/*
 * ls_fi_gdn.h — the flashinfer peer's GDN decode and MTP verify: FlashInfer 0.7.2.post1's CuTe-DSL
 * kernels (gdn_kernels/gdn_decode_pretranspose.py, gdn_decode_mtp.py), compiled ahead of time for
 * sm_90a by peers/flashinfer/gdn_aot.py (one object per variant, exported with the DSL's
 * export_to_c) — docs/peers.md, "flashinfer GDN (CuTe DSL, ahead of time)".
 *
 * Three halves:
 *  - host C (fi_gdn_map.c): picks the variant FlashInfer's Python would compile for an
 *    ls_delta_params (shape, T, its MTP launch bucket), maps linstate's layout to the kernel's
 *    tensors (ls_fi_gdn_args) and the verify index rows; no CUDA: unit-tested on the host;
 *  - CUDA (fi_gdn_launch.cu): the verify index rows (our kernel) and the variant's launch;
 *  - generated (fi_gdn_variants.c, from gdn_aot.py): per variant, ls_fi_gdn_args -> the DSL's
 *    tensor structs -> its C wrapper, and the table ls_fi_gdn_variants.
 */
#ifndef LS_FI_GDN_H
#define LS_FI_GDN_H

#include <stddef.h>
#include <stdint.h>

#include "ls_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Everything a variant's launch takes: pointers and the runtime extents/strides (elements) of
 * the tensors, named as gdn_aot.py's tensor_specs names them. */
typedef struct ls_fi_gdn_args {
    const void *state;            /* decode: the pool; verify: the common base of state and inter */
    const void *A_log, *a, *dt_bias, *q, *k, *v, *b;
    void *o;
    const int32_t *idx, *out_idx; /* read / write slot per row (<0: padding / no writeback) */
    const int32_t *cu_seqlens;    /* not read (is_varlen off); any 16-byte aligned pointer */
    const int32_t *ssm_idx;       /* verify: [B, T] per-token destinations */
    int64_t B, T, H, HV, K, V, B1;
    int64_t pool, h0_stride;      /* decode: pool slots, slot stride */
    int64_t pool_hv, inter_n;     /* verify: rows of the [pool*HV, V, K] view, dummy buffer rows */
    int64_t a_s0, a_s1, b_s0, b_s1;
    int64_t q_s0, q_s1, q_s2, k_s0, k_s1, k_s2, v_s0, v_s1, v_s2, o_s0, o_s1, o_s2;
    int64_t ssm_s0;
} ls_fi_gdn_args;

typedef struct ls_fi_gdn_variant {
    const char *name;
    int32_t mtp;                  /* 0: decode (T = 1), 1: MTP verify */
    int32_t H, HV, K, V, T;
    int64_t max_work;             /* MTP: the largest B*HV of its launch bucket; 0 for decode */
    int (*run)(const ls_fi_gdn_args *x, void *stream);
} ls_fi_gdn_variant;

/* The verify index rows (built on the device per call by ls_fi_gdn_launch):
 *   idx[r] = state_off + s*state_mul, ssm_idx[r][t] = inter_off + s*inter_mul + t, out_idx[r] = -1
 * (no final writeback), all -1 for a padding row (s < 0); in units of one slot (HV*V*K). */
typedef struct ls_fi_gdn_rows {
    int64_t state_off, state_mul, inter_off, inter_mul;
} ls_fi_gdn_rows;

typedef struct ls_fi_gdn_plan {
    const ls_fi_gdn_variant *variant;
    ls_fi_gdn_args args;          /* idx/out_idx/ssm_idx filled by the launch for verify */
    ls_fi_gdn_rows rows;          /* verify only */
    const int32_t *slot_idx;
} ls_fi_gdn_plan;

/* Checks p against the compiled variants (tab/n) and FlashInfer's sm_90 rules and fills *out.
 * Returns 0, or -1 with one line in err naming the refused value. */
int ls_fi_gdn_map(const ls_delta_params *p, const ls_fi_gdn_variant *tab, int n, ls_fi_gdn_plan *out,
                  char *err, size_t cap);

/* The generated table (fi_gdn_variants.c). */
extern const ls_fi_gdn_variant ls_fi_gdn_variants[];
extern const int ls_fi_gdn_n_variants;

/* Builds the verify rows on the stream (scratch grown outside capture only) and launches the
 * plan's variant. 0, or -1 with err. */
int ls_fi_gdn_launch(ls_fi_gdn_plan *pl, void *stream, char *err, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
