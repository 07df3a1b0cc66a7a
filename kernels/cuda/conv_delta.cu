/*
 * conv_delta.cu — the fused conv update + GDN/KDA recurrence (ls_conv_delta_params, docs/ops.md):
 * one kernel per call, the conv output never leaves the CTA. Three kernels, chosen by
 * ls_choose_conv_delta (choose.c; knob conv_delta.variant):
 *
 * conv_delta_kernel ("cluster"). One cluster of NS CTAs (NS = 1, 2, 4 or 8; grid (B*H, NS)) per
 * (request row r, key head h). CTA `rank` of it takes a 1/NS slice of the G*V value columns of the
 * G = HV/H value heads sharing h: the conv of those v channels, and the conv of the head's K q and
 * K k channels (every rank needs them all; rank 0 alone stores their windows and state). A conv
 * state element thus has one writer, and the q/k state is stored only after the cluster barrier
 * that follows every rank's read of it, so no CTA reads a conv state another one is updating
 * (decode updates it in place). NS > 1 spreads small batches over the SMs. Phases:
 *   1. conv: one thread per channel, the W-1 stored inputs in registers, T outputs SiLU'd and
 *      rounded to bf16 (as the conv op stores them) into shared memory; windows after each
 *      step and the final window stored as the conv half's flags say (q/k state: after the
 *      cluster barrier);
 *   2. gates (decay, beta) per (token, value head) and the L2 norms of q and k per token, in
 *      shared memory;
 *   3. recurrence: 4 adjacent lanes per (value head, value column j), each holding 32 key rows
 *      of the state column in registers (K <= 128); sums over K in-lane plus two shuffles; o,
 *      per-step states, final state. Scalar state accesses, a serial K/4 loop per lane.
 *
 * conv_delta_tiles_kernel ("tiles", conv_delta_tiles.cuh). The same clusters and the same conv
 * (phase 1, same helper, same owners of every stored window), but the recurrence is the GDN/KDA
 * op's NARROW tile (delta_rule.cuh): the G*ceil(V/16) 16-column tiles of the key head are spread
 * over the ranks, one warp per tile (lanes 4 along V x 8 along K, 16 key rows x 4 columns of state per lane, 16/8-byte
 * vector state accesses, sums in-lane plus xor shuffles, the norms applied to the reduced sums).
 * A CTA's prologue convolves the head's q/k channels and its tiles' v channels into shared memory
 * (q/k rows padded to 128 with zeros and swizzled so the 8 K-lanes' 16-byte reads of a row hit
 * distinct banks), computes the decays (KDA: per key row) and betas of its value heads, then each
 * tile warp runs the T tokens from shared memory. The prologue's round trips overlap: the tile's
 * state loads, the inputs of each thread's first gates and (FAST) each conv channel's first 8
 * tokens of x are issued before any of them is used. CTAs have at least 8 warps (spare warps help
 * the prologue). FAST (K = V = 128, aligned): vector accesses with immediate offsets; generic: any
 * K <= 128 and V, predicated accesses.
 *
 * conv_delta_bulk_kernel ("bulk", conv_delta_bulk.cuh). One CTA of 8 warps per (row, value head),
 * the G value heads of a key head one cluster (the same single writer of the q/k conv state):
 * the GDN/KDA op's bulk-copy kernel (delta_bulk.cuh) with the conv (the same conv_heads) and the
 * gates as the prologue that runs while the head's state is copied into shared memory. "bulkp"
 * is the same kernel with bulk_prologue_early's prologue (every load issued before any use).
 *
 * Padding rows (slot < 0) leave at once in all three: nothing read or written, o included.
 */
#include "ls_cuda.h"
#include "cuda_common.cuh"
#include "delta_rule.cuh" /* the NARROW tile's helpers: ls_rec::load4/store4, ls_delta::sum_k_lanes */

#include <cooperative_groups.h>
#include <stdio.h>
#include <type_traits>

namespace ls_cd {

constexpr int MAXK = LS_DELTA_DIM_FAST; /* a state column, split over LANES lanes, in registers */
constexpr int LANES = 4;           /* cluster kernel: lanes per value column (adjacent: shuffles xor 1, 2) */
constexpr int ROWS = MAXK / LANES; /* key rows per lane: S, k and q rows stay in registers */
constexpr int MAXTHREADS = 256;

static __device__ __forceinline__ float ld_any(const void *p, ls_dtype dt, int64_t i)
{
    return dt == LS_F32 ? ((const float *)p)[i] : ls_bf2f(((const uint16_t *)p)[i]);
}

static __device__ __forceinline__ void st_any(void *p, ls_dtype dt, int64_t i, float v)
{
    if (dt == LS_F32)
        ((float *)p)[i] = v;
    else
        ((uint16_t *)p)[i] = ls_f2bf(v);
}

static __device__ __forceinline__ float ld_st(const float *p, int64_t i) { return p[i]; }
static __device__ __forceinline__ float ld_st(const uint16_t *p, int64_t i) { return ls_bf2f(p[i]); }
static __device__ __forceinline__ void st_st(float *p, int64_t i, float v) { p[i] = v; }
static __device__ __forceinline__ void st_st(uint16_t *p, int64_t i, float v) { p[i] = ls_f2bf(v); }

/* ------------------------------------------------------------------ shared by both kernels */

/* Element offset of channel ch's stored window in slot `slot` of the conv state. */
static __device__ __forceinline__ int64_t conv_sbase(const ls_conv_params &c, int slot, int ch)
{
    return (int64_t)slot * c.state_stride_slot + (int64_t)ch * c.state_stride_c;
}

/* 1 when the W = 4 weights of a channel may be read as one 8-byte (bf16) or 16-byte (fp32) load
 * (a warp's 32 channels read one contiguous run instead of four strided ones): W = 4 and a base
 * aligned to a row of them. */
static __device__ __forceinline__ bool conv_wvec(const ls_conv_params &c)
{
    return c.width == 4 && (uintptr_t)c.weight % (4 * (c.weight_dtype == LS_F32 ? 4 : 2)) == 0;
}

/* Store a window (W-1 values) as the conv state at sbase (conv_sbase). */
static __device__ __forceinline__ void conv_store_state(const ls_conv_params &c, int64_t sbase, const float win[3])
{
#pragma unroll
    for (int j = 0; j < 3; j++)
        if (j < c.width - 1)
            st_any(c.state, c.state_dtype, sbase + j * c.state_stride_w, win[j]);
}

/* An element of a weight / state tensor as raw bits: fp32 bits, or bf16 bits in the low half. */
static __device__ __forceinline__ uint32_t ld_bits(const void *p, ls_dtype dt, int64_t i)
{
    return dt == LS_F32 ? ((const uint32_t *)p)[i] : (uint32_t)((const uint16_t *)p)[i];
}
static __device__ __forceinline__ float of_bits(uint32_t b, ls_dtype dt) { return __uint_as_float(dt == LS_F32 ? b : b << 16); }

/*
 * One channel's loads as raw bits (ld_bits; the wvec weights of a bf16 tensor: two packed pairs
 * in wt[0..1]; x: bf16 bits), held between conv_fetch and conv_steps, and the window the
 * steps leave (last). Raw, so that no instruction uses a loaded register before every load of
 * the caller's fetch is issued: converting each value right after its load made every load its
 * own round trip in the SASS, each behind the runtime-width branch of the next
 * (results/h200/state-unroll-73ee529/profile-fused/).
 */
template <int XT>
struct conv_in {
    uint32_t win[3], wt[4], bias;
    uint16_t xs[XT > 0 ? XT : 1];
    float last[3];
};

/* conv_channel's loads: channel ch's window, weights, bias and first XT tokens of x into in (raw). */
template <int XT>
static __device__ __forceinline__ void conv_fetch(const ls_conv_params &c, int r, int slot, int ch, int T, bool wvec,
                                                  conv_in<XT> &in)
{
    const int W = c.width;
    const int64_t sbase = conv_sbase(c, slot, ch);
    const uint16_t *xr = c.x + (int64_t)r * c.x_stride_b + (int64_t)ch * c.x_stride_c;
#pragma unroll
    for (int j = 0; j < 3; j++)
        in.win[j] = j < W - 1 ? ld_bits(c.state, c.state_dtype, sbase + j * c.state_stride_w) : 0u;
    if (wvec && c.weight_dtype == LS_F32) {
        const uint4 v = reinterpret_cast<const uint4 *>(c.weight)[ch];
        in.wt[0] = v.x, in.wt[1] = v.y, in.wt[2] = v.z, in.wt[3] = v.w;
    } else if (wvec) {
        const uint2 v = reinterpret_cast<const uint2 *>(c.weight)[ch];
        in.wt[0] = v.x, in.wt[1] = v.y, in.wt[2] = in.wt[3] = 0u;
    } else
#pragma unroll
        for (int j = 0; j < 4; j++)
            in.wt[j] = j < W ? ld_bits(c.weight, c.weight_dtype, (int64_t)ch * W + j) : 0u;
    in.bias = c.bias ? ld_bits(c.bias, c.weight_dtype, ch) : 0u;
#pragma unroll
    for (int t = 0; t < XT; t++)
        in.xs[t] = t < T ? xr[(int64_t)t * c.x_stride_t] : (uint16_t)0;
}

/* conv_channel's steps, from conv_fetch's raw loads (same wvec); the final window into in.last. */
template <int XT>
static __device__ __forceinline__ void conv_steps(const ls_conv_params &c, int r, int slot, int ch, int T, float *dst,
                                                  int stride, bool inter, bool state, bool wvec, conv_in<XT> &in)
{
    const int W = c.width;
    const int64_t sbase = conv_sbase(c, slot, ch);
    const uint16_t *xr = c.x + (int64_t)r * c.x_stride_b + (int64_t)ch * c.x_stride_c;
    float win[3], wt[4], xs[XT > 0 ? XT : 1];
#pragma unroll
    for (int j = 0; j < 3; j++)
        win[j] = of_bits(in.win[j], c.state_dtype);
    if (wvec && c.weight_dtype != LS_F32)
        ls_rec::unpack_bf16x4(make_uint2(in.wt[0], in.wt[1]), wt);
    else
#pragma unroll
        for (int j = 0; j < 4; j++)
            wt[j] = of_bits(in.wt[j], wvec ? LS_F32 : c.weight_dtype);
    const float bias = of_bits(in.bias, c.weight_dtype);
#pragma unroll
    for (int t = 0; t < XT; t++)
        xs[t] = ls_bf2f(in.xs[t]);
    const float wlast = W == 2 ? wt[1] : W == 3 ? wt[2] : wt[3]; /* constant indices: registers */
    const auto step = [&](int t, float xt) {
        float acc = bias;
#pragma unroll
        for (int j = 0; j < 3; j++)
            if (j < W - 1)
                acc = fmaf(wt[j], win[j], acc);
        acc = fmaf(wlast, xt, acc);
        if (c.silu)
            acc = acc / (1.0f + expf(-acc));
        dst[t * stride] = ls_bf2f(ls_f2bf(acc)); /* the conv op stores y as bf16 */
#pragma unroll
        for (int j = 0; j < 3; j++)
            if (j < W - 1)
                win[j] = j + 1 < W - 1 ? win[j + 1] : xt;
        if (c.inter && inter) {
            const int64_t ib = (int64_t)slot * c.inter_stride_slot + (int64_t)t * c.inter_stride_t +
                               (int64_t)ch * c.inter_stride_c;
#pragma unroll
            for (int j = 0; j < 3; j++)
                if (j < W - 1)
                    st_any(c.inter, c.state_dtype, ib + j * c.inter_stride_w, win[j]);
        }
    };
#pragma unroll
    for (int t = 0; t < XT; t++)
        if (t < T)
            step(t, xs[t]);
    for (int t = XT; t < T; t++)
        step(t, ls_bf2f(xr[(int64_t)t * c.x_stride_t]));
    if (state && !c.disable_state_update)
#pragma unroll
        for (int j = 0; j < 3; j++)
            if (j < W - 1)
                st_any(c.state, c.state_dtype, sbase + j * c.state_stride_w, win[j]);
#pragma unroll
    for (int j = 0; j < 3; j++)
        in.last[j] = win[j];
}

/*
 * Conv of channel ch of row r (slot) over the T tokens: output t SiLU'd (c.silu) and rounded to
 * bf16 as the conv op stores y, at dst[t * stride]; the window after each step into c.inter when
 * inter (and c.inter is set), the final window into the conv state when state (and the conv half
 * updates it). The W-1 stored inputs stay in registers. XT > 0: the first XT tokens' x are loaded
 * with the window, weights and bias, before the first store (the stores could alias the inputs as
 * far as the compiler knows, so a load after one waits a round trip of its own); XT = 0: each
 * token's x at its step (fewer registers: the cluster kernel, the generic tiles kernel). Scalar
 * weight loads. bulkp calls its two halves itself (conv_fetch, then conv_steps with the same
 * wvec: the vector weight load) to issue the loads of several channels before any of them waits.
 */
template <int XT>
static __device__ __forceinline__ void conv_channel(const ls_conv_params &c, int r, int slot, int ch, int T, float *dst,
                                                    int stride, bool inter, bool state)
{
    conv_in<XT> in;
    conv_fetch<XT>(c, r, slot, ch, T, false, in);
    conv_steps<XT>(c, r, slot, ch, T, dst, stride, inter, state, false, in);
}

/*
 * conv_channel over key head h's K q and K k channels (into q_s / k_s, rows of K floats; their
 * windows stored when qk_windows: one CTA of the cluster; their state here when qk_state: the
 * CTA is their only reader, else by store_qk_state) and over the nv v channels from v channel v0
 * (into v_s, rows of nv; this CTA's own channels, so their windows and state are stored here),
 * T tokens, one thread per channel.
 */
template <int XT>
static __device__ __forceinline__ void conv_heads(const ls_conv_params &c, int r, int slot, int h, int H, int K, int T,
                                                  float *q_s, float *k_s, float *v_s, int v0, int nv, bool qk_windows,
                                                  bool qk_state)
{
    const int nch = 2 * K + nv;
    for (int i = threadIdx.x; i < nch; i += blockDim.x) {
        if (i < K)
            conv_channel<XT>(c, r, slot, h * K + i, T, q_s + i, K, qk_windows, qk_state);
        else if (i < 2 * K)
            conv_channel<XT>(c, r, slot, H * K + h * K + (i - K), T, k_s + (i - K), K, qk_windows, qk_state);
        else
            conv_channel<XT>(c, r, slot, 2 * H * K + v0 + (i - 2 * K), T, v_s + (i - 2 * K), nv, true, true);
    }
}

/*
 * The q/k conv state of key head h: every rank of the cluster read it in its conv, so rank 0
 * stores it only after the cluster (or CTA) barrier (called by every thread of the cluster;
 * decode updates it in place). The new window is the last W-1 inputs u[T .. T+W-2] of
 * u = [old state (W-1), x (T)].
 */
static __device__ __forceinline__ void store_qk_state(const ls_conv_params &c, int r, int slot, int h, int H, int K,
                                                      int T)
{
    if (c.disable_state_update)
        return;
    if (gridDim.y > 1)
        cooperative_groups::this_cluster().sync();
    else /* the tiles kernel's conv may have given a k channel to another thread than below */
        __syncthreads();
    if (blockIdx.y != 0)
        return;
    const int W = c.width;
    for (int i = threadIdx.x; i < 2 * K; i += blockDim.x) {
        const int ch = i < K ? h * K + i : H * K + h * K + (i - K);
        const int64_t sbase = (int64_t)slot * c.state_stride_slot + (int64_t)ch * c.state_stride_c;
        float win[3]; /* reloaded (the conv's registers belong to other loop trips) */
#pragma unroll
        for (int j = 0; j < 3; j++) {
            if (j >= W - 1)
                continue;
            const int src = T + j; /* index into u */
            win[j] = src < W - 1 ? ld_any(c.state, c.state_dtype, sbase + src * c.state_stride_w)
                                 : ls_bf2f(c.x[(int64_t)r * c.x_stride_b + (int64_t)(src - (W - 1)) * c.x_stride_t +
                                               (int64_t)ch * c.x_stride_c]);
        }
#pragma unroll
        for (int j = 0; j < 3; j++)
            if (j < W - 1)
                st_any(c.state, c.state_dtype, sbase + j * c.state_stride_w, win[j]);
    }
}

/* The raw inputs of one gate: decay of key row k (KDA; GDN: the head's, k unused) of value head
 * hv at token row bt = r*T + t, and that (token, head)'s beta input. Loaded apart from their use
 * (decay_of, beta_of), so the kernels can issue them before their conv; held as loaded (bf16
 * bits; dt_bias: fp32 bits for KDA, bf16 bits for GDN) so that nothing waits for them before
 * the conv's loads are issued too (as conv_in). */
struct gate_in {
    uint32_t a;   /* bf16 bits of the gate input */
    uint32_t dtb; /* dt_bias: fp32 bits (KDA, per key row) or bf16 bits (GDN, per head) */
    uint32_t b;   /* bf16 bits of the beta logit */
    float a_log;  /* A_log[hv] */
};

template <bool KDA>
static __device__ __forceinline__ gate_in gate_load(const ls_delta_params &d, int64_t bt, int hv, int k)
{
    const int HV = d.heads_v, K = d.dk;
    gate_in g;
    g.a_log = d.A_log[hv];
    if (KDA) {
        g.a = d.a[(bt * HV + hv) * K + k];
        g.dtb = ((const uint32_t *)d.dt_bias)[(int64_t)hv * K + k];
    } else {
        g.a = d.a[bt * HV + hv];
        g.dtb = ((const uint16_t *)d.dt_bias)[hv];
    }
    g.b = d.b[bt * HV + hv];
    return g;
}

/* exp(-e^A_log softplus(a + dt_bias)) with the precise softplus of the GDN/KDA op. */
template <bool KDA>
static __device__ __forceinline__ float decay_of(const gate_in &g)
{
    return ls_rec::delta_decay(-expf(g.a_log), ls_bf2f((uint16_t)g.a) + of_bits(g.dtb, KDA ? LS_F32 : LS_BF16));
}
static __device__ __forceinline__ float beta_of(const gate_in &g) { return 1.0f / (1.0f + expf(-ls_bf2f((uint16_t)g.b))); }

/* ------------------------------------------------------------------ cluster kernel */

/* Shared floats of one CTA of an NS-way split: q, k [T][K], v [T][G*V/NS], gates
 * [T][G][KDA ? K : 1], beta [T][G]. */
static inline size_t smem_floats(const ls_conv_delta_params &P, int ns)
{
    const ls_delta_params &d = P.delta;
    const size_t T = (size_t)d.tokens, K = (size_t)d.dk, G = (size_t)(d.heads_v / d.heads_qk);
    return T * (2 * K + G * (size_t)d.dv / (size_t)ns + G * (P.kda ? K : 1) + G);
}

template <typename ST, bool KDA>
__global__ void __launch_bounds__(MAXTHREADS) conv_delta_kernel(const ls_conv_delta_params P)
{
    extern __shared__ float sm[];
    const ls_conv_params &c = P.conv;
    const ls_delta_params &d = P.delta;
    const int H = d.heads_qk, HV = d.heads_v, K = d.dk, V = d.dv, T = d.tokens;
    const int G = HV / H, NS = gridDim.y, rank = blockIdx.y;
    const int GVs = G * V / NS, col0 = rank * GVs; /* this CTA's value columns [col0, col0 + GVs) */
    const int r = blockIdx.x / H, h = blockIdx.x % H;
    ls_pdl_wait();
    ls_pdl_trigger();
    const int slot = d.slot_idx[r];
    if (slot < 0)
        return; /* padding row: nothing read or written (the whole cluster leaves: same row) */

    float *q_s = sm, *k_s = q_s + T * K, *v_s = k_s + T * K;
    float *g_s = v_s + (size_t)T * GVs, *b_s = g_s + (size_t)T * G * (KDA ? K : 1);

    /* ---- 1. conv of the head's 2K q/k channels (windows: rank 0) and this CTA's GVs v channels
     * (value heads h*G .. h*G+G-1 are contiguous: column col0 + j of the group) */
    conv_heads<0>(c, r, slot, h, H, K, T, q_s, k_s, v_s, h * G * V + col0, GVs, rank == 0, false);
    store_qk_state(c, r, slot, h, H, K, T);

    /* ---- 2a. gates and beta per (token, value head [, key row]) */
    const int ng = T * G * (KDA ? K : 1);
    for (int i = threadIdx.x; i < ng; i += blockDim.x) {
        const int k = KDA ? i % K : 0, tg = KDA ? i / K : i, t = tg / G, hv = h * G + tg % G;
        const gate_in gi = gate_load<KDA>(d, (int64_t)r * T + t, hv, k);
        g_s[i] = decay_of<KDA>(gi);
        if (k == 0)
            b_s[tg] = beta_of(gi);
    }
    __syncthreads();

    /* ---- 2b. q <- q / |q| * scale, k <- k / |k| per token: one warp per row */
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    for (int row = warp; row < 2 * T; row += nwarps) {
        float *v = (row < T ? q_s : k_s) + (row % T) * K;
        float ss = 0.0f;
        for (int k = lane; k < K; k += 32)
            ss = fmaf(v[k], v[k], ss);
#pragma unroll
        for (int m = 16; m > 0; m >>= 1)
            ss += __shfl_xor_sync(0xffffffffu, ss, m);
        const float f = rsqrtf(ss + 1e-6f) * (row < T ? d.scale : 1.0f);
        __syncwarp();
        for (int k = lane; k < K; k += 32)
            v[k] *= f;
    }
    __syncthreads();

    /* ---- 3. recurrence: LANES adjacent lanes per (value head, column), each ROWS key rows of
     * the state column in registers; sums over K: in-lane, then shuffles among the LANES. Every
     * lane runs the same trip count (items rounded up to the CTA) so the shuffles see full warps. */
    const int items = LANES * GVs, trips = (items + blockDim.x - 1) / blockDim.x;
    for (int n = 0; n < trips; n++) {
        const int it = n * blockDim.x + threadIdx.x;
        const bool live = it < items;
        const int part = it % LANES, lc = (live ? it : 0) / LANES, col = col0 + lc;
        const int g = col / V, j = col % V, hv = h * G + g;
        const int k0 = part * ROWS;
        const int64_t head = (int64_t)hv * K * V + j;
        const ST *src = (const ST *)d.state + (int64_t)slot * d.state_stride_slot + head;
        float S[ROWS];
#pragma unroll
        for (int i = 0; i < ROWS; i++)
            S[i] = live && k0 + i < K ? ld_st(src, (int64_t)(k0 + i) * V) : 0.0f;
        for (int t = 0; t < T; t++) {
            const float *kn = k_s + t * K + k0, *qn = q_s + t * K + k0;
            if (KDA) {
                const float *e = g_s + (size_t)(t * G + g) * K + k0;
#pragma unroll
                for (int i = 0; i < ROWS; i++)
                    if (k0 + i < K)
                        S[i] *= e[i];
            } else {
                const float e = g_s[t * G + g];
#pragma unroll
                for (int i = 0; i < ROWS; i++)
                    S[i] *= e;
            }
            float sk = 0.0f;
#pragma unroll
            for (int i = 0; i < ROWS; i++)
                if (k0 + i < K)
                    sk = fmaf(S[i], kn[i], sk);
#pragma unroll
            for (int m = 1; m < LANES; m *= 2)
                sk += __shfl_xor_sync(0xffffffffu, sk, m);
            const float u = b_s[t * G + g] * (v_s[(size_t)t * GVs + lc] - sk);
            float o = 0.0f;
#pragma unroll
            for (int i = 0; i < ROWS; i++)
                if (k0 + i < K) {
                    S[i] = fmaf(kn[i], u, S[i]);
                    o = fmaf(S[i], qn[i], o);
                }
#pragma unroll
            for (int m = 1; m < LANES; m *= 2)
                o += __shfl_xor_sync(0xffffffffu, o, m);
            if (live && part == 0)
                d.o[(((int64_t)r * T + t) * HV + hv) * V + j] = ls_f2bf(o);
            if (live && d.inter) {
                ST *dst = (ST *)d.inter + (int64_t)slot * d.inter_stride_slot + (int64_t)t * HV * K * V + head;
#pragma unroll
                for (int i = 0; i < ROWS; i++)
                    if (k0 + i < K)
                        st_st(dst, (int64_t)(k0 + i) * V, S[i]);
            }
        }
        if (live && !d.disable_state_update) {
            ST *dst = (ST *)d.state + (int64_t)slot * d.state_stride_slot + head;
#pragma unroll
            for (int i = 0; i < ROWS; i++)
                if (k0 + i < K)
                    st_st(dst, (int64_t)(k0 + i) * V, S[i]);
        }
    }
}

#include "conv_delta_tiles.cuh"

/* ------------------------------------------------------------------ launch */

/* Launch kern with grid (grid_x, ns), a (1, ns, 1) cluster when ns > 1 and the PDL attribute when pdl. */
template <typename... KArgs, typename... Args>
static int launch_cluster(void (*kern)(KArgs...), const char *name, unsigned grid_x, int ns, int threads,
                          size_t smem, cudaStream_t st, int pdl, Args &&...args)
{
    if (smem > 48 * 1024)
        LS_CUDA_TRY(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(grid_x, (unsigned)ns, 1);
    cfg.blockDim = dim3((unsigned)threads, 1, 1);
    cfg.dynamicSmemBytes = smem;
    cfg.stream = st;
    cudaLaunchAttribute attr[2];
    int n = 0;
    if (pdl) {
        attr[n].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        attr[n++].val.programmaticStreamSerializationAllowed = 1;
    }
    if (ns > 1) {
        attr[n].id = cudaLaunchAttributeClusterDimension;
        attr[n].val.clusterDim.x = 1, attr[n].val.clusterDim.y = (unsigned)ns, attr[n].val.clusterDim.z = 1;
        n++;
    }
    cfg.attrs = attr, cfg.numAttrs = (unsigned)n;
    LS_CUDA_TRY(cudaLaunchKernelEx(&cfg, kern, static_cast<Args &&>(args)...));
    (void)name;
    LS_CUDA_CHECK_LAUNCH(name);
    return 0;
}

#include "conv_delta_bulk.cuh"

/* Shared bytes of the plan's kernel. */
static size_t plan_smem(const ls_conv_delta_params &p, const ls_plan &pl)
{
    if (pl.kernel == LS_K_CONV_DELTA_BULK || pl.kernel == LS_K_CONV_DELTA_BULKP)
        return bulk_smem(p);
    return (pl.kernel == LS_K_CONV_DELTA ? smem_floats(p, (int)pl.grid_y) : tiles_smem_floats(p, pl.groups)) *
           sizeof(float);
}

/* The plan's kernel for state type ST and gate KDA. */
template <typename ST, bool KDA>
static int launch_typed(const ls_conv_delta_params *p, const ls_plan &pl, size_t smem, cudaStream_t st)
{
    const int ns = (int)pl.grid_y;
    if (pl.kernel == LS_K_CONV_DELTA_BULK)
        return launch_bulk<ST, KDA, false>(p, pl, smem, st);
    if (pl.kernel == LS_K_CONV_DELTA_BULKP)
        return launch_bulk<ST, KDA, true>(p, pl, smem, st);
    if (pl.kernel == LS_K_CONV_DELTA)
        return launch_cluster(conv_delta_kernel<ST, KDA>, "conv_delta_kernel", pl.grid_x, ns, pl.block, smem, st,
                              pl.pdl, *p);
    const int ng = tiles_heads(pl.groups, (p->delta.dv + TW - 1) / TW, p->delta.heads_v / p->delta.heads_qk);
    if (pl.kernel == LS_K_CONV_DELTA_TILES)
        return launch_cluster(conv_delta_tiles_kernel<ST, KDA, true>, "conv_delta_tiles_kernel", pl.grid_x, ns,
                              pl.block, smem, st, pl.pdl, *p, (int)pl.groups, ng);
    return launch_cluster(conv_delta_tiles_kernel<ST, KDA, false>, "conv_delta_tiles_kernel", pl.grid_x, ns,
                          pl.block, smem, st, pl.pdl, *p, (int)pl.groups, ng);
}

} /* namespace ls_cd */

/* One line for explain (the `kernel` column), for a device of sm_count SMs:
 * "conv_delta_kda grid=(16,8) cluster=8 block=64 smem=... pdl" (tiles: conv_delta_tiles_kda,
 * bulk: conv_delta_bulk_kda). */
extern "C" int ls_cuda_conv_delta_describe(const ls_conv_delta_params *p, const ls_tuning *t, int sm_count,
                                           char *buf, size_t cap)
{
    const ls_choose_dev dev = {sm_count > 0 ? sm_count : 1, 0};
    ls_plan pl;
    if (ls_choose_conv_delta(p, t, &dev, &pl))
        return -1;
    const int n = snprintf(buf, cap, "%s_%s grid=(%u,%u) cluster=%u block=%d smem=%zu%s",
                           pl.kernel == LS_K_CONV_DELTA ? "conv_delta" : ls_kernel_name(pl.kernel),
                           p->kda ? "kda" : "gdn", pl.grid_x, pl.grid_y, pl.grid_y, pl.block,
                           ls_cd::plan_smem(*p, pl), pl.pdl ? " pdl" : "");
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

extern "C" int ls_cuda_conv_delta(const ls_conv_delta_params *p, const ls_tuning *t, ls_stream s)
{
    if (ls_conv_delta_params_check(p))
        return -1;
    if (p->delta.state_layout != LS_STATE_KV) /* the impl declares LS_IMPL_KV only */
        return ls_fail("cuda conv_delta: state_layout %s: this kernel takes kv ([K, V] per head) only",
                       ls_state_layout_name(p->delta.state_layout));
    if (p->delta.dk > ls_cd::MAXK)
        return LS_OP_UNSUPPORTED; /* the state column lives in registers: K <= 128 by design */
    const ls_choose_dev dev = ls_cuda_choose_dev();
    ls_plan pl;
    if (ls_choose_conv_delta(p, t, &dev, &pl))
        return -1;
    const size_t smem = ls_cd::plan_smem(*p, pl);
    int id = 0, max_smem = 0;
    LS_CUDA_TRY(cudaGetDevice(&id));
    LS_CUDA_TRY(cudaDeviceGetAttribute(&max_smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, id));
    if (smem > (size_t)max_smem)
        return LS_OP_UNSUPPORTED; /* T x (2K + G*V ...) activations do not fit one CTA */
    cudaStream_t st = ls_cuda_stream(s);
    if (p->delta.state_dtype == LS_F32)
        return p->kda ? ls_cd::launch_typed<float, true>(p, pl, smem, st)
                      : ls_cd::launch_typed<float, false>(p, pl, smem, st);
    return p->kda ? ls_cd::launch_typed<uint16_t, true>(p, pl, smem, st)
                  : ls_cd::launch_typed<uint16_t, false>(p, pl, smem, st);
}
