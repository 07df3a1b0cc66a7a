/*
 * delta_hoist.cuh — HOIST: the SPLIT tiles' verify (delta_rule.cuh: a 16-column tile over 4 warps
 * along K, 4 key rows x 4 value columns of fp32 state per lane) with everything that does not
 * depend on the state taken out of the serial token chain. Included by delta_rule.cuh only,
 * inside namespace ls_delta, after delta_tile. Kernel delta_rule_kernel<..., SPLIT, ..., HOIST>
 * (plan name delta_rule_hoist; delta.variant=hoist, 2 <= T <= LS_DELTA_HOIST_MAX_TOKENS, vector
 * path), SPLIT's grid and CTAs of 4 warps (one tile).
 *
 * At small batches a warp's time is its T-token chain (latency-bound: a few warps per SM, DRAM
 * almost idle). SPLIT runs per token: decay (expf, log1pf, expf: the costliest math), the q/k
 * norms (sums in the same shuffles and exchange as S^T k, S^T q), then u, o, the update. None of
 * the decays, norms, kn . qn or beta depends on the state, so HOIST computes them for every token
 * before the first: all T tokens' inputs are loaded at once (under the state loads), their math
 * is independent across tokens (ILP), and the chain of a token is only
 *   S *= decay; S^T k, S^T q (in-lane, xor-shuffles over the warp's K-lanes, the 4-warp
 *   exchange: 8 sums instead of SPLIT's 11); u = beta (v - sk rk); o; S += kn u^T; stores.
 * The norms of all T tokens take one exchange among the tile's 4 warps before the chain (in the
 * order of SPLIT's per-token sums: the same rq, rk, kq). The math is the ls_delta_params
 * contract in fp32, the identities of delta_tile (token_out_normed); S^T k and S^T q are summed
 * as SPLIT sums them, so results should match SPLIT's to the bit (not a contract: the tests
 * compare with the float64 reference).
 *
 * Registers: per token the raw q, k and v pieces (3 x 8 bytes), beta, rq, rk, kq and the lane's
 * 4 row decays (KDA; GDN: 1): 14 (11) per token, about 110 at T = 8, beside 16 of state and the
 * norms' 24 partial sums before their exchange; the kernel asks for <= 255 (2 CTAs of 4 warps per
 * SM: B <= 2 at tp 2 gives 1-2 per SM). At 168 (3 CTAs) KDA spilled; sm_90, CUDA 13.0: KDA 208 /
 * 206 registers (fp32 / bf16 state), GDN 168 / 168, no spills. Both exchanges read and write
 * 16-byte vectors (8 and 24 sums per lv: whole float4s; SPLIT's 11 are scalar).
 */
#ifndef LS_DELTA_HOIST_CUH
#define LS_DELTA_HOIST_CUH

constexpr int HOIST_TMAX = LS_DELTA_HOIST_MAX_TOKENS;
constexpr int HOIST_MIN_CTAS = 2; /* <= 255 registers (see above) */

/* One SPLIT tile (r, hv, vb), warp kw of 4, verify with 2 <= T <= HOIST_TMAX (the plan's bound). */
template <typename ST, bool PER_ROW>
__device__ __forceinline__ void delta_tile_hoist(const ls_delta_params &p, int r, int hv, int vb, int kw)
{
    constexpr int LV = shape_of<SPLIT>::LV, KW = shape_of<SPLIT>::KW, LK = 32 / LV;
    constexpr int RK = DIM_FAST / (LK * KW), K = DIM_FAST, V = DIM_FAST, NE = PER_ROW ? RK : 1;
    static_assert(RK == 4 && LV == 4, "one 8-byte q, k, v piece and one row decay per lane and token");
    __shared__ __align__(16) float xchg[2][MAX_WARPS_PER_CTA][LV][2 * COLS]; /* 16-byte rows: vector ld/st */

    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int lv = lane % LV, lk = lane / LV;
    const int HV = p.heads_v, T = p.tokens;
    const int h = hv / (HV / p.heads_qk);
    const int col0 = vb * LV * COLS + lv * COLS;
    const int k0 = (kw * LK + lk) * RK;
    const int slot = p.slot_idx[r];
    const long long head = (long long)hv * K * V;

    /* ---- state tile: its loads first */
    float S[RK][COLS];
    load_rows<true, RK>(slot >= 0 ? (const ST *)p.state + slot * p.state_stride_slot + head : nullptr, k0, col0, K, V,
                        S);

    /* ---- every token's inputs, all loads in flight at once: the lane's q / k rows and v columns
     * (raw bf16, kept), b, the gate (KDA: of row k0 + lv, kda_decay's split of the work; GDN: the
     * head's). Tokens >= T read nothing. */
    uint2 qr[HOIST_TMAX], kr[HOIST_TMAX], vr[HOIST_TMAX];
    float braw[HOIST_TMAX], graw[HOIST_TMAX];
#pragma unroll
    for (int t = 0; t < HOIST_TMAX; t++) {
        qr[t] = kr[t] = vr[t] = make_uint2(0u, 0u);
        braw[t] = graw[t] = 0.0f;
        if (t < T) {
            const long long bt = (long long)r * T + t, row = (bt * p.heads_qk + h) * K + k0;
            qr[t] = *reinterpret_cast<const uint2 *>(p.q + row);
            kr[t] = *reinterpret_cast<const uint2 *>(p.k + row);
            vr[t] = *reinterpret_cast<const uint2 *>(p.v + (bt * HV + hv) * V + col0);
            braw[t] = ls_bf2f(p.b[bt * HV + hv]);
            graw[t] = ls_bf2f(PER_ROW ? p.a[(bt * HV + hv) * K + k0 + lv] : p.a[bt * HV + hv]);
        }
    }

    /* ---- what depends on the inputs only, every token: beta and the decays (T is uniform: every
     * lane of the warp takes the shuffles) */
    const float neg_a = -expf(p.A_log[hv]);
    const float dtb = PER_ROW ? ((const float *)p.dt_bias)[(long long)hv * K + k0 + lv]
                              : ls_bf2f(((const uint16_t *)p.dt_bias)[hv]);
    float beta[HOIST_TMAX], e[HOIST_TMAX][NE];
#pragma unroll
    for (int t = 0; t < HOIST_TMAX; t++) {
        beta[t] = ls_sigmoid(braw[t]);
        const float mine = t < T ? ls_rec::delta_decay(neg_a, graw[t] + dtb) : 1.0f;
        if constexpr (PER_ROW) { /* row k0 + i's decay from lane (lk, i) */
#pragma unroll
            for (int i = 0; i < RK; i++)
                e[t][i] = t < T ? __shfl_sync(0xffffffffu, mine, (lane & ~(LV - 1)) | i) : 1.0f;
        } else {
            e[t][0] = mine;
        }
    }

    /* ---- the norms and kn . qn of every token: q.q, k.k, q.k over the lane's rows, the warp's
     * K-lanes, then the tile's 4 warps in one exchange for all tokens (SPLIT's order of summation,
     * so the same bits as its per-token sums) */
    __shared__ __align__(16) float nxchg[MAX_WARPS_PER_CTA][LV][3 * HOIST_TMAX];
    float nsum[3 * HOIST_TMAX];
#pragma unroll
    for (int t = 0; t < HOIST_TMAX; t++) {
        float qa[RK], ka[RK];
        ls_rec::unpack_bf16x4(qr[t], qa);
        ls_rec::unpack_bf16x4(kr[t], ka);
        float *n = nsum + 3 * t;
        n[0] = n[1] = n[2] = 0.0f;
#pragma unroll
        for (int i = 0; i < RK; i++) {
            n[0] = fmaf(qa[i], qa[i], n[0]);
            n[1] = fmaf(ka[i], ka[i], n[1]);
            n[2] = fmaf(qa[i], ka[i], n[2]);
        }
        if (t < T)
#pragma unroll
            for (int j = 0; j < 3; j++)
                n[j] = sum_k_lanes<LV>(n[j]);
    }
    combine_warps<KW, LV, 3 * HOIST_TMAX>(nsum, nxchg, warp, lv, lk);
    float rq[HOIST_TMAX], rk[HOIST_TMAX], kq[HOIST_TMAX];
#pragma unroll
    for (int t = 0; t < HOIST_TMAX; t++) {
        rq[t] = rsqrtf(nsum[3 * t] + 1e-6f) * p.scale;
        rk[t] = rsqrtf(nsum[3 * t + 1] + 1e-6f);
        kq[t] = nsum[3 * t + 2] * rq[t] * rk[t]; /* kn . qn */
    }

    /* ---- the chain: state-dependent work only */
#pragma unroll
    for (int t = 0; t < HOIST_TMAX; t++) {
        if (t >= T)
            break;
        const long long bt = (long long)r * T + t;
        float qv[RK], kv[RK], vv[COLS];
        ls_rec::unpack_bf16x4(qr[t], qv);
        ls_rec::unpack_bf16x4(kr[t], kv);
        ls_rec::unpack_bf16x4(vr[t], vv);
        float sum[2 * COLS]; /* S^T k, S^T q of the decayed state, raw q and k */
#pragma unroll
        for (int j = 0; j < 2 * COLS; j++)
            sum[j] = 0.0f;
#pragma unroll
        for (int i = 0; i < RK; i++) {
#pragma unroll
            for (int c = 0; c < COLS; c++)
                S[i][c] *= e[t][PER_ROW ? i : 0];
            add_state_sums(sum, sum + COLS, S[i], qv[i], kv[i]);
        }
#pragma unroll
        for (int j = 0; j < 2 * COLS; j++)
            sum[j] = sum_k_lanes<LV>(sum[j]);
        combine_warps<KW, LV, 2 * COLS>(sum, xchg[t & 1], warp, lv, lk);
        float uk[COLS], o[COLS];
        token_out_normed(sum, sum + COLS, rq[t], rk[t], kq[t], beta[t], vv, o, uk);
        add_rank1<RK>(S, kv, uk);

        if (lk == 0 && kw == 0)
            ls_rec::store4<true>(p.o + (bt * HV + hv) * V + col0, 4, o);
        if (p.inter && slot >= 0)
            store_rows<true, RK>((ST *)p.inter + slot * p.inter_stride_slot + (long long)t * HV * K * V + head, k0,
                                 col0, K, V, S);
    }

    if (!p.disable_state_update && slot >= 0)
        store_rows<true, RK>((ST *)p.state + slot * p.state_stride_slot + head, k0, col0, K, V, S);
}

#endif /* LS_DELTA_HOIST_CUH */
