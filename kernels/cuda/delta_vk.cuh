/*
 * delta_vk.cuh — the delta-rule kernel (GDN and KDA, decode and verify) for the vk state layout:
 * each head's S stored transposed, [V, K] with K innermost (state_layout LS_STATE_VK, SGLang's
 * layout). Included by delta_rule.cuh only, inside namespace ls_delta.
 *
 * Work split. A tile = (request r, value head hv, R consecutive value rows) is owned by one
 * warp; lane l holds key columns 4l..4l+3 of each of the R rows (one 16-byte fp32 / 8-byte bf16
 * access per row: a warp reads or writes a whole 512 / 256-byte row per instruction, so every
 * state access is coalesced along K). The q, k, KDA gate and decay of a lane are the same 4 key
 * columns for all R rows: the norms are 3 warp sums per token, the KDA decay 4 exps per lane.
 * The 2R reductions over K (S^T k, S^T q per row) are one reduce-scatter over the 32 lanes
 * (2R - 1 + log2(16 / R) shuffles instead of 5 per sum); the lanes holding row j's two totals
 * compute its u and o, and the R values u_j rk go back to every lane by R broadcasts. Shapes (ls_choose_delta, knob delta.variant):
 * R = 4 (twice the warps: small batches spread over the SMs) and R = 8 (half the per-warp work
 * of q/k loads, norms and decays: large batches). Generic shapes (any K <= 128, any V) take
 * R = 4 with predicated scalar accesses.
 *
 * Verify comes in two forms (AHEAD, plan.ahead, knob delta.ahead; auto: ls_delta_ahead_auto,
 * choose.h). Off: each token's q, k, gate, v and b are loaded at the start of its step (the later
 * tokens' were pulled into L2 under the state loads). On: token t + 1's are issued at the top of
 * step t, as bf16 words, so their L2 round trip runs under step t's work (the stores may alias
 * them for the compiler: it would not hoist them itself), and every state row goes out as one
 * vector store (inline PTX; the plain store splits a warp's first row into scalars). On costs
 * 72 registers at R = 4 against 64 (7 CTAs per SM instead of 8); capping it at 64 lost its gain
 * (the A/B in results/h200/vk-ahead-39f3f21/; where it wins, results/h200/ahead-rule-058e16c/).
 * Decode always runs the off form.
 *
 * Per token: the ls_delta_params contract in fp32 with the identity of delta_tile
 * (o = (S + kn u^T)^T qn = S^T qn + (kn . qn) u: one pass over S). The state stays in fp32
 * registers between tokens (a bf16 state is rounded only when stored).
 */
#ifndef LS_DELTA_VK_CUH
#define LS_DELTA_VK_CUH

/* Value rows per warp of the two vk shapes (kernel ids LS_K_DELTA_VK4 / VK8). */
constexpr int VK_ROWS_NARROW = 4, VK_ROWS_WIDE = 8;

/* One halving step of reduce_scatter on the first N values (lane bit 16 N / NV), then the next;
 * recursion keeps every index a compile-time constant (x stays in registers). */
template <int NV, int N>
__device__ __forceinline__ void rs_halve(float (&x)[NV], int lane)
{
    if constexpr (N > 1) {
        const bool up = (lane & (16 * N / NV)) != 0;
#pragma unroll
        for (int i = 0; i < N / 2; i++) {
            const float send = up ? x[i] : x[i + N / 2];
            const float keep = up ? x[i + N / 2] : x[i];
            x[i] = keep + __shfl_xor_sync(0xffffffffu, send, 16 * N / NV);
        }
        rs_halve<NV, N / 2>(x, lane);
    }
}

/*
 * Reduce-scatter of NV partial sums (a power of two, 2..32) over the warp: returns, in lane l,
 * the warp total of value l / (32 / NV) (each total lands in 32 / NV adjacent lanes). Halving
 * steps over lane bits 4, 3, ...: a lane keeps the half of its values its bit selects and adds
 * its partner's copy of that half; the lane bits left over get plain xor sums.
 */
template <int NV>
__device__ __forceinline__ float reduce_scatter(float (&x)[NV], int lane)
{
    static_assert(NV >= 2 && NV <= 32 && (NV & (NV - 1)) == 0, "NV: a power of two in 2..32");
    rs_halve<NV, NV>(x, lane);
    float s = x[0];
#pragma unroll
    for (int m = 16 / NV; m >= 1; m /= 2)
        s += __shfl_xor_sync(0xffffffffu, s, m);
    return s;
}

/* One token's activations as a lane reads them: its 4 q, k (and KDA gate) columns, row j's v and
 * the head's b. The vector path holds the bf16 words as loaded (2 registers per 4 values, a
 * token ahead costs 8 registers), the generic path the predicated floats. */
template <bool FAST>
struct vk_token;

template <>
struct vk_token<true> {
    uint2 q, k, a;
    float a0, v, b; /* a0: GDN's gate (one per head) */
    __device__ __forceinline__ void unpack(float q4[4], float k4[4]) const
    {
        ls_rec::unpack_bf16x4(q, q4);
        ls_rec::unpack_bf16x4(k, k4);
    }
    __device__ __forceinline__ void unpack_a(float a4[4]) const { ls_rec::unpack_bf16x4(a, a4); }
};

template <>
struct vk_token<false> {
    float q4[4], k4[4], a4[4];
    float a0, v, b;
    __device__ __forceinline__ void unpack(float q_[4], float k_[4]) const
    {
#pragma unroll
        for (int c = 0; c < 4; c++)
            q_[c] = q4[c], k_[c] = k4[c];
    }
    __device__ __forceinline__ void unpack_a(float a_[4]) const
    {
#pragma unroll
        for (int c = 0; c < 4; c++)
            a_[c] = a4[c];
    }
};

/* Issue the loads of token bt's activations (bt = r T + t) into x. */
template <bool PER_ROW, bool FAST>
__device__ __forceinline__ void vk_load_token(const ls_delta_params &p, long long bt, int h, int hv, int K, int V,
                                              int k0, int kvalid, int vrow, bool row_ok, vk_token<FAST> &x)
{
    const int HV = p.heads_v;
    const long long qk_off = (bt * p.heads_qk + h) * K + k0;
    if constexpr (FAST) {
        x.q = *reinterpret_cast<const uint2 *>(p.q + qk_off);
        x.k = *reinterpret_cast<const uint2 *>(p.k + qk_off);
        if (PER_ROW)
            x.a = *reinterpret_cast<const uint2 *>(p.a + (bt * HV + hv) * K + k0);
    } else {
        ls_rec::load4<false>(p.q + qk_off, kvalid, x.q4);
        ls_rec::load4<false>(p.k + qk_off, kvalid, x.k4);
        if (PER_ROW)
            ls_rec::load4<false>(p.a + (bt * HV + hv) * K + k0, kvalid, x.a4);
    }
    x.a0 = PER_ROW ? 0.0f : ls_bf2f(p.a[bt * HV + hv]);
    x.v = row_ok ? ls_bf2f(p.v[(bt * HV + hv) * V + vrow]) : 0.0f;
    x.b = ls_bf2f(p.b[bt * HV + hv]);
}

/* AHEAD: a state row as one vector store (ls_rec::st_global4: the plain store splits a warp's
 * first row into scalars). */
template <bool FAST, bool AHEAD, typename ST>
__device__ __forceinline__ void vk_store4(ST *p, int valid, const float v[4])
{
    if constexpr (FAST && AHEAD)
        ls_rec::st_global4(p, v);
    else
        ls_rec::store4<FAST>(p, valid, v);
}

template <typename ST, bool PER_ROW, int R, bool FAST, bool ONE_TOKEN, bool AHEAD>
__global__ void __launch_bounds__(32 * MAX_WARPS_PER_CTA) delta_vk_kernel(const ls_delta_params p)
{
    static_assert(DIM_FAST == 4 * 32, "a warp's lanes cover K = 128 with 4 columns each");
    static_assert(!FAST || DIM_FAST % R == 0, "R divides V on the vector path");
    constexpr int SPAN = 32 / (2 * R); /* lanes holding one total after reduce_scatter */
    const int lane = threadIdx.x & 31;
    const int K = FAST ? DIM_FAST : p.dk, V = FAST ? DIM_FAST : p.dv;
    const int HV = p.heads_v, T = ONE_TOKEN ? 1 : p.tokens;
    const long long gw = (long long)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    const int vblocks = (V + R - 1) / R;
    const int vb = (int)(gw % vblocks);
    const long long rh = gw / vblocks;
    const int hv = (int)(rh % HV), r = (int)(rh / HV);
    ls_pdl_wait();
    ls_pdl_trigger();
    if (r >= p.batch)
        return;

    const int h = hv / (HV / p.heads_qk);
    const int k0 = 4 * lane, kvalid = K - k0; /* generic: lanes past K hold zeros */
    const int v0 = vb * R;
    const int slot = p.slot_idx[r];
    const long long head = (long long)hv * K * V;

    /* ---- state rows: every load issued first (zero for padding rows and rows >= V) */
    float S[R][4];
    const ST *src = slot >= 0 ? (const ST *)p.state + slot * p.state_stride_slot + head : nullptr;
#pragma unroll
    for (int i = 0; i < R; i++) {
        if (src && (FAST || v0 + i < V))
            ls_rec::load4<FAST>(src + (long long)(v0 + i) * K + k0, kvalid, S[i]);
        else
            S[i][0] = S[i][1] = S[i][2] = S[i][3] = 0.0f;
    }

    /* verify: the later tokens' activations into L2 under the state loads (lanes 0 and 16
     * cover the two 128-byte lines of a bf16 row of 128; none past the row's end) */
    if (!ONE_TOKEN && (lane & 15) == 0 && kvalid > 0)
        for (int t = 1; t < T; t++) {
            const long long bt = (long long)r * T + t;
            const long long qk_off = (bt * p.heads_qk + h) * K + k0;
            ls_prefetch_l2(p.q + qk_off);
            ls_prefetch_l2(p.k + qk_off);
            if (lane == 0)
                ls_prefetch_l2(p.v + (bt * HV + hv) * V + v0);
            if (PER_ROW)
                ls_prefetch_l2(p.a + (bt * HV + hv) * K + k0);
        }

    const float neg_a = -expf(p.A_log[hv]);
    const float gdn_dtb = PER_ROW ? 0.0f : ls_bf2f(((const uint16_t *)p.dt_bias)[hv]);
    float dtb4[4] = {0.f, 0.f, 0.f, 0.f};
    if (PER_ROW)
        ls_rec::load4<FAST>((const float *)p.dt_bias + (long long)hv * K + k0, kvalid, dtb4);

    /* AHEAD: token 0's activations, then each next token's at the top of the step before (j,
     * row_ok: the step's own, below) */
    vk_token<FAST> cur, nxt;
    if constexpr (AHEAD) {
        const int j = (lane / SPAN) & (R - 1);
        vk_load_token<PER_ROW, FAST>(p, (long long)r * T, h, hv, K, V, k0, kvalid, v0 + j, FAST || v0 + j < V, cur);
    }

    for (int t = 0; t < T; t++) {
        const long long bt = (long long)r * T + t;
        const long long qk_off = (bt * p.heads_qk + h) * K + k0;
        const long long v_off = (bt * HV + hv) * V + v0;
        /* row j of this lane's totals (below): lanes 0..15 hold S^T k of row j, 16..31 S^T q */
        const int j = (lane / SPAN) & (R - 1);
        const bool row_ok = FAST || v0 + j < V;
        float q4[4], k4[4], a4[4], vj, beta, ga;
        if constexpr (AHEAD) {
            if (t + 1 < T)
                vk_load_token<PER_ROW, FAST>(p, bt + 1, h, hv, K, V, k0, kvalid, v0 + j, row_ok, nxt);
            cur.unpack(q4, k4);
            if (PER_ROW)
                cur.unpack_a(a4);
            vj = cur.v, beta = ls_sigmoid(cur.b), ga = cur.a0;
        } else {
            ls_rec::load4<FAST>(p.q + qk_off, kvalid, q4);
            ls_rec::load4<FAST>(p.k + qk_off, kvalid, k4);
            vj = row_ok ? ls_bf2f(p.v[v_off + j]) : 0.0f;
            beta = ls_sigmoid(ls_bf2f(p.b[bt * HV + hv]));
            if (PER_ROW)
                ls_rec::load4<FAST>(p.a + (bt * HV + hv) * K + k0, kvalid, a4);
            else
                ga = ls_bf2f(p.a[bt * HV + hv]);
        }

        /* ---- decay: one factor per key column (KDA) or per head (GDN) */
        float e[4];
        if (PER_ROW) {
#pragma unroll
            for (int c = 0; c < 4; c++)
                e[c] = (FAST || c < kvalid) ? ls_rec::delta_decay(neg_a, a4[c] + dtb4[c]) : 1.0f;
        } else {
            const float eg = ls_rec::delta_decay(neg_a, ga + gdn_dtb);
            e[0] = e[1] = e[2] = e[3] = eg;
        }

        /* ---- partial sums over this lane's 4 columns (raw q, k; norms applied to the totals):
         * the norms by xor sums, x = [S^T k (R rows), S^T q (R rows)] by one reduce-scatter */
        float nq = 0.0f, nk = 0.0f, nqk = 0.0f;
#pragma unroll
        for (int c = 0; c < 4; c++) {
            nq = fmaf(q4[c], q4[c], nq);
            nk = fmaf(k4[c], k4[c], nk);
            nqk = fmaf(q4[c], k4[c], nqk);
        }
        float x[2 * R];
#pragma unroll
        for (int i = 0; i < R; i++) {
            float sk = 0.0f, sq = 0.0f;
#pragma unroll
            for (int c = 0; c < 4; c++) {
                S[i][c] *= e[c];
                sk = fmaf(S[i][c], k4[c], sk);
                sq = fmaf(S[i][c], q4[c], sq);
            }
            x[i] = sk, x[R + i] = sq;
        }
        nq = sum_k_lanes<1>(nq), nk = sum_k_lanes<1>(nk), nqk = sum_k_lanes<1>(nqk);
        const float mine = reduce_scatter<2 * R>(x, lane);
        const float other = __shfl_xor_sync(0xffffffffu, mine, 16); /* value index +- R */
        const float skj = lane < 16 ? mine : other, sqj = lane < 16 ? other : mine;
        const float rq = rsqrtf(nq + 1e-6f) * p.scale;
        const float rk = rsqrtf(nk + 1e-6f);
        const float kq = nqk * rq * rk; /* kn . qn */

        /* ---- row j's u and o (its first lane writes o), then the rank-1 update of every row
         * with u_i rk broadcast from row i's lanes: S += kn u^T == k (rk u)^T */
        const float u = beta * (vj - skj * rk);
        if (lane < 16 && lane % SPAN == 0 && row_ok)
            p.o[v_off + j] = ls_f2bf(fmaf(kq, u, sqj * rq));
        const float ukj = u * rk;
#pragma unroll
        for (int i = 0; i < R; i++) {
            const float uk = __shfl_sync(0xffffffffu, ukj, i * SPAN);
#pragma unroll
            for (int c = 0; c < 4; c++)
                S[i][c] = fmaf(k4[c], uk, S[i][c]);
        }

        if (p.inter && slot >= 0) {
            ST *dst = (ST *)p.inter + slot * p.inter_stride_slot + (long long)t * HV * K * V + head;
#pragma unroll
            for (int i = 0; i < R; i++)
                if (FAST || v0 + i < V)
                    vk_store4<FAST, AHEAD>(dst + (long long)(v0 + i) * K + k0, kvalid, S[i]);
        }
        if constexpr (AHEAD)
            cur = nxt;
    }

    if (!p.disable_state_update && slot >= 0) {
        ST *dst = (ST *)p.state + slot * p.state_stride_slot + head;
#pragma unroll
        for (int i = 0; i < R; i++)
            if (FAST || v0 + i < V)
                vk_store4<FAST, AHEAD>(dst + (long long)(v0 + i) * K + k0, kvalid, S[i]);
    }
}

template <typename ST, bool PER_ROW, int R, bool FAST>
static int launch_vk_k(const ls_delta_params *p, const ls_plan &pl, cudaStream_t st)
{
    if (p->tokens == 1)
        LS_CUDA_LAUNCH((delta_vk_kernel<ST, PER_ROW, R, FAST, true, false>), pl.grid_x, pl.block, 0, st, pl.pdl, *p);
    else if (pl.ahead)
        LS_CUDA_LAUNCH((delta_vk_kernel<ST, PER_ROW, R, FAST, false, true>), pl.grid_x, pl.block, 0, st, pl.pdl, *p);
    else
        LS_CUDA_LAUNCH((delta_vk_kernel<ST, PER_ROW, R, FAST, false, false>), pl.grid_x, pl.block, 0, st, pl.pdl, *p);
    return 0;
}

#endif /* LS_DELTA_VK_CUH */
