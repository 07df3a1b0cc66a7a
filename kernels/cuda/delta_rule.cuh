/*
 * delta_rule.cuh — the one recurrence kernel behind GDN (scalar decay per value head) and KDA
 * (decay per key row; math in docs/ops.md), decode (T = 1) and verify (T tokens, per-step
 * intermediate states, optional final write). Included by gdn.cu and kda.cu only.
 *
 * Work split. A tile = (request r, value head hv, block of value columns) is owned by KW = 1, 2
 * or 4 warps and its K x cols state slice lives in registers for all T tokens: every lane holds
 * RK key rows x 4 consecutive value columns (one 16-byte fp32 / 8-byte bf16 access per row).
 * Four layouts (see `layout` below): NARROW, 1 warp per 16-column tile (16 rows per lane), for
 * small batches (many tiles to spread over the SMs); WIDE, 2 warps per 32-column tile (64 key
 * rows each, 16 per lane), whose accesses cover whole 128-byte lines, for large batches; SPLIT,
 * NARROW's 16-column tile split along K over 4 warps (32 key rows each, 4 per lane): four times
 * NARROW's warps, each with a quarter of the per-token math and state, for the smallest batches,
 * where NARROW leaves about one warp per SM and a warp's T-token serial chain is the time;
 * SPLIT2, the same over 2 warps (8 rows per lane). Reductions over K (S^T k, S^T q, the L2
 * norms) are in-lane sums, xor-shuffles over the warp's K-lanes and, for WIDE, SPLIT and
 * SPLIT2, one shared-memory exchange among the tile's warps per token
 * (named barrier of the tile's warps); CTAs group 1..4 warps, picked by the launcher to spread
 * small batches over the SMs.
 *
 * Per token (exactly the ls_delta_params contract, fp32 math):
 *   S *= exp(g) (row-wise for KDA); sk = S^T kn; sq = S^T qn   (one pass over S)
 *   u = beta * (v - sk); o = sq + (kn . qn) u = (S + kn u^T)^T qn; S += kn u^T
 * The identity for o saves the second reduction pass. All state loads of the first token are
 * issued before the q/k normalisation so memory latency overlaps the math.
 *
 * Two shapes of the kernel: FAST (K = V = 128 as in every preset, 16/8-byte aligned tensors:
 * vector accesses with immediate row offsets, no predicates) and a generic one (any K <= 128,
 * any V: scalar predicated accesses).
 *
 * Large batches take the head-per-CTA bulk-copy kernel instead (delta_bulk.cuh); the vk state
 * layout ([V, K] per head) takes its own kernel (delta_vk.cuh). Which kernel
 * serves a launch, with which CTA size, is decided by ls_choose_delta (choose.c); the knob
 * delta.variant can force the register tiles or the bulk kernel for the WIDE batches, or SPLIT /
 * SPLIT2 for every batch.
 */
#ifndef LS_DELTA_RULE_CUH
#define LS_DELTA_RULE_CUH

#include "cuda_common.cuh"

/* ---------------------------------------------------------------------------------------------
 * 4-wide accesses (also used by mamba2_ssu.cu): 4 consecutive elements of a state (float or raw
 * bf16 uint16_t) or bf16 activation row, as 4 floats. FAST: one 16-byte (fp32) or 8-byte (bf16)
 * access, the caller guarantees alignment and 4 valid elements.
 * Generic: element-wise, elements at index >= valid are read as 0 / not written.
 */
namespace ls_rec {

/* softplus (threshold 20) with full-precision expf/log1pf. The decay exp(-e^A_log softplus(.))
 * compounds over the T tokens: the ~1e-6 relative error of the __expf inside ls_softplus would
 * eat most of the 1e-5 fp32-state tolerance, so the recurrences use this one (a few extra
 * instructions per decay, far below the memory time). */
static __device__ __forceinline__ float softplus_precise(float x) { return x <= 20.0f ? log1pf(expf(x)) : x; }

/* The delta rule's decay of one key row, exp(-e^A_log softplus(g + dt_bias)), given
 * neg_a = -e^A_log and x = g + dt_bias (GDN: one per value head; KDA: one per key row). */
static __device__ __forceinline__ float delta_decay(float neg_a, float x) { return expf(neg_a * softplus_precise(x)); }

template <bool FAST>
static __device__ __forceinline__ void load4(const float *p, int valid, float out[4])
{
    if (FAST) {
        const float4 w = *reinterpret_cast<const float4 *>(p);
        out[0] = w.x, out[1] = w.y, out[2] = w.z, out[3] = w.w;
    } else {
#pragma unroll
        for (int c = 0; c < 4; c++)
            out[c] = c < valid ? p[c] : 0.0f;
    }
}

/* 4 bf16 packed in 8 bytes (memory order) as 4 floats. */
static __device__ __forceinline__ void unpack_bf16x4(uint2 w, float out[4])
{
    out[0] = __uint_as_float(w.x << 16), out[1] = __uint_as_float(w.x & 0xffff0000u);
    out[2] = __uint_as_float(w.y << 16), out[3] = __uint_as_float(w.y & 0xffff0000u);
}

template <bool FAST>
static __device__ __forceinline__ void load4(const uint16_t *p, int valid, float out[4])
{
    if (FAST) {
        unpack_bf16x4(*reinterpret_cast<const uint2 *>(p), out);
    } else {
#pragma unroll
        for (int c = 0; c < 4; c++)
            out[c] = c < valid ? ls_bf2f(p[c]) : 0.0f;
    }
}

template <bool FAST>
static __device__ __forceinline__ void store4(float *p, int valid, const float v[4])
{
    if (FAST) {
        const float4 w = make_float4(v[0], v[1], v[2], v[3]);
        *reinterpret_cast<float4 *>(p) = w;
    } else {
#pragma unroll
        for (int c = 0; c < 4; c++)
            if (c < valid)
                p[c] = v[c];
    }
}

template <bool FAST>
static __device__ __forceinline__ void store4(uint16_t *p, int valid, const float v[4])
{
    if (FAST) {
        const uint2 w = make_uint2(ls_pack_bf16x2(v[0], v[1]), ls_pack_bf16x2(v[2], v[3]));
        *reinterpret_cast<uint2 *>(p) = w;
    } else {
#pragma unroll
        for (int c = 0; c < 4; c++)
            if (c < valid)
                p[c] = ls_f2bf(v[c]);
    }
}

/* 4 state values to global memory p (aligned) as ONE vector store. A float4 / uint2 store of
 * these registers (store4) can come out of the compiler as 4 (2) scalar stores (seen in the PTX
 * of the SSU tiles and of a warp's first row in the vk and NARROW tiles: 4x the store
 * instructions, each writing partial sectors); inline PTX keeps it whole. Global addresses only.
 * Its memory clobber fixes the order of the accesses around it: measure where it goes (it cost
 * delta_bulk and the fused tiles 5-10 %, results/h200/vk-ahead-39f3f21/). */
static __device__ __forceinline__ void st_global4(float *p, const float v[4])
{
    asm volatile("st.global.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p), "f"(v[0]), "f"(v[1]), "f"(v[2]), "f"(v[3])
                 : "memory");
}
static __device__ __forceinline__ void st_global4(uint16_t *p, const float v[4])
{
    asm volatile("st.global.v2.b32 [%0], {%1, %2};" ::"l"(p), "r"(ls_pack_bf16x2(v[0], v[1])),
                 "r"(ls_pack_bf16x2(v[2], v[3]))
                 : "memory");
}

} /* namespace ls_rec */

namespace ls_delta {

constexpr int COLS = 4;                      /* value columns per lane */
constexpr int DIM_FAST = LS_DELTA_DIM_FAST;  /* fast path: K = V = 128 (every preset) */
constexpr int RK_GENERIC = 16;               /* generic path: 16 key rows per lane, K <= 128 */
constexpr int MAX_WARPS_PER_CTA = 4;

/*
 * Layouts of a tile (one (r, hv, block of value columns), owned by KW warps):
 *   NARROW: 4 lanes along V x 8 along K, 1 warp, 16 columns: 8 rows x 64 bytes per access;
 *           many tiles, so small batches still spread over every SM.
 *   WIDE:   8 lanes along V x 4 along K, 2 warps (64 key rows each), 32 columns: 4 rows x 128
 *           bytes per access (whole lines); the two warps combine their partial sums through
 *           shared memory and a named barrier once per token.
 *   SPLIT:  NARROW's lanes (4 along V x 8 along K, 16 columns, 64-byte row pieces) in 4 warps
 *           of 32 key rows each: 4 key rows x 4 columns per lane (16 registers of state), the
 *           four warps combine their partial sums as WIDE's pair does. Per token a lane does a
 *           quarter of NARROW's FMAs and loads 4 q/k values instead of 16, at the price of the
 *           exchange; the tile's warps run on different schedulers of one SM. Verify loads
 *           token t + 1's activations into registers while token t is computed.
 *   SPLIT2: the same over 2 warps of 64 key rows: 8 rows x 4 columns per lane (32 registers),
 *           twice NARROW's warps (where SPLIT's four times would not fit the SMs at once).
 * NARROW and WIDE keep 16 key rows x 4 columns of state per lane (64 registers).
 */
enum layout { NARROW = 0, WIDE = 1, SPLIT = 2, SPLIT2 = 3 };
template <int L> struct shape_of;
template <> struct shape_of<NARROW> { static constexpr int LV = 4, KW = 1; };
template <> struct shape_of<WIDE> { static constexpr int LV = 8, KW = 2; };
template <> struct shape_of<SPLIT> { static constexpr int LV = 4, KW = 4; };
template <> struct shape_of<SPLIT2> { static constexpr int LV = 4, KW = 2; };

/* Sum over the lanes along K (lane bits log2(LV)..4); every lane receives the total. */
template <int LV>
__device__ __forceinline__ float sum_k_lanes(float x)
{
#pragma unroll
    for (int m = LV; m < 32; m *= 2)
        x += __shfl_xor_sync(0xffffffffu, x, m);
    return x;
}

/*
 * n consecutive bf16 activations starting at p into fp32 (fast: 16-byte loads, so p must be
 * 16-byte aligned and n a multiple of 8; VEC4 and n = 4: one 8-byte load, p 8-byte aligned);
 * generic: element-wise, entries with idx >= lim read 0.
 */
template <int N, bool FAST, bool VEC4 = false>
__device__ __forceinline__ void load_bf16_row(const uint16_t *p, int idx0, int lim, float *out)
{
    if (FAST && N % 8 == 0) {
#pragma unroll
        for (int j = 0; j < N / 8; j++)
            ls_unpack_bf16x8(ls_ld16(p + 8 * j), out + 8 * j);
    } else if (FAST && VEC4 && N == 4) { /* SPLIT's q/k rows */
        ls_rec::unpack_bf16x4(*reinterpret_cast<const uint2 *>(p), out);
    } else {
#pragma unroll
        for (int j = 0; j < N; j++)
            out[j] = (FAST || idx0 + j < lim) ? ls_bf2f(p[j]) : 0.0f;
    }
}

/*
 * KDA decay of this lane's RK rows: the LV lanes sharing the rows each compute RK/LV of the
 * exp(-e^A_log softplus(a + dt_bias)) (the costly part: expf, log1pf, expf), then exchange
 * them with shuffles. Rows >= K get 1 (their state is zero anyway). The raw gates of the
 * lane's RK/LV rows (k0 + lv * RK/LV on) are read from a_row, or, PRE, were read before (g_pre).
 */
template <int LV, int RK, bool FAST, bool PRE = false>
__device__ __forceinline__ void kda_decay(const uint16_t *a_row, const float *dtb_row, int k0, int K,
                                          float neg_a, int lane, float *e, const float *g_pre = nullptr)
{
    constexpr int G = RK / LV; /* rows computed per lane */
    const int lv = lane % LV;
    float mine[G];
    float g[G];
    if constexpr (PRE)
#pragma unroll
        for (int j = 0; j < G; j++)
            g[j] = g_pre[j];
    else
        load_bf16_row<G, FAST>(a_row + lv * G, k0 + lv * G, K, g);
#pragma unroll
    for (int j = 0; j < G; j++) {
        const bool live = FAST || k0 + lv * G + j < K;
        mine[j] = live ? ls_rec::delta_decay(neg_a, g[j] + dtb_row[lv * G + j]) : 1.0f;
    }
    const int base = lane & ~(LV - 1);
#pragma unroll
    for (int i = 0; i < RK; i++)
        e[i] = __shfl_sync(0xffffffffu, mine[i % G], base | (i / G));
}

/* Minimum CTAs per SM asked of the register allocator: decode keeps <= 128 registers (16 warps
 * per SM, each with 8 KiB of state loads in flight); verify (T loop, L2 prefetch of the later
 * tokens' activations) may use up to 168; the generic path takes what it needs. SPLIT (16 state
 * registers per lane, four times the warps): decode <= 64 (32 warps per SM), verify <= 80 (24
 * warps per SM; the next token's activations held in registers need more than 64 without spills);
 * SPLIT2 (32 state registers) decode <= 80, verify <= 96 (24 and 20 warps per SM: its batches
 * give at most about 16 per SM). */
constexpr int min_ctas(int layout, bool fast, bool one_token)
{
    return !fast ? 1 : layout == SPLIT ? (one_token ? 8 : 6) : layout == SPLIT2 ? (one_token ? 6 : 5) : one_token ? 4 : 3;
}

/* Partial sums a lane contributes per token before the cross-warp combine (WIDE, SPLIT(2)). */
constexpr int NSUM = 3 + 2 * COLS; /* qq, kk, qk, sk[4], sq[4] */

/* One key row's part of a token's partial sums: row s of the (decayed) state, its raw q and k. */
__device__ __forceinline__ void add_row_sums(float sum[NSUM], const float s[COLS], float q, float k)
{
    sum[0] = fmaf(q, q, sum[0]);
    sum[1] = fmaf(k, k, sum[1]);
    sum[2] = fmaf(q, k, sum[2]);
#pragma unroll
    for (int c = 0; c < COLS; c++) {
        sum[3 + c] = fmaf(s[c], k, sum[3 + c]);
        sum[3 + COLS + c] = fmaf(s[c], q, sum[3 + COLS + c]);
    }
}

/* A token's outputs from its sums reduced over K (raw q, k: the norms applied here): the lane's
 * o columns, (S + kn u^T)^T qn with u = beta (v - S^T kn), and uk = u / |k|, so that the state
 * update S += kn u^T is S += k uk^T on the raw k rows. */
__device__ __forceinline__ void token_out(const float sum[NSUM], float beta, float scale, const float vv[COLS],
                                          float o[COLS], float uk[COLS])
{
    const float rq = rsqrtf(sum[0] + 1e-6f) * scale;
    const float rk = rsqrtf(sum[1] + 1e-6f);
    const float kq = sum[2] * rq * rk; /* kn . qn */
#pragma unroll
    for (int c = 0; c < COLS; c++) {
        const float u = beta * (vv[c] - sum[3 + c] * rk);
        o[c] = fmaf(kq, u, sum[3 + COLS + c] * rq); /* (S + kn u^T)^T qn */
        uk[c] = u * rk;                             /* S += kn u^T == k (rk u)^T */
    }
}

/*
 * One tile: the kernel body. ST: float (fp32 state) or uint16_t (bf16 state). PER_ROW: KDA gate.
 * L: layout (above). FAST: see the file comment (the generic path is NARROW only). ONE_TOKEN:
 * T = 1 at compile time (decode). The tile is (request r, value head hv, column block vb); warp
 * kw of the KW owns rows kw*128/KW.. of the slice.
 */
template <typename ST, bool PER_ROW, int L, bool FAST, bool ONE_TOKEN>
__device__ __forceinline__ void delta_tile(const ls_delta_params &p, int r, int hv, int vb, int kw)
{
    constexpr int LV = shape_of<L>::LV, KW = shape_of<L>::KW, LK = 32 / LV;
    constexpr int RK = FAST ? DIM_FAST / (LK * KW) : RK_GENERIC;
    constexpr int TILE_COLS = LV * COLS;
    static_assert(FAST || L == NARROW, "the generic path is NARROW only");
    static_assert(!FAST || RK % 8 == 0 || RK == 4, "q/k rows load 8 (or all 4) at a time");
    __shared__ float xchg[KW > 1 ? 2 : 1][KW > 1 ? MAX_WARPS_PER_CTA : 1][LV][NSUM];

    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int lv = lane % LV, lk = lane / LV;
    /* FAST fixes K = V = 128 at compile time: row strides become immediate offsets */
    const int K = FAST ? DIM_FAST : p.dk, V = FAST ? DIM_FAST : p.dv;
    const int HV = p.heads_v, T = ONE_TOKEN ? 1 : p.tokens;

    const int h = hv / (HV / p.heads_qk);
    const int col0 = vb * TILE_COLS + lv * COLS;
    const int k0 = (kw * LK + lk) * RK;
    const int slot = p.slot_idx[r];
    const long long head = (long long)hv * K * V;

    /* ---- state tile: issue every load first (zero for padding rows and masked entries) */
    float S[RK][COLS];
    const ST *src = slot >= 0 ? (const ST *)p.state + slot * p.state_stride_slot + head : nullptr;
#pragma unroll
    for (int i = 0; i < RK; i++) {
        const int k = k0 + i;
        if (src && (FAST || k < K))
            ls_rec::load4<FAST>(src + (long long)k * V + col0, V - col0, S[i]);
        else
            S[i][0] = S[i][1] = S[i][2] = S[i][3] = 0.0f;
    }

    /* verify: pull every later token's activations into L2 now, under the state loads */
    if (!ONE_TOKEN)
        for (int t = 1; t < T; t++) {
            const long long bt = (long long)r * T + t;
            const long long qk_off = (bt * p.heads_qk + h) * K + k0;
            ls_prefetch_l2(p.q + qk_off);
            ls_prefetch_l2(p.k + qk_off);
            ls_prefetch_l2(p.v + (bt * HV + hv) * V + col0);
            if (PER_ROW)
                ls_prefetch_l2(p.a + (bt * HV + hv) * K + k0);
        }

    const float neg_a = -expf(p.A_log[hv]);
    const float gdn_dtb = PER_ROW ? 0.0f : ls_bf2f(((const uint16_t *)p.dt_bias)[hv]);

    /* SPLIT verify (PIPE): token t + 1's activations go into registers (nx*, raw bf16: its 8-byte
     * q, k and v pieces, b, the lane's gate) at the top of token t, so their latency overlaps
     * token t's math and exchange instead of heading token t + 1's chain (inputs are read-only:
     * the early read sees the same values). NARROW and WIDE, whose registers hold 64 state
     * values, load each token's at its top. */
    constexpr bool PIPE = L == SPLIT && !ONE_TOKEN;
    static_assert(!PIPE || (FAST && RK == 4 && LV == 4), "PIPE: one 8-byte q, k, v piece and one gate per lane");
    uint2 nxq, nxk, nxv;
    uint16_t nxb, nxa;
    const auto load_next = [&](long long bn) { /* token bn = r * T + t */
        const long long qk = (bn * p.heads_qk + h) * K + k0;
        nxq = *reinterpret_cast<const uint2 *>(p.q + qk);
        nxk = *reinterpret_cast<const uint2 *>(p.k + qk);
        nxv = *reinterpret_cast<const uint2 *>(p.v + (bn * HV + hv) * V + col0);
        nxb = p.b[bn * HV + hv];
        nxa = PER_ROW ? p.a[(bn * HV + hv) * K + k0 + lane % LV] : p.a[bn * HV + hv]; /* kda_decay's row */
    };
    if constexpr (PIPE)
        load_next((long long)r * T);

    for (int t = 0; t < T; t++) {
        const long long bt = (long long)r * T + t;
        /* ---- activations of this token: q, k rows of this lane, v columns, gates */
        float qv[RK], kv[RK];
        const long long qk_off = (bt * p.heads_qk + h) * K + k0;
        if constexpr (!PIPE) {
            load_bf16_row<RK, FAST, true>(p.q + qk_off, k0, K, qv);
            load_bf16_row<RK, FAST, true>(p.k + qk_off, k0, K, kv);
        }
        float vv[COLS];
        const long long v_off = (bt * HV + hv) * V + col0;
        if constexpr (!PIPE)
            ls_rec::load4<FAST>(p.v + v_off, V - col0, vv);
        const float beta = ls_sigmoid(ls_bf2f(PIPE ? nxb : p.b[bt * HV + hv]));
        float gnow[1]; /* PIPE: this token's raw gate (GDN: the head's; KDA: the lane's row) */
        if constexpr (PIPE) {
            ls_rec::unpack_bf16x4(nxq, qv);
            ls_rec::unpack_bf16x4(nxk, kv);
            ls_rec::unpack_bf16x4(nxv, vv);
            gnow[0] = ls_bf2f(nxa);
            if (t + 1 < T)
                load_next(bt + 1);
        }

        /* ---- decay */
        if (PER_ROW) {
            float e[RK];
            kda_decay<LV, RK, FAST, PIPE>(p.a + (bt * HV + hv) * K + k0,
                                          (const float *)p.dt_bias + (long long)hv * K + k0, k0, K, neg_a, lane, e,
                                          PIPE ? gnow : nullptr);
#pragma unroll
            for (int i = 0; i < RK; i++)
#pragma unroll
                for (int c = 0; c < COLS; c++)
                    S[i][c] *= e[i];
        } else {
            float graw;
            if constexpr (PIPE)
                graw = gnow[0];
            else
                graw = ls_bf2f(p.a[bt * HV + hv]);
            const float e = ls_rec::delta_decay(neg_a, graw + gdn_dtb);
#pragma unroll
            for (int i = 0; i < RK; i++)
#pragma unroll
                for (int c = 0; c < COLS; c++)
                    S[i][c] *= e;
        }

        /* ---- partial sums over this lane's rows: |q|^2, |k|^2, q.k, S^T k, S^T q (raw q, k:
         * the norms are applied to the reduced sums), then over the warp's K-lanes */
        float sum[NSUM];
#pragma unroll
        for (int j = 0; j < NSUM; j++)
            sum[j] = 0.0f;
#pragma unroll
        for (int i = 0; i < RK; i++)
            add_row_sums(sum, S[i], qv[i], kv[i]);
#pragma unroll
        for (int j = 0; j < NSUM; j++)
            sum[j] = sum_k_lanes<LV>(sum[j]);
        if constexpr (KW > 1) { /* WIDE, SPLIT(2): combine the KW warps' parts of K through shared memory;
                       * every warp of the tile gets the bit-identical total (KW 2: a0 + a1 == a1 + a0;
                       * SPLIT: (a0 + a1) + (a2 + a3) read back in warp order), so all apply the
                       * same u. Double-buffered by token parity: a buffer is rewritten at token
                       * t + 2 only after every warp of the tile passed barrier t + 1, i.e. read
                       * its token-t entries. The tile's warps are warps g..g+KW-1 of the CTA. */
            static_assert(KW == 2 || KW == 4, "the exchange pairs warps or adds four in a tree");
            static_assert(MAX_WARPS_PER_CTA % KW == 0, "a CTA holds whole tiles");
            float(*buf)[LV][NSUM] = xchg[KW > 1 ? (t & 1) : 0];
            if (lk == 0)
#pragma unroll
                for (int j = 0; j < NSUM; j++)
                    buf[warp][lv][j] = sum[j];
            asm volatile("bar.sync %0, %1;" ::"r"(1 + warp / KW), "r"(32 * KW) : "memory");
            if constexpr (KW == 2) {
#pragma unroll
                for (int j = 0; j < NSUM; j++)
                    sum[j] += buf[warp ^ 1][lv][j];
            } else {
                const int g = warp & ~(KW - 1);
#pragma unroll
                for (int j = 0; j < NSUM; j++)
                    sum[j] = (buf[g][lv][j] + buf[g + 1][lv][j]) + (buf[g + 2][lv][j] + buf[g + 3][lv][j]);
            }
        }
        float uk[COLS], o[COLS];
        token_out(sum, beta, p.scale, vv, o, uk);
#pragma unroll
        for (int i = 0; i < RK; i++)
#pragma unroll
            for (int c = 0; c < COLS; c++)
                S[i][c] = fmaf(kv[i], uk[c], S[i][c]);

        if (lk == 0 && kw == 0)
            ls_rec::store4<FAST>(p.o + v_off, V - col0, o);

        if (p.inter && slot >= 0) {
            ST *dst = (ST *)p.inter + slot * p.inter_stride_slot + (long long)t * HV * K * V + head;
#pragma unroll
            for (int i = 0; i < RK; i++)
                if (FAST || k0 + i < K)
                    ls_rec::store4<FAST>(dst + (long long)(k0 + i) * V + col0, V - col0, S[i]);
        }
    }

    if (!p.disable_state_update && slot >= 0) {
        ST *dst = (ST *)p.state + slot * p.state_stride_slot + head;
#pragma unroll
        for (int i = 0; i < RK; i++)
            if (FAST || k0 + i < K)
                ls_rec::store4<FAST>(dst + (long long)(k0 + i) * V + col0, V - col0, S[i]);
    }
}

/*
 * One tile per warp group (the default grid). Grid: CTAs of `warps` warps (a multiple of KW);
 * warp w = blockIdx.x * warps + warp-in-CTA; tile = w / KW, so that the warps of one CTA cover
 * adjacent columns of one head; warp w % KW owns rows of that slice.
 */
template <typename ST, bool PER_ROW, int L, bool FAST, bool ONE_TOKEN>
__global__ void __launch_bounds__(32 * MAX_WARPS_PER_CTA, min_ctas(L, FAST, ONE_TOKEN))
delta_rule_kernel(const ls_delta_params p)
{
    constexpr int KW = shape_of<L>::KW;
    const int warp = threadIdx.x >> 5;
    const long long gw = (long long)blockIdx.x * (blockDim.x >> 5) + warp;
    const int kw = (int)(gw % KW);
    const long long tile = gw / KW;
    constexpr int TILE_COLS = shape_of<L>::LV * COLS;
    const int vblocks = ((FAST ? DIM_FAST : p.dv) + TILE_COLS - 1) / TILE_COLS;
    const int vb = (int)(tile % vblocks);
    const long long rh = tile / vblocks;
    const int hv = (int)(rh % p.heads_v);
    const int r = (int)(rh / p.heads_v);
    ls_pdl_wait();
    ls_pdl_trigger();
    if (r >= p.batch)
        return; /* all KW warps of the tile leave together: no barrier is left waiting */
    delta_tile<ST, PER_ROW, L, FAST, ONE_TOKEN>(p, r, hv, vb, kw);
}

#include "delta_bulk.cuh"
#include "delta_vk.cuh"

/* The vector-path register tiles of layout L: the decode or the verify instantiation. */
template <typename ST, bool PER_ROW, int L>
static int launch_tiles(const ls_delta_params *p, const ls_plan &pl, cudaStream_t st)
{
    if (p->tokens == 1)
        LS_CUDA_LAUNCH((delta_rule_kernel<ST, PER_ROW, L, true, true>), pl.grid_x, pl.block, 0, st, pl.pdl, *p);
    else
        LS_CUDA_LAUNCH((delta_rule_kernel<ST, PER_ROW, L, true, false>), pl.grid_x, pl.block, 0, st, pl.pdl, *p);
    return 0;
}

/* The plan's kernel (ls_choose_delta) for state type ST: layout x decode/verify instantiation. */
template <typename ST, bool PER_ROW>
static int launch_typed(const ls_delta_params *p, const ls_plan &pl, cudaStream_t st)
{
    const bool one = p->tokens == 1;
    switch (pl.kernel) {
    case LS_K_DELTA_BULK:
        return one ? launch_bulk_k<ST, PER_ROW, true>(p, pl, st) : launch_bulk_k<ST, PER_ROW, false>(p, pl, st);
    case LS_K_DELTA_WIDE: return launch_tiles<ST, PER_ROW, WIDE>(p, pl, st);
    case LS_K_DELTA_SPLIT: return launch_tiles<ST, PER_ROW, SPLIT>(p, pl, st);
    case LS_K_DELTA_SPLIT2: return launch_tiles<ST, PER_ROW, SPLIT2>(p, pl, st);
    case LS_K_DELTA_NARROW: return launch_tiles<ST, PER_ROW, NARROW>(p, pl, st);
    case LS_K_DELTA_VK4: return launch_vk_k<ST, PER_ROW, VK_ROWS_NARROW, true>(p, pl, st);
    case LS_K_DELTA_VK8: return launch_vk_k<ST, PER_ROW, VK_ROWS_WIDE, true>(p, pl, st);
    case LS_K_DELTA_VK_GENERIC: return launch_vk_k<ST, PER_ROW, VK_ROWS_NARROW, false>(p, pl, st);
    case LS_K_DELTA_GENERIC:
        LS_CUDA_LAUNCH((delta_rule_kernel<ST, PER_ROW, NARROW, false, false>), pl.grid_x, pl.block, 0, st, pl.pdl, *p);
        return 0;
    default: return ls_fail("cuda delta rule: plan names kernel %s", ls_kernel_name(pl.kernel));
    }
}

/*
 * Shared launcher of ls_cuda_gdn / ls_cuda_kda: validate, plan (ls_choose_delta: kernel for the
 * state layout, CTA size, PDL), launch the plan's instantiation (state dtype x kernel x
 * decode/verify), check.
 */
template <bool PER_ROW>
static int launch(const ls_delta_params *p, const ls_tuning *t, ls_stream s)
{
    if (ls_delta_params_check(p, PER_ROW ? 1 : 0))
        return -1;
    const int64_t hk = (int64_t)p->heads_qk * p->dk, hvv = (int64_t)p->heads_v * p->dv;
    if ((p->q_stride_tok && p->q_stride_tok != hk) || (p->k_stride_tok && p->k_stride_tok != hk) ||
        (p->v_stride_tok && p->v_stride_tok != hvv)) /* no LS_IMPL_QKV_STRIDES */
        return ls_fail("cuda %s: q/k/v_stride_tok: these kernels read contiguous q, k, v rows only",
                       PER_ROW ? "kda" : "gdn");
    const ls_choose_dev dev = ls_cuda_choose_dev();
    ls_plan pl;
    if (ls_choose_delta(p, PER_ROW ? 1 : 0, t, &dev, &pl))
        return -1;
    if (p->state_dtype == LS_F32)
        return launch_typed<float, PER_ROW>(p, pl, ls_cuda_stream(s));
    return launch_typed<uint16_t, PER_ROW>(p, pl, ls_cuda_stream(s));
}

} /* namespace ls_delta */

#endif /* LS_DELTA_RULE_CUH */
