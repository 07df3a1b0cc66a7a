/*
 * delta_variant.cuh — which kernel serves a large (WIDE) batch of the delta rule, and the knob
 * LS_DELTA_VARIANT (read once per process) that can force the choice. Included by
 * delta_rule.cuh only, inside namespace ls_delta, after the kernels.
 *
 *   default (or unset): the head-per-CTA bulk-copy kernel (delta_bulk.cuh) once the batch has at
 *            least BULK_MIN_CTAS_PER_SM heads per SM and bulk_ok holds, else the register tiles;
 *   regs:    the register-tiled WIDE kernel (delta_rule_kernel) for every WIDE batch;
 *   bulk:    the bulk kernel for every WIDE batch that bulk_ok admits.
 * Batches too small for WIDE (B·HV·8 < 8 warps per SM) and the generic path are the same in
 * every variant. Measured on the H200 (results/h200/kernels.md): bulk 92.2 % vs regs 89.5 % of
 * copy at B = 512 (GDN decode), 84.6 vs 84.7 % at B = 128, 77.7 vs 81.1 % at B = 64 (too few
 * CTAs per SM for three resident 64 KB tiles to overlap their load and compute phases).
 * Earlier candidates (evict-first hints, a persistent grid with and without L2 prefetch) were
 * slower than regs and were removed; their numbers are in the kernels.md log.
 */
#ifndef LS_DELTA_VARIANT_CUH
#define LS_DELTA_VARIANT_CUH

enum variant_id { VAR_DEFAULT = 0, VAR_REGS = 1, VAR_BULK = 2 };
#define VARIANT_LIST "default|regs|bulk"

/* Heads (CTAs of the bulk kernel) per SM from which the default takes the bulk kernel. */
constexpr int BULK_MIN_CTAS_PER_SM = 16;

/* The knob, read on first use and kept for the process (inline: one copy shared by gdn.cu and
 * kda.cu). Names in variant_id order. */
inline const ls_knob &variant_knob()
{
    static const char *const names[] = {"default", "regs", "bulk"};
    static const ls_knob k = ls_knob_read("LS_DELTA_VARIANT", names, 3);
    return k;
}
static inline int variant() { return variant_knob().v; }

/* Whether a WIDE launch of rh (row, value head) pairs takes the bulk kernel. */
static inline bool use_bulk(const ls_delta_params *p, int per_row, long long rh)
{
    if (variant() == VAR_REGS || !bulk_ok(p, per_row))
        return false;
    return variant() == VAR_BULK || rh >= (long long)BULK_MIN_CTAS_PER_SM * ls_cuda_sm_count();
}

#endif /* LS_DELTA_VARIANT_CUH */
