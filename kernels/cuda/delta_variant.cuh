/*
 * delta_variant.cuh — the large-batch (WIDE) tuning candidates of the delta-rule kernel, chosen by
 * the environment knob LS_DELTA_VARIANT (read once per process). Included by delta_rule.cuh only,
 * inside namespace ls_delta, after the kernels and launch_fast / pick_cta.
 *
 *   default (or unset): the one-tile-per-warp-pair WIDE grid measured in results/h200/kernels.md;
 *   cs:      the same grid, state (and inter) loads/stores with the streaming hint (.cs: evict-first
 *            in L1 and L2), so the state stream stops displacing q/k/v/gates and the index from L2;
 *   persist: a persistent grid (delta_rule_persistent), every warp pair walking an equal share of
 *            the tiles, the next tile's slot index loaded a tile ahead, .cs hints;
 *   pf:      persist + the next tile's state prefetched into L2 while this tile's loads are in flight.
 * The knob only changes the kernel of batches that take WIDE (B·HV >= 132 on 132 SMs); smaller
 * batches and the generic path are the same in every variant. results/h200/kernels.md (log) has
 * each candidate's prediction.
 */
#ifndef LS_DELTA_VARIANT_CUH
#define LS_DELTA_VARIANT_CUH

enum variant_id { VAR_DEFAULT = 0, VAR_CS = 1, VAR_PERSIST = 2, VAR_PF = 3 };
#define VARIANT_LIST "default|cs|persist|pf"

/* The knob, read on first use and kept for the process (inline: one copy shared by gdn.cu and
 * kda.cu). Names in variant_id order. */
inline const ls_knob &variant_knob()
{
    static const char *const names[] = {"default", "cs", "persist", "pf"};
    static const ls_knob k = ls_knob_read("LS_DELTA_VARIANT", names, 4);
    return k;
}
static inline int variant() { return variant_knob().v; }

/*
 * CTAs of delta_rule_persistent per SM (occupancy of the instantiation at 128 threads, asked of
 * the runtime once and cached; the launch bound's minimum if the query fails).
 */
template <typename ST, bool PER_ROW, bool ONE_TOKEN, bool PF>
static int persistent_ctas_per_sm()
{
    static const int n = [] {
        int v = 0;
        if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&v, delta_rule_persistent<ST, PER_ROW, ONE_TOKEN, PF>,
                                                          32 * MAX_WARPS_PER_CTA, 0) != cudaSuccess ||
            v < 1) {
            (void)cudaGetLastError();
            v = min_ctas(true, ONE_TOKEN);
        }
        return v;
    }();
    return n;
}

/*
 * Persistent grid for `tiles` WIDE tiles: at most one resident wave of warp pairs, trimmed so
 * that every pair gets the same number of tiles (per = ceil(tiles / max pairs), pairs =
 * ceil(tiles / per)): no last round with a few busy pairs.
 */
template <typename ST, bool PER_ROW, bool ONE_TOKEN, bool PF>
static int launch_persistent(const ls_delta_params *p, long long tiles, cudaStream_t st)
{
    constexpr int PAIRS_PER_CTA = MAX_WARPS_PER_CTA / 2;
    const long long max_pairs = (long long)persistent_ctas_per_sm<ST, PER_ROW, ONE_TOKEN, PF>() *
                                ls_cuda_sm_count() * PAIRS_PER_CTA;
    const long long per = (tiles + max_pairs - 1) / max_pairs;
    const long long pairs = (tiles + per - 1) / per;
    const long long blocks = (pairs + PAIRS_PER_CTA - 1) / PAIRS_PER_CTA;
    if (tiles + blocks * PAIRS_PER_CTA >= 0x7fffffffLL) /* the kernel's 32-bit tile indices */
        return ls_fail("cuda delta rule: batch=%d too large for LS_DELTA_VARIANT=%s", p->batch, variant_knob().raw);
    delta_rule_persistent<ST, PER_ROW, ONE_TOKEN, PF><<<(unsigned)blocks, 32 * MAX_WARPS_PER_CTA, 0, st>>>(*p);
    return 0;
}

/* The WIDE launch of a non-default variant (wide_warps = 2 per tile); checks the launch. */
template <typename ST, bool PER_ROW>
static int launch_wide_variant(const ls_delta_params *p, long long wide_warps, cudaStream_t st)
{
    int rc = 0, warps;
    unsigned blocks;
    const bool one = p->tokens == 1;
    switch (variant()) {
    case VAR_CS:
        if (pick_cta(wide_warps, 2, &warps, &blocks))
            return ls_fail("cuda delta rule: batch=%d too large", p->batch);
        launch_fast<ST, PER_ROW, WIDE, true>(p, blocks, warps, st);
        break;
    case VAR_PERSIST:
        rc = one ? launch_persistent<ST, PER_ROW, true, false>(p, wide_warps / 2, st)
                 : launch_persistent<ST, PER_ROW, false, false>(p, wide_warps / 2, st);
        break;
    default: /* VAR_PF */
        rc = one ? launch_persistent<ST, PER_ROW, true, true>(p, wide_warps / 2, st)
                 : launch_persistent<ST, PER_ROW, false, true>(p, wide_warps / 2, st);
        break;
    }
    if (rc)
        return rc;
    LS_CUDA_CHECK_LAUNCH("delta_rule_kernel (LS_DELTA_VARIANT)");
    return 0;
}

#endif /* LS_DELTA_VARIANT_CUH */
