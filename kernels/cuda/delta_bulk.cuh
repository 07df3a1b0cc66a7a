/*
 * delta_bulk.cuh — the head-per-CTA delta-rule kernel (GDN and KDA, decode and verify) whose
 * state arrives by bulk asynchronous copies (TMA) instead of per-thread loads. Included by
 * delta_rule.cuh only, inside namespace ls_delta, after delta_tile.
 *
 * Why: the register-tiled kernel (delta_tile) spreads one head's 64 KB over 8 warps in 2 CTAs
 * whose 16-byte lane loads touch 4 lines 512 bytes apart per instruction; a CTA here owns the
 * whole head (K = V = 128) and pulls it as 8 contiguous 8 KB bulk copies into shared memory, so
 * DRAM sees long sequential runs and no register holds a byte in flight (3 CTAs, 192 KB of
 * loads, per SM).
 *
 * Work split: 8 warps; warp w owns key rows 16w..16w+15 of the head, lane l value columns
 * 4l..4l+3 (one 16-byte fp32 / 8-byte bf16 shared-memory access per row: a warp reads one
 * 512-byte row per instruction, conflict-free). Rows stay warp-private after the copy lands, so
 * only the K reduction crosses warps (shared memory, two barriers per token; one for decode).
 * Per token (the delta_tile math, ls_delta_params contract):
 *   pass 1 (shared reads): s = S[k][c] * e_k; sk[c] += s k_k; sq[c] += s q_k over the warp's rows;
 *   all warps' partial sums -> SK, SQ; |q|^2, |k|^2, q.k by every warp over all 128 elements;
 *   u = beta (v - SK rk); o = SQ rq + (kn.qn) u; uk = u rk;
 *   pass 2: S[k][c] = s + k_k uk[c], stored straight to global (inter[t] and/or the final
 *   state) from registers, and written back to shared memory when another token follows.
 * Padding rows (slot < 0): no copy, S starts at zero (and evolves over the tokens), o is
 * written, nothing else. Between tokens the tile holds the state in the state dtype, so a bf16
 * state would be rounded at every token where the contract keeps fp32: bf16 takes this kernel
 * for decode only.
 * Needs: ls_delta_bulk_ok (choose.c): the vector-path conditions, and 16-byte alignment of every
 * head of state (and inter) for the copies.
 * The copy (bulk_fetch), the norms (bulk_norms) and the token loop from the copy wait on
 * (bulk_tokens, the inputs from the caller's loader) are helpers: conv_delta's bulk kernel
 * (conv_delta_bulk.cuh) runs them on q, k, v and gates it computes itself.
 */
#ifndef LS_DELTA_BULK_CUH
#define LS_DELTA_BULK_CUH

constexpr int BULK_WARPS = 8;
constexpr int BULK_ROWS = DIM_FAST / BULK_WARPS; /* key rows per warp (16) */

/* Shared memory after the state tile: the cross-warp partial sums, the copy barrier, the slot. */
struct bulk_tail {
    float4 red[BULK_WARPS][2][32]; /* [warp][sk | sq][lane] */
    uint64_t bar;
    int slot;
};

template <typename ST>
constexpr size_t bulk_smem_bytes()
{
    return (size_t)DIM_FAST * DIM_FAST * sizeof(ST) + sizeof(bulk_tail);
}

/* 4 state values of row k, this lane's columns, from the shared tile (zeros when !live). */
static __device__ __forceinline__ void bulk_get(const float *S, int k, int lane, bool live, float out[4])
{
    const float4 w = live ? reinterpret_cast<const float4 *>(S + k * DIM_FAST)[lane] : make_float4(0.f, 0.f, 0.f, 0.f);
    out[0] = w.x, out[1] = w.y, out[2] = w.z, out[3] = w.w;
}
static __device__ __forceinline__ void bulk_get(const uint16_t *S, int k, int lane, bool live, float out[4])
{
    if (live)
        ls_rec::load4<true>(S + k * DIM_FAST + 4 * lane, 4, out);
    else
        out[0] = out[1] = out[2] = out[3] = 0.0f;
}

/* Thread 0's part of the copy: the barrier armed for one head's bytes, then the 8 bulk copies
 * of the head at element offset `head` of slot `slot` of p.state into the tile (issued first, so
 * they fly while the CTA does other work). */
template <typename ST>
static __device__ __forceinline__ void bulk_fetch(unsigned char *tile, const ls_delta_params &p, int slot,
                                                  long long head, uint64_t *bar)
{
    constexpr uint32_t HEAD_BYTES = DIM_FAST * DIM_FAST * sizeof(ST), WARP_BYTES = HEAD_BYTES / BULK_WARPS;
    ls_mbar_init(bar, 1);
    ls_mbar_arrive_tx(bar, HEAD_BYTES);
    const unsigned char *s = (const unsigned char *)((const ST *)p.state + slot * p.state_stride_slot + head);
#pragma unroll
    for (int c = 0; c < BULK_WARPS; c++)
        ls_bulk_load(tile + c * WARP_BYTES, s + c * WARP_BYTES, WARP_BYTES, bar);
}

/* |q|^2, |k|^2 and q.k of one token over all K, from each lane's 4 elements (columns 4l..4l+3). */
static __device__ __forceinline__ void bulk_norms(const float q4[4], const float k4[4], float &nq, float &nk,
                                                  float &nqk)
{
    nq = 0.f, nk = 0.f, nqk = 0.f;
#pragma unroll
    for (int c = 0; c < 4; c++) {
        nq = fmaf(q4[c], q4[c], nq);
        nk = fmaf(k4[c], k4[c], nk);
        nqk = fmaf(q4[c], k4[c], nqk);
    }
    nq = sum_k_lanes<1>(nq), nk = sum_k_lanes<1>(nk), nqk = sum_k_lanes<1>(nqk);
}

/* One token's inputs, as each thread of a bulk CTA holds them: its warp's 16 rows of q and k and
 * their decays, its lane's 4 value columns of v, the token's beta and bulk_norms' sums. */
struct bulk_in {
    float qr[BULK_ROWS], kr[BULK_ROWS], e[BULK_ROWS], vv[4];
    float beta, nq, nk, nqk;
};

/*
 * The T tokens of one value head (head = hv*K*V) for lane `lane` of warp w: per token t,
 * load(t, in, v_off) (the caller's) gives the inputs and o's offset (this lane's columns), then
 * the file comment's math: the copy waited for at t = 0 (live rows), passes 1 and 2 over the
 * tile S, the cross-warp sums in tl.red; o to p.o + v_off (warp 0), the updated rows to
 * inter[t] / the final state (live rows, as the flags say) and back to the tile when another
 * token follows. (The loop lives here, not in the callers: with a per-token helper the compiler
 * laid delta_bulk_kernel out differently; with the loop here its decode PTX is unchanged.)
 */
template <typename ST, typename Load>
static __device__ __forceinline__ void bulk_tokens(const ls_delta_params &p, ST *S, bulk_tail &tl, int lane, int w,
                                                   int T, bool live, int slot, long long head, Load load)
{
    constexpr int K = DIM_FAST, V = DIM_FAST;
    const int HV = p.heads_v, k0 = w * BULK_ROWS, col0 = 4 * lane;
    for (int t = 0; t < T; t++) {
        bulk_in in;
        long long v_off;
        load(t, in, v_off);
        const float *e = in.e, *qr = in.qr, *kr = in.kr, *vv = in.vv;
        if (t == 0 && live)
            ls_mbar_wait(&tl.bar, 0);

        /* pass 1: partial S^T k, S^T q over the warp's rows (decayed state). The tile holds the
         * copied state (live rows) or, from token 1 on, the previous token's state (every row:
         * a padding row's state starts at zero but still evolves, its o depends on it) */
        const bool have = live || t > 0;
        float sk[4] = {0.f, 0.f, 0.f, 0.f}, sq[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
        for (int i = 0; i < BULK_ROWS; i++) {
            float s[4];
            bulk_get(S, k0 + i, lane, have, s);
#pragma unroll
            for (int c = 0; c < 4; c++) {
                const float d = s[c] * e[i];
                sk[c] = fmaf(d, kr[i], sk[c]);
                sq[c] = fmaf(d, qr[i], sq[c]);
            }
        }
        if (t > 0)
            __syncthreads(); /* every warp has read the previous token's partial sums */
        tl.red[w][0][lane] = make_float4(sk[0], sk[1], sk[2], sk[3]);
        tl.red[w][1][lane] = make_float4(sq[0], sq[1], sq[2], sq[3]);
        __syncthreads();
        float SK[4] = {0.f, 0.f, 0.f, 0.f}, SQ[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
        for (int j = 0; j < BULK_WARPS; j++) {
            const float4 a = tl.red[j][0][lane], b = tl.red[j][1][lane];
            SK[0] += a.x, SK[1] += a.y, SK[2] += a.z, SK[3] += a.w;
            SQ[0] += b.x, SQ[1] += b.y, SQ[2] += b.z, SQ[3] += b.w;
        }

        const float rq = rsqrtf(in.nq + 1e-6f) * p.scale;
        const float rk = rsqrtf(in.nk + 1e-6f);
        const float kq = in.nqk * rq * rk;
        float uk[4], o[4];
#pragma unroll
        for (int c = 0; c < 4; c++) {
            const float u = in.beta * (vv[c] - SK[c] * rk);
            o[c] = fmaf(kq, u, SQ[c] * rq);
            uk[c] = u * rk;
        }
        if (w == 0)
            ls_rec::store4<true>(p.o + v_off, 4, o);

        /* pass 2: the updated rows, to global (inter / final state) and back to shared memory
         * for the next token */
        const bool last = t == T - 1;
        const bool to_state = last && live && !p.disable_state_update;
        const bool to_inter = live && p.inter;
        ST *dst_state = (ST *)p.state + (live ? slot : 0) * p.state_stride_slot + head;
        ST *dst_inter = p.inter ? (ST *)p.inter + (live ? slot : 0) * p.inter_stride_slot +
                                      (long long)t * HV * K * V + head
                                : nullptr;
#pragma unroll
        for (int i = 0; i < BULK_ROWS; i++) {
            const int k = k0 + i;
            float s[4];
            bulk_get(S, k, lane, have, s);
#pragma unroll
            for (int c = 0; c < 4; c++)
                s[c] = fmaf(kr[i], uk[c], s[c] * e[i]);
            if (to_inter)
                ls_rec::store4<true>(dst_inter + (long long)k * V + col0, 4, s);
            if (to_state)
                ls_rec::store4<true>(dst_state + (long long)k * V + col0, 4, s);
            if (!last)
                ls_rec::store4<true>(S + k * V + col0, 4, s);
        }
        /* the rows written back are read again only by this warp (pass 1 of the next token) */
        __syncwarp();
    }
}

template <typename ST, bool PER_ROW, bool ONE_TOKEN>
__global__ void __launch_bounds__(32 * BULK_WARPS, 3) delta_bulk_kernel(const ls_delta_params p)
{
    extern __shared__ __align__(128) unsigned char smem_raw[];
    ST *S = reinterpret_cast<ST *>(smem_raw);
    bulk_tail &tl = *reinterpret_cast<bulk_tail *>(smem_raw + DIM_FAST * DIM_FAST * sizeof(ST));
    constexpr int K = DIM_FAST, V = DIM_FAST;

    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    const int HV = p.heads_v, T = ONE_TOKEN ? 1 : p.tokens;
    const int hv = blockIdx.x % HV, r = blockIdx.x / HV;
    const int h = hv / (HV / p.heads_qk);
    const long long head = (long long)hv * K * V;
    const int k0 = w * BULK_ROWS, col0 = 4 * lane;

    ls_pdl_wait();
    ls_pdl_trigger();
    if (threadIdx.x == 0) {
        const int slot = p.slot_idx[r];
        tl.slot = slot;
        if (slot >= 0)
            bulk_fetch<ST>(smem_raw, p, slot, head, &tl.bar);
    }

    const float neg_a = -expf(p.A_log[hv]);
    const float gdn_dtb = PER_ROW ? 0.0f : ls_bf2f(((const uint16_t *)p.dt_bias)[hv]);
    __syncthreads(); /* tl.slot and the barrier's initialisation are visible */
    const int slot = tl.slot;
    const bool live = slot >= 0;

    bulk_tokens(p, S, tl, lane, w, T, live, slot, head, [&](int t, bulk_in &in, long long &v_off) {
        const long long bt = (long long)r * T + t;
        const long long qk_off = (bt * p.heads_qk + h) * K;
        /* norms over all K from this lane's 4 elements; the warp's 16 rows of q and k */
        float q4[4], k4[4];
        ls_rec::load4<true>(p.q + qk_off + col0, 4, q4);
        ls_rec::load4<true>(p.k + qk_off + col0, 4, k4);
        load_bf16_row<BULK_ROWS, true>(p.q + qk_off + k0, k0, K, in.qr);
        load_bf16_row<BULK_ROWS, true>(p.k + qk_off + k0, k0, K, in.kr);
        v_off = (bt * HV + hv) * V + col0;
        ls_rec::load4<true>(p.v + v_off, 4, in.vv);
        const float beta = ls_sigmoid(ls_bf2f(p.b[bt * HV + hv]));
        bulk_norms(q4, k4, in.nq, in.nk, in.nqk);
        in.beta = beta;

        /* decay of the warp's rows: lanes 0..15 compute one row each (KDA), then broadcast */
        if (PER_ROW) {
            const int kk = k0 + (lane & (BULK_ROWS - 1));
            const float mine = ls_rec::delta_decay(
                neg_a, ls_bf2f(p.a[(bt * HV + hv) * K + kk]) + ((const float *)p.dt_bias)[(long long)hv * K + kk]);
#pragma unroll
            for (int i = 0; i < BULK_ROWS; i++)
                in.e[i] = __shfl_sync(0xffffffffu, mine, i);
        } else {
            const float eg = ls_rec::delta_decay(neg_a, ls_bf2f(p.a[bt * HV + hv]) + gdn_dtb);
#pragma unroll
            for (int i = 0; i < BULK_ROWS; i++)
                in.e[i] = eg;
        }
    });
}

template <typename ST, bool PER_ROW, bool ONE_TOKEN>
static int launch_bulk_k(const ls_delta_params *p, const ls_plan &pl, cudaStream_t st)
{
    constexpr size_t smem = bulk_smem_bytes<ST>();
    /* the attribute is per device: set it once for each device this instance runs on (a
     * benign race between threads driving different devices: setting it twice is harmless) */
    static unsigned long long set_on = 0;
    int dev = 0;
    LS_CUDA_TRY(cudaGetDevice(&dev));
    const unsigned long long bit = 1ull << (dev & 63);
    if (!(set_on & bit)) {
        LS_CUDA_TRY(ls_allow_smem(delta_bulk_kernel<ST, PER_ROW, ONE_TOKEN>, smem));
        set_on |= bit;
    }
    LS_CUDA_LAUNCH((delta_bulk_kernel<ST, PER_ROW, ONE_TOKEN>), pl.grid_x, 32 * BULK_WARPS, smem, st, pl.pdl, *p);
    return 0;
}

#endif /* LS_DELTA_BULK_CUH */
